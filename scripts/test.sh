#!/usr/bin/env bash
# Kiln's whole test run: what `make test` and .ci/run execute.
#
#   scripts/test.sh
#
# Steps, each with its own time limit (timeout(1)), all within a total budget
# of $TEST_BUDGET seconds (default 2640 = 44 min; a step gets at most what is
# left of it):
#   deps         apt-get install what is missing (mariadb-server mariadb-client
#                sysbench python3-pymysql python3-venv), go mod download
#   vet          go vet ./...
#   lint         gofmt -l (must list nothing); the import-graph check
#                (go run ./tools/importcheck: no import points up the layers of
#                docs/architecture.md); shellcheck on our scripts if installed
#   unit         go test -race ./internal/...
#   sim          the deterministic cluster simulation without -race, 1,000 seeds
#                (go test -run 'TestClusterSim$' ./internal/repl/; 17-45 s)
#   fuzz         scripts/fuzz.sh with FUZZTIME=seeds: every Go fuzz target's seed corpus
#                and the check that scripts/fuzz.sh lists them all (make fuzz fuzzes)
#   tools        go test ./tools/... and bench/tracesum's test (its own module)
#   build        go build -o bin/kiln ./cmd/kiln
#   kiln-start   scripts/kiln.sh start on a temporary data dir
#   pymysql      test/clients/pymysql_session.py
#   cli          test/clients/cli_session.sh
#   jdbc         test/clients/jdbc.sh (MySQL Connector/J 8.4 via Maven; needs java, mvn)
#   dump         test/clients/dump_roundtrip.sh (mariadb-dump, reload into a second Kiln)
#   gosql        go test ./test/clients/gosql/ (KILN_ADDR set)
#   (pymysql, cli, jdbc and gosql also check TLS against the server's
#   generated CA: KILN_TLS_CA)
#   slt          test/slt/check.sh full (the whole corpus) against test/slt/floor.json
#   sqlalchemy   test/sqlalchemy/run.sh: SQLAlchemy's dialect compliance suite
#                against test/sqlalchemy/floor.json (pip installs the pinned
#                packages into ~/.cache/kiln-sqla once: ~2.5 min, then ~20 s)
#   sysbench     test/sysbench/run.sh
#   linkbench    kiln bench linkbench: 5,000 nodes loaded, 30 s of LinkBench's
#                request mix on 4 connections, no failed operation, and the
#                counttable consistency check must pass
#   integration  go test ./test/... (KILN_BIN and KILN_ADDR set)
#   kiln-stop    SIGTERM; fails if Kiln needs SIGKILL
# If bin/kiln does not build, every step that needs the server fails (it is
# not skipped). If the server dies during a step, that step fails and the
# server is started again for the next one. Prints a summary; exits 1 if any
# step failed. Logs stay in $TEST_LOGS (default a new /tmp/kiln-test.XXXX);
# the server's data dir is removed at the end unless TEST_KEEP_DATA=1.
#
# For local use: TEST_ONLY="step ..." runs only those steps (plus what the
# server steps need), TEST_SKIP="step ..." leaves steps out (counted as
# skipped, not failed), and TEST_SERVER=mariadb runs the server steps against
# a MariaDB from scripts/mariadb.sh instead of Kiln (to check the suites
# themselves).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
cd "$repo"
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

packages=(mariadb-server mariadb-client sysbench python3-pymysql python3-venv)

# --- internal subcommands (run under timeout by the steps) --------------
deps() {
  local missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    log "installing ${missing[*]}"
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
  else
    log "packages present: ${packages[*]}"
  fi
  command -v go >/dev/null || die "go not found in PATH"
  go mod download
}

lint() {
  local bad
  bad=$(gofmt -l cmd internal tools test bench 2>/dev/null || true)
  if [[ -n $bad ]]; then
    echo "gofmt -l lists:"
    echo "$bad"
    return 1
  fi
  go run ./tools/importcheck || return 1
  if command -v shellcheck >/dev/null; then
    shellcheck -x scripts/*.sh test/sysbench/run.sh test/slt/check.sh test/clients/cli_session.sh \
      test/clients/jdbc.sh test/clients/dump_roundtrip.sh test/sqlalchemy/run.sh bench/*.sh .ci/run
  else
    echo "shellcheck not installed: skipped"
  fi
}

# The repository's tools, and bench/tracesum (a module of its own: its trace reader's version must
# not touch the server's dependencies).
tools() {
  go test -timeout 3m ./tools/... || return 1
  (cd bench/tracesum && go test -timeout 1m ./...)
}

case ${1:-} in
  deps) deps; exit ;;
  lint) lint; exit ;;
  tools) tools; exit ;;
  "") ;;
  *) die "unknown subcommand $1" ;;
esac

# --- the run -------------------------------------------------------------
logs=${TEST_LOGS:-$(mktemp -d /tmp/kiln-test.XXXXXX)}
mkdir -p "$logs"
budget=${TEST_BUDGET:-2640}
server=${TEST_SERVER:-kiln}
t_start=$(date +%s)
srv_dir=$logs/server
srv_port=
summary=()
failed=0

# wanted STEP: the step is selected by TEST_ONLY / TEST_SKIP.
wanted() {
  [[ " ${TEST_SKIP:-} " != *" $1 "* ]] || return 1
  [[ -z ${TEST_ONLY:-} || " $TEST_ONLY " == *" $1 "* ]]
}

# server_infra NAME: the build and the server's start and stop run whenever a
# selected step needs the server (TEST_ONLY=dump works on its own).
server_infra() {
  [[ ${need_server:-0} == 1 ]] || return 1
  [[ $1 == build || $1 == "$server-start" || $1 == "$server-stop" ]]
}

record() { # name status seconds [note]
  summary+=("$(printf '%-14s %-8s %5ss  %s' "$1" "$2" "$3" "${4:-}")")
  [[ $2 == ok || $2 == skipped ]] || failed=$((failed + 1))
}

# step NAME LIMIT_SECONDS CMD...: runs CMD under timeout, logs to
# $logs/NAME.log (and the console), records the outcome.
step() {
  local name=$1 limit=$2
  shift 2
  if ! wanted "$name" && ! server_infra "$name"; then
    record "$name" skipped 0
    return 0
  fi
  local left=$((budget - ($(date +%s) - t_start)))
  if ((left < 30)); then
    record "$name" FAIL 0 "total budget of ${budget}s used up"
    return 1
  fi
  ((limit <= left)) || limit=$left
  log "=== $name (limit ${limit}s)"
  local t0 rc
  t0=$(date +%s)
  set +e
  timeout --kill-after=30 "$limit" "$@" 2>&1 | tee "$logs/$name.log"
  rc=${PIPESTATUS[0]}
  set -e
  local secs=$(($(date +%s) - t0))
  if [[ $rc -eq 0 ]]; then
    record "$name" ok "$secs"
  elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
    record "$name" TIMEOUT "$secs" "after ${limit}s; log $logs/$name.log"
  else
    record "$name" FAIL "$secs" "exit $rc; log $logs/$name.log"
  fi
  return "$rc"
}

server_script=$repo/scripts/kiln.sh
[[ $server == kiln ]] || server_script=$repo/scripts/$server.sh
[[ -x $server_script ]] || die "no script for TEST_SERVER=$server"

server_alive() {
  [[ -f $srv_dir/pid ]] && alive "$(cat "$srv_dir/pid")"
}

start_server() {
  if step "$server-start" 180 "$server_script" start "$srv_dir"; then
    srv_port=$(cat "$srv_dir/port")
  else
    srv_port=
  fi
}

# server_step NAME LIMIT CMD...: a step that needs the server.
server_step() {
  local name=$1
  if ! wanted "$name"; then
    record "$name" skipped 0
    return 0
  fi
  if [[ -z $srv_port ]]; then
    record "$name" FAIL 0 "no server: $server did not build or start"
    return 0
  fi
  step "$@" || true
  if ! server_alive; then
    record "$server" FAIL 0 "the server died during $name; log $srv_dir"
    tail -n 30 "$srv_dir/kiln.log" "$srv_dir/error.log" 2>/dev/null || true
    start_server
  fi
}

cleanup() {
  if [[ -f $srv_dir/pid ]]; then
    "$server_script" stop "$srv_dir" >/dev/null 2>&1 || true
  fi
  # The logs stay; the server's data (MariaDB's alone is 1.5 GB) goes.
  if [[ ${TEST_KEEP_DATA:-0} != 1 && -d $srv_dir/data ]] && ! server_alive; then
    rm -rf "$srv_dir/data"
  fi
}
trap cleanup EXIT

step deps 900 "$0" deps || true
step vet 600 go vet ./... || true
step lint 300 "$0" lint || true
step unit 720 go test -race -timeout 10m ./internal/... || true
step sim 240 go test -count=1 -v -timeout 200s -run 'TestClusterSim$' ./internal/repl/ || true
step fuzz 480 env FUZZTIME=seeds scripts/fuzz.sh || true
step tools 300 "$0" tools || true

need_server=0
for s in pymysql cli jdbc dump gosql slt sqlalchemy sysbench linkbench integration; do
  wanted "$s" && need_server=1
done
built=1
if [[ $server == kiln ]]; then
  if wanted build || [[ $need_server == 1 ]]; then
    step build 600 go build -o bin/kiln ./cmd/kiln || built=0
  fi
  export KILN_BIN=$repo/bin/kiln
fi
if [[ $need_server == 1 ]]; then
  if [[ $built == 1 ]]; then
    start_server
  else
    record "$server-start" FAIL 0 "bin/kiln did not build"
  fi
fi
addr=127.0.0.1:${srv_port:-0}
# The clients' TLS checks (cli, pymysql, jdbc) verify Kiln against the CA its
# data directory generated at initialisation.
if [[ $server == kiln ]]; then
  export KILN_TLS_CA=$srv_dir/data/ca.pem
fi

server_step pymysql 120 "$PYTHON" test/clients/pymysql_session.py 127.0.0.1 "$srv_port"
server_step cli 120 test/clients/cli_session.sh 127.0.0.1 "$srv_port"
server_step jdbc 600 test/clients/jdbc.sh 127.0.0.1 "$srv_port"
# Against MariaDB (TEST_SERVER=mariadb) the dump reloads into the same server,
# with every variant and column type (Kiln: see DUMP_* in the script).
dump_env=()
[[ $server == kiln ]] ||
  dump_env=(DUMP_TARGET="127.0.0.1:$srv_port" DUMP_NEW_TYPES=1 DUMP_VARIANTS="single default hex")
server_step dump 300 env "${dump_env[@]}" test/clients/dump_roundtrip.sh 127.0.0.1 "$srv_port"
server_step gosql 300 env KILN_ADDR="$addr" go test -count=1 -v -timeout 4m ./test/clients/gosql/
server_step slt 690 env SLT_OUT="$logs/slt" test/slt/check.sh "$addr" full
server_step sqlalchemy 420 env SQLA_OUT="$logs/sqlalchemy" test/sqlalchemy/run.sh "$addr"
server_step sysbench 900 env SYSBENCH_OUT="$logs/sysbench" test/sysbench/run.sh 127.0.0.1 "$srv_port"
# The LinkBench client is kiln itself (built above; against MariaDB, go run).
linkbench=(go run ./cmd/kiln)
[[ $server == kiln && $built == 1 ]] && linkbench=("$repo/bin/kiln")
server_step linkbench 240 "${linkbench[@]}" bench linkbench --addr "$addr" --nodes 5000 --load-threads 2 \
  --threads 4 --duration 30s
server_step integration 960 env KILN_ADDR="$addr" go test -count=1 -timeout 15m ./test/...

if [[ -n $srv_port ]]; then
  step "$server-stop" 120 "$server_script" stop "$srv_dir" || true
fi

total=$(($(date +%s) - t_start))
echo
echo "==== summary ($server, ${total}s, logs in $logs)"
printf '%s\n' "${summary[@]}"
passed=0
for line in "${summary[@]}"; do
  [[ $line == *" ok "* ]] && passed=$((passed + 1))
done
if [[ $failed -ne 0 ]]; then
  echo "==== $failed step(s) failed"
  echo "steps: $passed passed, $failed failed"
  exit 1
fi
echo "==== all steps passed"
echo "steps: $passed passed, $failed failed"
