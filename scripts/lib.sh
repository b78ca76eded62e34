# shellcheck shell=bash
# Helpers shared by Kiln's test and benchmark scripts. Source it; it defines
# functions only.

# PYTHON is Debian's interpreter (the one python3-pymysql is installed for);
# a python3 earlier in PATH (pyenv) may lack pymysql.
PYTHON=${PYTHON:-/usr/bin/python3}

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# bin_entry ENTRY splits a benchmark's BINS entry, label=path[,flag...], into the globals label,
# path and flags (the flags separated by spaces, for KILN_FLAGS).
bin_entry() {
  label=${1%%=*} path=${1#*=} flags=""
  if [[ $path == *,* ]]; then
    flags=${path#*,}
    flags=${flags//,/ }
    path=${path%%,*}
  fi
}

# median [VALUE...]: the median of numbers given as arguments, or read from stdin (separated by
# blanks or newlines) when there are none; "-" entries are skipped; "-" if none is left.
# shellcheck disable=SC2120 # arguments are optional: without them it reads stdin
median() {
  if [[ $# -gt 0 ]]; then printf '%s\n' "$@"; else tr ' ' '\n'; fi | grep -v '^-*$' | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_cleanup WORK SERVER...: stops the servers (kiln, mariadb) a benchmark
# started under WORK/SERVER via scripts/kiln.sh or scripts/mariadb.sh, then
# removes WORK (kept, and logged, if KEEP=1).
bench_cleanup() {
  local work=$1 s lib_dir
  shift
  lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  for s in "$@"; do
    [[ -d $work/$s ]] || continue
    if [[ $s == kiln* ]]; then
      "$lib_dir/kiln.sh" stop "$work/$s" || true
    else
      "$lib_dir/mariadb.sh" stop "$work/mariadb" || true
    fi
  done
  if [[ ${KEEP:-0} == 1 ]]; then
    log "kept $work"
  else
    rm -rf "$work"
  fi
}

# bench_start WORK SERVER starts SERVER under WORK/SERVER and prints its port: mariadb (Debian's,
# via scripts/mariadb.sh) or kiln<suffix> (scripts/kiln.sh with $BIN_<suffix>, default $KILN_BIN
# or the repository's bin/kiln). bench_cleanup stops it.
bench_start() {
  local work=$1 s=$2 lib_dir binvar
  lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  case $s in
    kiln*)
      binvar=BIN_${s#kiln}
      KILN_BIN=${!binvar:-${KILN_BIN:-$(dirname "$lib_dir")/bin/kiln}} "$lib_dir/kiln.sh" start "$work/$s"
      ;;
    mariadb) "$lib_dir/mariadb.sh" start "$work/mariadb" ;;
    *) die "unknown server $s" ;;
  esac
}

# sbtest_prepare WORK SERVER PORT TABLES SIZE [SYSBENCH_OPTION...] creates the database sbtest afresh
# on the server at PORT, loads TABLES sysbench tables of SIZE rows (log in WORK/SERVER.prepare.log)
# and reads sbtest1 once, so that the server holds it in memory.
sbtest_prepare() {
  local work=$1 s=$2 port=$3 tables=$4 size=$5
  shift 5
  mysql_tcp 127.0.0.1 "$port" -e 'DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest'
  log "$s: prepare $tables x $size rows"
  sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 "--mysql-port=$port" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest "--tables=$tables" "--table-size=$size" --threads="$tables" "$@" prepare \
    >"$work/$s.prepare.log" 2>&1 || { tail -n 20 "$work/$s.prepare.log" >&2; die "$s: prepare failed"; }
  mysql_tcp 127.0.0.1 "$port" -D sbtest -N -e 'SELECT COUNT(*), SUM(LENGTH(c)) FROM sbtest1' >/dev/null
}

# free_port prints a TCP port on 127.0.0.1 that is free right now, below the kernel's
# ephemeral range: a server restarted on the same ports (kiln.sh restart) must find them free
# again, and an ephemeral port may meanwhile be the local end of some outgoing connection
# (test/internal/testport explains the same choice for the Go suites).
free_port() {
  "$PYTHON" -c 'import random, socket
try:
    hi = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    hi = 32768
if hi <= 12000:
    hi = 32768
for _ in range(1000):
    p = random.randrange(10000, hi)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
else:
    raise SystemExit("no free port below the ephemeral range")'
}

# port_open HOST PORT succeeds if something accepts TCP connections there.
port_open() {
  (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# alive PID: the process exists and is not a zombie (a child that died
# during startup stays a zombie until its parent exits).
alive() {
  local st
  st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [[ -n $st && $st != Z* ]]
}

# stop_pid PID [SECONDS]: SIGTERM, wait up to SECONDS (default 60), then
# SIGKILL. Returns 0 once the process is gone.
stop_pid() {
  local pid=$1 secs=${2:-60} i
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < secs * 10; i++)); do
    alive "$pid" || return 0
    sleep 0.1
  done
  log "pid $pid still alive after ${secs}s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    alive "$pid" || return 0
    sleep 0.1
  done
  return 1
}

# proc_cpu_ticks PID prints utime+stime of PID in clock ticks.
proc_cpu_ticks() {
  # Fields after the command name (which may contain spaces) start at 3.
  local stat
  stat=$(<"/proc/$1/stat")
  stat=${stat##*) }
  # shellcheck disable=SC2086
  set -- $stat
  echo $(( ${12} + ${13} ))
}

# proc_rss_kb PID prints VmRSS of PID in kB.
proc_rss_kb() {
  awk '/^VmRSS:/ {print $2}' "/proc/$1/status"
}

# mysql_tcp HOST PORT [args...]: the mysql CLI (Debian's mariadb-client) as
# root with an empty password over TCP, ignoring /etc/mysql option files.
mysql_tcp() {
  local host=$1 port=$2
  shift 2
  local cli
  cli=$(command -v mariadb || command -v mysql) || die "no mysql client: apt-get install -y mariadb-client"
  "$cli" --no-defaults --protocol=TCP -h "$host" -P "$port" -u root "$@"
}

# fsync_rate DIR COUNT prints the filesystem's raw fsync rate under DIR: single-threaded dd of
# COUNT 4 KiB O_DSYNC writes (one sync per write), as syncs/s; "-" if COUNT is 0 or dd fails.
fsync_rate() {
  local dir=$1 count=$2 dd_out r=""
  if [[ $count -gt 0 ]] &&
    dd_out=$(LC_ALL=C timeout 120 dd if=/dev/zero of="$dir/fsync-probe" bs=4k count="$count" oflag=dsync 2>&1); then
    r=$(awk -v n="$count" '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s," || $i == "s") { printf "%.0f", n / $(i - 1); exit } }' <<<"$dd_out")
  fi
  rm -f "$dir/fsync-probe"
  echo "${r:--}"
}
