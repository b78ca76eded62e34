#!/usr/bin/env bash
# Start and stop a Kiln server for tests and benchmarks. Builds nothing.
#
#   scripts/kiln.sh start DIR     # prints the port; writes DIR/port, DIR/http_port, DIR/pid
#   scripts/kiln.sh stop DIR      # SIGTERM; fails if it takes SIGKILL (60 s)
#   scripts/kiln.sh restart DIR   # stop, then start on the same data and ports
#
# The binary is $KILN_BIN (default bin/kiln in the repository). Data lives in
# DIR/data, the log in DIR/kiln.log. The server listens on 127.0.0.1 on free
# ports (or $KILN_PORT / $KILN_HTTP_PORT):
#   kiln serve --data-dir DIR/data --listen 127.0.0.1:PORT --http 127.0.0.1:HTTP
# and is ready when GET /health answers 200 (or, if nothing serves HTTP, when
# the MySQL port accepts connections); $KILN_START_TIMEOUT seconds (60).
# Extra serve flags can be given in $KILN_FLAGS.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

usage() { echo "usage: $0 start|stop|restart DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
cmd=$1
dir=$2
bin=${KILN_BIN:-$repo/bin/kiln}

http_status() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$1/health" 2>/dev/null || true
}

start() {
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [[ -f $dir/pid ]] && alive "$(cat "$dir/pid")"; then
    log "kiln already running in $dir (pid $(cat "$dir/pid"), port $(cat "$dir/port"))"
    cat "$dir/port"
    return 0
  fi
  [[ -x $bin ]] || die "kiln binary $bin not found or not executable (make build, or set KILN_BIN)"
  local port=${KILN_PORT:-$(free_port)}
  local http=${KILN_HTTP_PORT:-$(free_port)}
  while [[ $http == "$port" ]]; do http=$(free_port); done
  mkdir -p "$dir/data"
  # shellcheck disable=SC2086 # KILN_FLAGS is a list of flags
  setsid "$bin" serve --data-dir "$dir/data" --listen "127.0.0.1:$port" --http "127.0.0.1:$http" \
    ${KILN_FLAGS:-} </dev/null >>"$dir/kiln.log" 2>&1 &
  local pid=$! i code
  echo "$pid" >"$dir/pid"
  echo "$port" >"$dir/port"
  echo "$http" >"$dir/http_port"
  local limit=$((${KILN_START_TIMEOUT:-60} * 10))
  for ((i = 0; i < limit; i++)); do
    if ! alive "$pid"; then
      tail -n 30 "$dir/kiln.log" >&2 || true
      die "kiln exited during startup (see $dir/kiln.log)"
    fi
    code=$(http_status "$http")
    if [[ $code == 200 ]]; then
      break
    fi
    # No HTTP server at all (connection refused): the MySQL port decides.
    if [[ $code == 000 ]] && ! port_open 127.0.0.1 "$http" && port_open 127.0.0.1 "$port"; then
      log "kiln: /health not served on $http; MySQL port $port accepts connections"
      break
    fi
    sleep 0.1
  done
  if ((i >= limit)); then
    tail -n 30 "$dir/kiln.log" >&2 || true
    die "kiln not ready within ${KILN_START_TIMEOUT:-60}s (see $dir/kiln.log)"
  fi
  log "kiln ready on 127.0.0.1:$port, http 127.0.0.1:$http (pid $pid, dir $dir)"
  echo "$port"
}

stop() {
  [[ -f $dir/pid ]] || return 0
  local pid
  pid=$(cat "$dir/pid")
  rm -f "$dir/pid"
  alive "$pid" || return 0
  kill -TERM "$pid"
  local i
  for ((i = 0; i < 600; i++)); do
    if ! alive "$pid"; then
      log "kiln stopped (pid $pid)"
      return 0
    fi
    sleep 0.1
  done
  stop_pid "$pid" 1 || true
  die "kiln (pid $pid) did not stop within 60s of SIGTERM: killed"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  restart)
    stop
    KILN_PORT=$(cat "$dir/port") KILN_HTTP_PORT=$(cat "$dir/http_port") start
    ;;
  *) usage ;;
esac
