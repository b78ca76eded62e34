#!/usr/bin/env bash
# A scripted mysql CLI session (Debian's mariadb-client) against the server at
# HOST PORT (root, empty password).
#
#   test/clients/cli_session.sh HOST PORT
#
# Runs test/clients/cli/*.sql in batch mode with --force (the session goes on
# after an error) and compares stdout with the .out file and the error lines,
# cut to "ERROR code (SQLSTATE) at line N" (messages differ between servers),
# with the .err file. Then checks exit codes and errors of single invocations:
# a missing database at connect (1049), a syntax error (1064), a wrong
# password (1045), and LOAD DATA LOCAL INFILE of cli/load.csv. With
# $KILN_TLS_CA (the server's CA file; scripts/test.sh sets it to the data
# directory's generated ca.pem), also TLS: --ssl (REQUIRED), --ssl-ca with
# --ssl-verify-server-cert (VERIFY_CA and the host), `status` showing the
# cipher, another CA refused, and require_secure_transport (3159). The
# expected files are MariaDB's output; only SQL that MySQL 8 and MariaDB both
# accept, with output both print the same way.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

[[ $# -eq 2 ]] || { echo "usage: $0 HOST PORT" >&2; exit 2; }
host=$1
port=$2
work=$(mktemp -d /tmp/kiln-cli.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0

fail() { log "FAIL $*"; failures=$((failures + 1)); }

# errors FILE: the client's error lines, without the server's message.
errors() {
  grep '^ERROR' "$1" | sed -E 's/^(ERROR [0-9]+ \([0-9A-Z]{5}\)( at line [0-9]+)?).*/\1/' || true
}

for sql in "$here"/cli/*.sql; do
  name=$(basename "$sql" .sql)
  mysql_tcp "$host" "$port" --batch --force <"$sql" >"$work/$name.out" 2>"$work/$name.stderr" || true
  errors "$work/$name.stderr" >"$work/$name.err"
  if ! diff -u "$here/cli/$name.out" "$work/$name.out" >"$work/$name.diff"; then
    fail "$name.sql: output differs (expected vs got):"
    cat "$work/$name.diff" >&2
  fi
  if ! diff -u "$here/cli/$name.err" "$work/$name.err" >"$work/$name.errdiff"; then
    fail "$name.sql: errors differ (expected vs got):"
    cat "$work/$name.errdiff" >&2
    sed -n '1,20p' "$work/$name.stderr" >&2
  fi
  log "ran cli/$name.sql"
done

# expect_error CODE SQLSTATE ARGS...: one invocation that must exit non-zero
# with that error.
expect_error() {
  local code=$1 state=$2
  shift 2
  local rc=0
  mysql_tcp "$host" "$port" --batch "$@" >"$work/one.out" 2>"$work/one.err" </dev/null || rc=$?
  if [[ $rc -eq 0 ]]; then
    fail "mysql $*: exit 0, expected error $code"
  elif ! grep -q "^ERROR $code ($state)" "$work/one.err"; then
    fail "mysql $*: expected ERROR $code ($state), got: $(head -c 300 "$work/one.err")"
  fi
}
expect_error 1049 42000 -D kiln_no_such_db -e 'SELECT 1'
expect_error 1064 42000 -e 'SELEC 1'
expect_error 1146 42S02 -e 'SELECT * FROM mysql_no_such_db_x.no_such_table'
expect_error 1045 28000 --password=wrong-password -e 'SELECT 1'

got=$(mysql_tcp "$host" "$port" --batch --skip-column-names -e "SELECT 40 + 2, 'ok'") ||
  fail "plain -e query failed"
[[ $got == $'42\tok' ]] || fail "-e 'SELECT 40 + 2, ...' printed '$got'"

# LOAD DATA LOCAL INFILE: with --local-infile=1 the CLI sends cli/load.csv
# (quotes, \N, an escape, a duplicate key skipped as LOCAL does, a short
# line); the summary and the rows must be MariaDB's. Without it the server
# refuses the statement (MySQL 8: 3948, MariaDB: 4166).
load_db=kiln_cli_load
load_stmt="LOAD DATA LOCAL INFILE '$here/cli/load.csv' INTO TABLE $load_db.t FIELDS TERMINATED BY ','
  OPTIONALLY ENCLOSED BY '\"' IGNORE 1 LINES"
if mysql_tcp "$host" "$port" --batch -e "DROP DATABASE IF EXISTS $load_db; CREATE DATABASE $load_db CHARACTER SET utf8mb4;
    CREATE TABLE $load_db.t (id INT PRIMARY KEY, name VARCHAR(20), qty INT NULL) DEFAULT CHARSET=utf8mb4" 2>"$work/load.err"; then
  got=$(mysql_tcp "$host" "$port" --batch -vv --local-infile=1 -e "$load_stmt" 2>&1 | grep -E '^(Query OK|Records:|ERROR)' || true)
  want=$'Query OK, 4 rows affected, 2 warnings\nRecords: 5  Deleted: 0  Skipped: 1  Warnings: 2'
  [[ $got == "$want" ]] || fail "LOAD DATA LOCAL INFILE printed '$got', expected '$want'"
  got=$(mysql_tcp "$host" "$port" --batch --skip-column-names -e "SELECT * FROM $load_db.t ORDER BY id" 2>&1 || true)
  want=$'1\tSmith, John\t10\n2\tsay "hi"\tNULL\n3\ttab\\there\t7\n4\tshort\tNULL'
  [[ $got == "$want" ]] || fail "rows after LOAD DATA: '$got', expected '$want'"
  got=$(mysql_tcp "$host" "$port" --batch --local-infile=0 -e "$load_stmt" 2>&1 | grep '^ERROR' || true)
  [[ $got =~ ^ERROR\ (3948|4166|1148) ]] || fail "LOAD DATA LOCAL without --local-infile: '$got'"
  mysql_tcp "$host" "$port" --batch -e "DROP DATABASE $load_db" || fail "DROP DATABASE $load_db failed"
else
  fail "creating $load_db failed: $(head -c 300 "$work/load.err")"
fi
log "ran LOAD DATA LOCAL INFILE checks"

if [[ -n ${KILN_TLS_CA:-} && -f ${KILN_TLS_CA:-} ]]; then
  got=$(mysql_tcp "$host" "$port" --ssl --batch --skip-column-names -e "SHOW STATUS LIKE 'Ssl_version'" 2>&1 || true)
  [[ $got == $'Ssl_version\tTLSv1.2' || $got == $'Ssl_version\tTLSv1.3' ]] || fail "--ssl: Ssl_version '$got'"
  got=$(mysql_tcp "$host" "$port" --ssl-ca="$KILN_TLS_CA" --ssl-verify-server-cert -e 'status' 2>&1 | grep '^SSL:' || true)
  [[ $got == *"Cipher in use is "* ]] || fail "--ssl-ca --ssl-verify-server-cert: status printed '$got'"
  # Another CA (the system's bundle, which never signed a generated certificate) is refused.
  if [[ -f /etc/ssl/certs/ca-certificates.crt ]] &&
    mysql_tcp "$host" "$port" --ssl-ca=/etc/ssl/certs/ca-certificates.crt --ssl-verify-server-cert -e 'SELECT 1' >/dev/null 2>&1; then
    fail "--ssl-verify-server-cert accepted the server against another CA"
  fi
  # require_secure_transport: a plain connection gets 3159 after its handshake, TLS still works;
  # turned off again whatever happened.
  if mysql_tcp "$host" "$port" --ssl --batch -e 'SET GLOBAL require_secure_transport = ON' 2>"$work/rst.err"; then
    expect_error 3159 HY000 --skip-ssl -e 'SELECT 1'
    got=$(mysql_tcp "$host" "$port" --ssl --batch --skip-column-names -e 'SELECT @@global.require_secure_transport' 2>&1 || true)
    [[ $got == 1 ]] || fail "over TLS under require_secure_transport: '$got'"
    mysql_tcp "$host" "$port" --ssl --batch -e 'SET GLOBAL require_secure_transport = OFF' ||
      fail "SET GLOBAL require_secure_transport = OFF failed"
  else
    fail "SET GLOBAL require_secure_transport = ON: $(head -c 300 "$work/rst.err")"
  fi
  log "ran TLS checks"
else
  log "KILN_TLS_CA not set: TLS checks skipped"
fi

if [[ $failures -ne 0 ]]; then
  log "cli session: $failures failure(s)"
  exit 1
fi
log "cli session: all checks passed"
