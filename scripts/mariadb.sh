#!/usr/bin/env bash
# Start and stop a private MariaDB (Debian's mariadb-server) for tests and
# benchmarks, with the reference settings of bench/mariadb-primary.cnf
# (a copy of /work/shared/reference/primary.cnf).
#
#   scripts/mariadb.sh start DIR   # prints the port; writes DIR/port, DIR/pid
#   scripts/mariadb.sh stop DIR
#   scripts/mariadb.sh client DIR [mariadb client args...]
#
# DIR holds everything: data/ (datadir, binlogs), my.cnf, mysqld.sock,
# error.log. A DIR that already has a datadir is started again as it is.
# The server listens on 127.0.0.1 on a free port (or $MARIADB_PORT) and runs
# as root; root@127.0.0.1 has an empty password, so TCP clients connect with
# `-h 127.0.0.1 -P PORT -u root`. Extra option lines for the [mariadbd]
# section can be given in $MARIADB_EXTRA_CNF (e.g. "innodb_buffer_pool_size=256M").
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

usage() { echo "usage: $0 start|stop|client DIR" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
cmd=$1
dir=$2
shift 2

client() {
  mariadb --no-defaults --socket="$dir/mysqld.sock" -uroot "$@"
}

running() {
  [[ -f $dir/pid ]] && alive "$(cat "$dir/pid")"
}

start() {
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if running; then
    log "mariadb already running in $dir (pid $(cat "$dir/pid"), port $(cat "$dir/port"))"
    cat "$dir/port"
    return 0
  fi
  command -v mariadbd >/dev/null || die "mariadbd not found: apt-get install -y mariadb-server"
  local port=${MARIADB_PORT:-$(free_port)}
  sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g" "$repo/bench/mariadb-primary.cnf" >"$dir/my.cnf"
  if [[ -n ${MARIADB_EXTRA_CNF:-} ]]; then
    printf '\n# from MARIADB_EXTRA_CNF\n%s\n' "$MARIADB_EXTRA_CNF" >>"$dir/my.cnf"
  fi
  if [[ ! -d $dir/data/mysql ]]; then
    mkdir -p "$dir/data"
    log "mariadb-install-db into $dir/data"
    if ! mariadb-install-db --defaults-file="$dir/my.cnf" --user=root --skip-test-db \
      >"$dir/install.log" 2>&1; then
      tail -n 30 "$dir/install.log" >&2
      die "mariadb-install-db failed (see $dir/install.log)"
    fi
  fi
  rm -f "$dir/mysqld.pid"
  setsid mariadbd --defaults-file="$dir/my.cnf" --user=root </dev/null >>"$dir/mysqld.out" 2>&1 &
  local pid=$! i
  echo "$pid" >"$dir/pid"
  for ((i = 0; i < 1200; i++)); do
    if ! alive "$pid"; then
      tail -n 30 "$dir/error.log" >&2 || true
      die "mariadbd exited during startup (see $dir/error.log)"
    fi
    if mariadb-admin --no-defaults --socket="$dir/mysqld.sock" -uroot ping >/dev/null 2>&1; then
      break
    fi
    sleep 0.1
  done
  mariadb-admin --no-defaults --socket="$dir/mysqld.sock" -uroot ping >/dev/null 2>&1 ||
    die "mariadbd did not accept connections within 120s (see $dir/error.log)"
  # skip_name_resolve: TCP clients from 127.0.0.1 match only 'root'@'127.0.0.1'.
  client -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
             GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;"
  mariadb --no-defaults -h 127.0.0.1 -P "$port" -uroot -e 'SELECT 1' >/dev/null ||
    die "cannot connect over TCP to 127.0.0.1:$port as root"
  # The server's own pid file is authoritative (setsid may have forked).
  if [[ -s $dir/mysqld.pid ]]; then
    pid=$(cat "$dir/mysqld.pid")
    echo "$pid" >"$dir/pid"
  fi
  echo "$port" >"$dir/port"
  log "mariadb $(client -N -e 'SELECT VERSION()') ready on 127.0.0.1:$port (pid $pid, dir $dir)"
  echo "$port"
}

stop() {
  [[ -d $dir ]] || return 0
  if [[ -f $dir/pid ]]; then
    local pid
    pid=$(cat "$dir/pid")
    if alive "$pid"; then
      stop_pid "$pid" 120 || die "could not stop mariadbd pid $pid"
      log "mariadb stopped (pid $pid)"
    fi
    rm -f "$dir/pid"
  fi
}

case $cmd in
  start) start ;;
  stop) stop ;;
  client) client "$@" ;;
  *) usage ;;
esac
