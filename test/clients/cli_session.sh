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
# password (1045). The expected files are MariaDB's output; only SQL that
# MySQL 8 and MariaDB both accept, with output both print the same way.
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

if [[ $failures -ne 0 ]]; then
  log "cli session: $failures failure(s)"
  exit 1
fi
log "cli session: all checks passed"
