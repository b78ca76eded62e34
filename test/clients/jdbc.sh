#!/usr/bin/env bash
# A scripted MySQL Connector/J 8.4 session (test/clients/jdbc, a Maven project) against the server
# at HOST PORT (root, empty password).
#
#   test/clients/jdbc.sh HOST PORT
#
# Builds the program with Maven (dependencies from Maven Central into ~/.m2, the first time) and
# runs it. It prints a line per section and per failed check, then "KNOWN GAP: ..." lines for
# the checks listed in JdbcSession.KNOWN_GAPS that still fail on Kiln (they do not fail the run),
# and exits 1 if any other check failed. Needs Java 17+ and Maven. See the class comment of
# test/clients/jdbc/src/main/java/kiln/JdbcSession.java for what it checks. With $KILN_TLS_CA (the
# server's CA file), a PKCS #12 trust store is made of it (keytool) for the TLS checks
# (sslMode=REQUIRED, VERIFY_CA, VERIFY_IDENTITY, require_secure_transport).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

[[ $# -eq 2 ]] || { echo "usage: $0 HOST PORT" >&2; exit 2; }
host=$1
port=$2
command -v java >/dev/null || die "java not found in PATH (Java 17+ is needed)"
command -v mvn >/dev/null || die "mvn not found in PATH"

# Build into a private directory, so concurrent runs (and the source tree) stay apart.
work=$(mktemp -d /tmp/kiln-jdbc.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$here/jdbc/pom.xml" "$here/jdbc/src" "$work/"
log "building the JDBC session (mvn)"
# (Debian's Maven prints bare colour resets even in batch mode: dropped.)
(cd "$work" && mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt) 2>&1 |
  sed $'s/\e\\[0m//g'
if [[ -n ${KILN_TLS_CA:-} && -f ${KILN_TLS_CA:-} ]]; then
  keytool -importcert -noprompt -alias kiln-ca -file "$KILN_TLS_CA" -keystore "$work/truststore.p12" \
    -storetype PKCS12 -storepass kiln-test >/dev/null
  export KILN_JDBC_TRUSTSTORE=$work/truststore.p12
fi
log "running the JDBC session against $host:$port"
java -cp "$work/target/classes:$(cat "$work/target/classpath.txt")" kiln.JdbcSession "$host" "$port"
