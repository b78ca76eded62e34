#!/usr/bin/env bash
# A replicated Kiln (3 raft voters) against MariaDB lossless semi-sync, in one run.
#
#   make bench-cluster                  # builds bin/kiln, bin/delayproxy, bin/failoverprobe, runs this
#   bench/cluster-compare.sh
#   DURATION=3 THREADS="1 4" KILLS=2 bench/cluster-compare.sh   # smoke run
#
# Needs bin/kiln ($KILN_BIN), bin/delayproxy (tools/delayproxy) and bin/failoverprobe
# (tools/failoverprobe), Debian's mariadb-server and sysbench 1.0.20. Every server runs on
# 127.0.0.1 on free ports with its data under a temporary dir ($TMPDIR, default /tmp). Sections:
#
#   plain     Kiln: three `kiln serve` processes (--node-id 1..3, --raft-listen, the same --peers
#             and --cluster-id; durability sync: a commit is acknowledged once a majority has the
#             log entry fsynced), sysbench against the leader (the node whose GET /primary
#             answers 200). MariaDB: a primary and one replica, both from
#             bench/mariadb-primary.cnf (log_bin, ROW, sync_binlog=1,
#             innodb_flush_log_at_trx_commit=1, gtid_strict_mode), the replica with server_id=2
#             and rpl_semi_sync_slave_enabled=ON, replicating with MASTER_USE_GTID=slave_pos as
#             user repl; on the primary rpl_semi_sync_master_enabled=ON, wait_point=AFTER_SYNC,
#             rpl_semi_sync_master_timeout=$SEMISYNC_TIMEOUT_MS (1 h: no silent fallback to
#             async), wait_no_slave=ON. sysbench against the primary.
#   delay     The same with $DELAY_MS ms added one way between nodes by tools/delayproxy (a
#             userspace TCP proxy delaying each direction): Kiln is a new cluster whose --peers
#             name a proxy in front of each node's raft port (so all raft traffic between nodes
#             crosses a proxy; clients still reach the leader directly); MariaDB's replica
#             reconnects to the primary through a proxy. DELAY_MS=0 skips it.
#   logonly   As plain, but Kiln is a new cluster of 2 full voters and 1 log-only voter (docs/operations.md
#             "Log-only voters"): every node gets the same --peers and --log-only-ids 3, node 3 also
#             --log-only (it keeps, fsyncs and acknowledges the log, votes, holds no data, serves no
#             MySQL port; only HTTP and raft). MariaDB: the same primary + semi-sync replica as plain.
#             Row counts are compared on the full voters only. At the end: node 3's /cluster/status
#             must show it as a log-only voter, following, with its commit index and the leader's
#             match index for it near the leader's commit index (within $LOGONLY_MAX_GAP entries
#             once the load stopped), and node 3's engine dir (data/engine) must be tiny: under
#             $LOGONLY_MAX_ENGINE_KB KiB by du -sk after a clean stop (every node's engine and
#             log sizes are reported).
#   failover  Kiln only (MariaDB has no automatic failover): a new 3-node cluster, a light write
#             load (tools/failoverprobe: 2 connections each INSERTing a row every 10 ms into
#             the current leader, found by polling GET /primary every 20 ms; after an error a
#             connection retries every 20 ms). $KILLS times: kill -9 the leader, measure the
#             time until an INSERT succeeds on another node, restart the killed node on its
#             data dir and wait until GET /replica answers 200 on it. Reports p50/p99/max
#             (nearest rank) of the write outage, of the time until a new leader answers
#             /primary, and of the rejoin time; at the end every acknowledged INSERT must be
#             in the table (else the run fails).
#
# plain/delay/logonly: sysbench oltp_update_non_index and oltp_insert (1 table x $TABLE_SIZE rows,
# prepared again at the start of each section on each system) at each of $THREADS,
# $DURATION s per point, --db-ps-mode=auto --percentile=99; the two systems alternate point
# by point. For every point: TPS, p99 latency, the Kiln/MariaDB TPS ratio (the target is
# >= 1.5), sysbench's ignored errors; for MariaDB the deltas of Rpl_semi_sync_master_yes_tx
# and _no_tx and Rpl_semi_sync_master_status afterwards (status must stay ON and no_tx must not
# grow, else the point fails). After each section: the replicas must hold the primary's rows.
# Before and after the run, the disk's fsync latency: single-threaded dd of $FSYNC_PROBE_COUNT
# 4 KiB O_DSYNC writes on the data dirs' filesystem (as bench/commit-path.sh); it is printed
# with every figure. The 1-minute load average is recorded at every point: the machine may be
# shared.
#
# Writes $OUT/cluster.md and $OUT/cluster.tsv (OUT defaults to bench/results). Exits non-zero
# if a server fails to start or dies (at once, with what was measured so far in the report), a
# sysbench run aborts, a semi-sync check fails, replicas differ, or acknowledged writes were lost.
#
# Environment: DURATION (30), TABLE_SIZE (10000), THREADS ("1 4 16 64"), DELAY_MS (2), KILLS
# (20), SECTIONS ("plain delay logonly failover"), SERVERS ("mariadb kiln"; either alone
# validates its half), OUT, KEEP=1 keeps the temporary dirs, FSYNC_PROBE_COUNT (2000; 0 skips),
# KILN_FLAGS (extra `kiln serve` flags for every node), SEMISYNC_TIMEOUT_MS (3600000),
# SETTLE (1: seconds between a rejoined node and the next kill), LOGONLY_MAX_GAP (10),
# LOGONLY_MAX_ENGINE_KB (1024), KILN_BIN, DELAYPROXY_BIN, FAILOVERPROBE_BIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

duration=${DURATION:-30}
table_size=${TABLE_SIZE:-10000}
threads_list=${THREADS:-1 4 16 64}
delay_ms=${DELAY_MS:-2}
kills=${KILLS:-20}
sections=${SECTIONS:-plain delay logonly failover}
servers=${SERVERS:-mariadb kiln}
probe_count=${FSYNC_PROBE_COUNT:-2000}
kiln_flags=${KILN_FLAGS:-}
semisync_timeout=${SEMISYNC_TIMEOUT_MS:-3600000}
settle=${SETTLE:-1}
logonly_max_gap=${LOGONLY_MAX_GAP:-10}
logonly_max_engine_kb=${LOGONLY_MAX_ENGINE_KB:-1024}
export KILN_BIN=${KILN_BIN:-$repo/bin/kiln}
delayproxy=${DELAYPROXY_BIN:-$repo/bin/delayproxy}
failoverprobe=${FAILOVERPROBE_BIN:-$repo/bin/failoverprobe}
ps_mode=auto
workloads="oltp_update_non_index oltp_insert"
out=${OUT:-$here/results}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-cluster.XXXXXX")

command -v sysbench >/dev/null || die "sysbench not found: apt-get install -y sysbench"
for s in $servers; do
  [[ $s == kiln || $s == mariadb ]] || die "unknown server $s"
done
for sec in $sections; do
  [[ $sec == plain || $sec == delay || $sec == logonly || $sec == failover ]] || die "unknown section $sec"
done
has_server() { [[ " $servers " == *" $1 "* ]]; }
has_section() { [[ " $sections " == *" $1 "* ]]; }
delay_on() { awk -v d="$delay_ms" 'BEGIN { exit !(d + 0 > 0) }'; }
if has_server kiln; then
  [[ -x $KILN_BIN ]] || die "$KILN_BIN not built: make build (or make bench-cluster)"
  if has_section failover; then
    [[ -x $failoverprobe ]] || die "$failoverprobe not built: go build -o bin/failoverprobe ./tools/failoverprobe (or make bench-cluster)"
  fi
fi
if has_section delay && delay_on; then
  [[ -x $delayproxy ]] || die "$delayproxy not built: go build -o bin/delayproxy ./tools/delayproxy (or make bench-cluster)"
fi

cmdline="DURATION=$duration TABLE_SIZE=$table_size THREADS=\"$threads_list\" DELAY_MS=$delay_ms KILLS=$kills"
cmdline+=" SECTIONS=\"$sections\" SERVERS=\"$servers\""
[[ -n $kiln_flags ]] && cmdline+=" KILN_FLAGS=\"$kiln_flags\""
cmdline+=" bench/cluster-compare.sh"

# --- bookkeeping and cleanup ----------------------------------------------------------
kiln_dirs=()    # every node dir started (scripts/kiln.sh)
mariadb_dirs=() # every MariaDB dir started (scripts/mariadb.sh)
aux_pids=()     # proxies and the failover probe
cleanup() {
  local d p
  for p in "${aux_pids[@]}"; do
    if alive "$p"; then kill -TERM "$p" 2>/dev/null || true; fi
  done
  for d in "${kiln_dirs[@]}"; do
    "$repo/scripts/kiln.sh" stop "$d" || true
  done
  for d in "${mariadb_dirs[@]}"; do
    "$repo/scripts/mariadb.sh" stop "$d" || true
  done
  if [[ ${KEEP:-0} == 1 ]]; then
    log "kept $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_proxy() { # LISTEN_PORT TARGET_PORT LOG: a delay proxy in front of TARGET_PORT
  local lp=$1 tp=$2 logf=$3 p i
  "$delayproxy" --listen "127.0.0.1:$lp" --target "127.0.0.1:$tp" --delay "${delay_ms}ms" </dev/null >>"$logf" 2>&1 &
  p=$!
  aux_pids+=("$p")
  for ((i = 0; i < 100; i++)); do
    port_open 127.0.0.1 "$lp" && return 0
    alive "$p" || break
    sleep 0.05
  done
  cat "$logf" >&2
  fail "delay proxy on $lp -> $tp did not start"
}

# --- fsync baseline -----------------------------------------------------------------
fs_type=$(df -T "$work" | awk 'NR == 2 { print $2 }')
[[ $fs_type == tmpfs ]] && log "warning: $work is on tmpfs: fsync costs nothing there (set TMPDIR)"
fsync_probe() { # prints "SYNCS_PER_S MS_PER_SYNC" or "- -"
  local dd_out r
  if [[ $probe_count -gt 0 ]] &&
    dd_out=$(LC_ALL=C timeout 120 dd if=/dev/zero of="$work/fsync-probe" bs=4k count="$probe_count" oflag=dsync 2>&1); then
    r=$(awk -v n="$probe_count" '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s," || $i == "s") { s = $(i - 1); printf "%.0f %.3f", n / s, s * 1000 / n; exit } }' <<<"$dd_out")
  fi
  rm -f "$work/fsync-probe"
  echo "${r:-- -}"
}
read -r fsync_rate fsync_ms <<<"$(fsync_probe)"
log "fsync baseline: $fsync_rate syncs/s, $fsync_ms ms per sync (dd bs=4k count=$probe_count oflag=dsync on $fs_type)"
fsync_rate_end=- fsync_ms_end=-
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%F %H:%M UTC')

# --- results --------------------------------------------------------------------------
tsv=$out/cluster.tsv
printf 'section\tworkload\tthreads\tserver\tstatus\ttps\ttransactions\tp99_ms\tignored_errors\tsemisync_status\tsemisync_yes_tx\tsemisync_no_tx\tfsync_ms\tloadavg1\tfailover_ms\telection_ms\trejoin_ms\tnote\n' >"$tsv"
tsv_row() { # the 18 columns, '-' for empty ones
  local IFS=$'\t' a=() x
  for x in "$@"; do a+=("${x:--}"); done
  while [[ ${#a[@]} -lt 18 ]]; do a+=(-); done
  printf '%s\n' "${a[*]}" >>"$tsv"
}
declare -A res # res[FIELD/SECTION/WORKLOAD/THREADS/SERVER]
declare -A version notes
failures=0
fatal_msg=""
done_sections=""
fo_times=() fo_elect=() fo_rejoin=()
fo_summary=""
fo_note=""

# fail MESSAGE: a server died or could not be set up: write the report with what was measured,
# then exit 1.
fail() {
  log "error: $*"
  fatal_msg=$*
  write_report || true
  exit 1
}

# --- MariaDB: primary + semi-sync replica ---------------------------------------------
mp_dir=$work/mariadb-primary
mr_dir=$work/mariadb-replica
mq() { mysql_tcp 127.0.0.1 "$1" -N -B "${@:2}"; } # PORT ARGS: batch query
mp_port="" mr_port="" mproxy_port=""

semisync_vars() { # PORT: prints "status yes_tx no_tx clients"
  mq "$1" -e "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_%'" | awk '
    { v[$1] = $2 }
    END { printf "%s %s %s %s\n", v["Rpl_semi_sync_master_status"], v["Rpl_semi_sync_master_yes_tx"] + 0,
      v["Rpl_semi_sync_master_no_tx"] + 0, v["Rpl_semi_sync_master_clients"] + 0 }'
}

slave_state() { # prints "IO SQL LAST_ERROR"
  mysql_tcp 127.0.0.1 "$mr_port" -e 'SHOW SLAVE STATUS\G' | awk -F': ' '
    $1 ~ /^ *Slave_IO_Running$/ { io = $2 } $1 ~ /^ *Slave_SQL_Running$/ { sq = $2 }
    $1 ~ /^ *Last_Error$/ { le = $2 } $1 ~ /^ *Last_IO_Error$/ { lie = $2 }
    END { printf "%s %s %s%s\n", io, sq, le, lie }'
}

wait_semisync_client() {
  local i st
  for ((i = 0; i < 300; i++)); do
    read -r -a st <<<"$(semisync_vars "$mp_port")"
    [[ ${st[3]} -ge 1 && ${st[0]} == ON ]] && return 0
    sleep 0.1
  done
  log "replica: $(slave_state)"
  fail "mariadb: the replica did not register as a semi-sync client within 30 s (status ${st[*]})"
}

start_mariadb() {
  mp_port=$("$repo/scripts/mariadb.sh" start "$mp_dir") || fail "mariadb primary did not start"
  mariadb_dirs+=("$mp_dir")
  mq "$mp_port" -e "CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 'repl';
    GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'"
  local gtid
  gtid=$(mq "$mp_port" -e 'SELECT @@gtid_binlog_pos')
  mr_port=$(MARIADB_EXTRA_CNF=$'server_id = 2\nrpl_semi_sync_slave_enabled = ON' \
    "$repo/scripts/mariadb.sh" start "$mr_dir") || fail "mariadb replica did not start"
  mariadb_dirs+=("$mr_dir")
  # The replica's own start wrote to its binlog (root@127.0.0.1): clear it, so gtid_strict_mode
  # sees only the primary's GTIDs; replicate from the primary's position after its setup.
  mq "$mr_port" -e "STOP SLAVE; RESET MASTER; SET GLOBAL gtid_slave_pos = '$gtid';
    CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = $mp_port, MASTER_USER = 'repl',
      MASTER_PASSWORD = 'repl', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1"
  mq "$mp_port" -e "SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC;
    SET GLOBAL rpl_semi_sync_master_timeout = $semisync_timeout;
    SET GLOBAL rpl_semi_sync_master_wait_no_slave = ON;
    SET GLOBAL rpl_semi_sync_master_enabled = ON"
  mq "$mr_port" -e 'START SLAVE'
  wait_semisync_client
  local before after
  before=$(semisync_vars "$mp_port")
  mq "$mp_port" -e 'CREATE DATABASE IF NOT EXISTS semisync_check; DROP DATABASE semisync_check'
  after=$(semisync_vars "$mp_port")
  [[ $(cut -d' ' -f2 <<<"$after") -gt $(cut -d' ' -f2 <<<"$before") ]] ||
    fail "mariadb: a write on the primary did not wait for the replica (semi-sync before: $before, after: $after)"
  version[mariadb]=$(mq "$mp_port" -e 'SELECT VERSION()')
  notes[mariadb_cfg]=$(mq "$mp_port" -e "SELECT CONCAT('sync_binlog=', @@sync_binlog, ', innodb_flush_log_at_trx_commit=',
    @@innodb_flush_log_at_trx_commit, ', rpl_semi_sync_master_wait_point=', @@rpl_semi_sync_master_wait_point,
    ', rpl_semi_sync_master_timeout=', @@rpl_semi_sync_master_timeout, ' ms, wait_no_slave=',
    @@rpl_semi_sync_master_wait_no_slave)")
  notes[mariadb_replica_cfg]=$(mq "$mr_port" -e "SELECT CONCAT('server_id=', @@server_id, ', log_bin=', @@log_bin,
    ', sync_binlog=', @@sync_binlog, ', innodb_flush_log_at_trx_commit=', @@innodb_flush_log_at_trx_commit,
    ', rpl_semi_sync_slave_enabled=', @@rpl_semi_sync_slave_enabled, ', sync_relay_log=', @@sync_relay_log)")
  log "mariadb: primary on $mp_port, semi-sync replica on $mr_port (${notes[mariadb_cfg]})"
}

# mariadb_route direct|proxy: where the replica's IO thread connects.
mariadb_route() {
  local port=$mp_port
  if [[ $1 == proxy ]]; then
    if [[ -z $mproxy_port ]]; then
      mproxy_port=$(free_port)
      start_proxy "$mproxy_port" "$mp_port" "$work/mariadb-proxy.log"
    fi
    port=$mproxy_port
  fi
  mq "$mr_port" -e "STOP SLAVE; CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = $port; START SLAVE"
  wait_semisync_client
  log "mariadb: replica connects to the primary on $port ($1)"
}

mariadb_alive() {
  alive "$(cat "$mp_dir/pid")" || fail "mariadb primary died (see $mp_dir/error.log)"
  alive "$(cat "$mr_dir/pid")" || fail "mariadb replica died (see $mr_dir/error.log)"
  local st
  read -r -a st <<<"$(slave_state)"
  [[ ${st[0]:-} == Yes && ${st[1]:-} == Yes ]] || fail "mariadb replica stopped replicating: ${st[*]}"
}

# mariadb_caught_up: the replica has applied everything the primary logged (5 min at most).
mariadb_caught_up() {
  local i p r
  for ((i = 0; i < 3000; i++)); do
    p=$(mq "$mp_port" -e 'SELECT @@gtid_binlog_pos')
    r=$(mq "$mr_port" -e 'SELECT @@gtid_slave_pos')
    [[ $p == "$r" ]] && return 0
    sleep 0.1
  done
  log "mariadb: replica at $r, primary at $p after 5 min"
  return 1
}

# --- Kiln clusters ------------------------------------------------------------------
declare -A kdir  # kdir[CLUSTER/N]: node N's dir
declare -A kfull # kfull[CLUSTER]: its full voters (the nodes with data and a MySQL port)
kiln_port() { cat "${kdir[$1/$2]}/port"; }
kiln_http() { cat "${kdir[$1/$2]}/http_port"; }
kiln_pid() { cat "${kdir[$1/$2]}/pid"; }
http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$1$2" 2>/dev/null || true; }

# start_node CLUSTER N: starts node N from the flags recorded in its dir (same ports as before).
start_node() {
  local d=${kdir[$1/$2]}
  KILN_PORT=$(cat "$d/port") KILN_HTTP_PORT=$(cat "$d/http_port") KILN_FLAGS="$(cat "$d/flags")" \
    "$repo/scripts/kiln.sh" start "$d" >/dev/null 2>>"$d/start.log"
}

# start_cluster NAME PROXIED(0|1) [LOG_ONLY_ID]: three nodes; with PROXIED, a delay proxy in front
# of each raft port and --peers naming the proxies. A node's own --peers entry is only recorded as
# its member address (internal/repl/node.go: setMember gives the transport only the other nodes'
# addresses); it listens on --raft-listen, so every node gets the same --peers and --cluster-id.
# With LOG_ONLY_ID, every node also gets --log-only-ids LOG_ONLY_ID and that node --log-only: it
# serves HTTP and raft but no MySQL port (scripts/kiln.sh waits for its /health, which it serves).
start_cluster() {
  local name=$1 proxied=$2 lo=${3:-} i peers="" d pids=() raft=() pp extra
  kfull[$name]=""
  for i in 1 2 3; do
    raft[i]=$(free_port)
    pp=${raft[i]}
    if [[ $proxied == 1 ]]; then
      pp=$(free_port)
      start_proxy "$pp" "${raft[i]}" "$work/$name-proxy$i.log"
    fi
    peers+="${peers:+,}$i=127.0.0.1:$pp"
  done
  for i in 1 2 3; do
    d=$work/$name/n$i
    mkdir -p "$d"
    kdir[$name/$i]=$d
    free_port >"$d/port"
    free_port >"$d/http_port"
    extra=""
    if [[ -n $lo ]]; then
      extra=" --log-only-ids $lo"
      [[ $i == "$lo" ]] && extra+=" --log-only"
    fi
    echo "--node-id $i --raft-listen 127.0.0.1:${raft[i]} --peers $peers --cluster-id kiln-bench-$name$extra $kiln_flags" >"$d/flags"
    kiln_dirs+=("$d")
    [[ $i == "$lo" ]] || kfull[$name]+="${kfull[$name]:+ }$i"
  done
  # In parallel: a node may wait for its peers before it answers /health.
  for i in 1 2 3; do
    start_node "$name" "$i" &
    pids+=($!)
  done
  for i in 1 2 3; do
    wait "${pids[i - 1]}" || { tail -n 20 "${kdir[$name/$i]}/kiln.log" >&2; fail "kiln $name node $i did not start"; }
  done
  log "kiln $name: 3 nodes up, --peers $peers${lo:+, --log-only-ids $lo (node $lo --log-only)}"
}

stop_cluster() {
  local i
  for i in 1 2 3; do
    "$repo/scripts/kiln.sh" stop "${kdir[$1/$i]}" || log "warning: kiln $1 node $i did not stop cleanly"
  done
}

# leader CLUSTER [SECONDS]: prints the full voter answering /primary 200 (waits up to SECONDS, 30).
# (A log-only voter never answers 200 there: it does not take commits even while raft elects it.)
leader() {
  local i n limit=$((${2:-30} * 20))
  for ((n = 0; n < limit; n++)); do
    for i in ${kfull[$1]}; do
      [[ $(http_code "$(kiln_http "$1" "$i")" /primary) == 200 ]] && { echo "$i"; return 0; }
    done
    sleep 0.05
  done
  return 1
}

kiln_alive() { # CLUSTER
  local i
  for i in 1 2 3; do
    alive "$(kiln_pid "$1" "$i")" || { tail -n 20 "${kdir[$1/$i]}/kiln.log" >&2; fail "kiln $1 node $i died (see ${kdir[$1/$i]}/kiln.log)"; }
  done
}

# cluster_roles CLUSTER: every node's own view from /cluster/status ("node N: ROLE term T leader L
# commit C last I; ..."), for error messages.
cluster_roles() {
  local i j out=""
  for i in 1 2 3; do
    j=$(curl -s --max-time 2 "http://127.0.0.1:$(kiln_http "$1" "$i")/cluster/status" 2>/dev/null) || j=""
    out+="${out:+; }node $i: $("$PYTHON" -c 'import json, sys
try:
    s = json.loads(sys.argv[1])
    print("%s term %d leader %d commit %d last %d" % (s["Role"], s["Term"], s["Leader"], s["Commit"], s["LastIndex"]))
except Exception:
    print("no /cluster/status answer")' "$j")"
  done
  echo "$out"
}

# kiln_replicas_match CLUSTER: every full voter holds the leader's row count of sbtest.sbtest1 (60 s).
kiln_replicas_match() {
  local l want i n got
  l=$(leader "$1") || return 1
  want=$(mq "$(kiln_port "$1" "$l")" -e 'SELECT COUNT(*) FROM sbtest.sbtest1') || return 1
  for i in ${kfull[$1]}; do
    for ((n = 0; n < 600; n++)); do
      got=$(mq "$(kiln_port "$1" "$i")" -e 'SELECT COUNT(*) FROM sbtest.sbtest1' 2>/dev/null) || got=""
      [[ $got == "$want" ]] && break
      sleep 0.1
    done
    [[ $got == "$want" ]] || { log "kiln $1 node $i: $got rows, leader $want"; return 1; }
  done
}

# --- sysbench points ----------------------------------------------------------------
cur_cluster=""  # the Kiln cluster of the section
cur_leader=""   # its leader at the section's start
target_port() { # SERVER
  if [[ $1 == kiln ]]; then kiln_port "$cur_cluster" "$cur_leader"; else echo "$mp_port"; fi
}
sb_args() { # SERVER
  echo --db-driver=mysql --mysql-host=127.0.0.1 "--mysql-port=$(target_port "$1")" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest --tables=1 "--table-size=$table_size"
}

prepare() { # SECTION SERVER
  local p
  p=$(target_port "$2")
  mq "$p" -e 'DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest'
  log "$2 ($1): prepare 1 x $table_size rows"
  # shellcheck disable=SC2046 # sb_args is a list
  sysbench oltp_insert $(sb_args "$2") prepare >"$work/$2.$1.prepare.log" 2>&1 ||
    { tail -n 20 "$work/$2.$1.prepare.log" >&2; fail "$2: prepare failed ($1)"; }
  mq "$p" -e 'SELECT COUNT(*), SUM(LENGTH(c)) FROM sbtest.sbtest1' >/dev/null
  if [[ $2 == mariadb ]]; then
    mariadb_caught_up || fail "mariadb: replica did not catch up after prepare"
  fi
}

# point SECTION WORKLOAD THREADS SERVER
point() {
  local sec=$1 w=$2 t=$3 s=$4
  local logf="$work/$s.$sec.$w.$t.log" status=ok note="" ss0=() ss1=() load l
  load=$(cut -d' ' -f1 /proc/loadavg)
  if [[ $s == kiln ]]; then
    kiln_alive "$cur_cluster"
    l=$(leader "$cur_cluster" 10) || fail "kiln $cur_cluster: no leader before $sec $w threads=$t ($(cluster_roles "$cur_cluster"))"
    if [[ $l != "$cur_leader" ]]; then
      note="leader moved from node $cur_leader to node $l before this point"
      log "warning: kiln $cur_cluster: $note"
      cur_leader=$l
    fi
  else
    mariadb_alive
    read -r -a ss0 <<<"$(semisync_vars "$mp_port")"
  fi
  local -a args
  read -ra args <<<"$(sb_args "$s")"
  timeout $((duration + 120)) sysbench "$w" "${args[@]}" --threads="$t" --time="$duration" \
    --db-ps-mode="$ps_mode" --percentile=99 --report-interval=0 run >"$logf" 2>&1 || status=FAIL
  grep -q FATAL "$logf" && status=FAIL
  local sss="-" yes="-" no="-"
  if [[ $s == kiln ]]; then
    kiln_alive "$cur_cluster"
  else
    mariadb_alive
    read -r -a ss1 <<<"$(semisync_vars "$mp_port")"
    sss=${ss1[0]} yes=$((ss1[1] - ss0[1])) no=$((ss1[2] - ss0[2]))
    if [[ $sss != ON || $no -ne 0 ]]; then
      status=SEMISYNC
      note+="${note:+; }semi-sync status $sss, no_tx +$no: commits were not all acknowledged by the replica"
    fi
  fi

  local tx tps p99 errs
  tx=$(sed -nE '/^ *transactions: /{s/^ *transactions: +([0-9]+) .*/\1/p;q}' "$logf")
  tps=$(sed -nE '/^ *transactions: /{s/^ *transactions: +[0-9]+ +\(([0-9.]+) per sec.*/\1/p;q}' "$logf")
  p99=$(sed -nE '/99th percentile:/{s/.*: +([0-9.]+).*/\1/p;q}' "$logf")
  errs=$(sed -nE '/^ *ignored errors: /{s/^ *ignored errors: +([0-9]+) .*/\1/p;q}' "$logf")
  if [[ $status != ok ]]; then
    failures=$((failures + 1))
    log "$status $s $sec $w threads=$t (log: $logf)"
    grep -m 5 -E 'FATAL|error' "$logf" >&2 || true
    cp "$logf" "$out/cluster.failed.$s.$sec.$w.$t.log"
    [[ $status == FAIL ]] && note+="${note:+; }sysbench: $(grep -m 1 -E 'FATAL' "$logf" | sed -E 's/^FATAL: //' | cut -c1-200)"
  fi
  local k=$sec/$w/$t/$s
  res[tps/$k]=${tps:--}
  res[p99/$k]=${p99:--}
  res[err/$k]=${errs:--}
  res[st/$k]=$status
  res[ss/$k]="$yes/$no"
  res[note/$k]=$note
  tsv_row "$sec" "$w" "$t" "$s" "$status" "$tps" "$tx" "$p99" "$errs" "$sss" "$yes" "$no" "$fsync_ms" "$load" - - - "$note"
  log "$s $sec $w threads=$t: $status tps ${tps:--} p99 ${p99:--} ms${errs:+ ignored errors $errs}$([[ $s == mariadb ]] && echo " semi-sync $sss yes_tx +$yes no_tx +$no") (load $load)"
}

sysbench_section() { # SECTION
  local sec=$1 w t s
  for s in $servers; do prepare "$sec" "$s"; done
  for w in $workloads; do
    for t in $threads_list; do
      for s in $servers; do
        point "$sec" "$w" "$t" "$s"
      done
    done
  done
  # The replicas must hold what the primary / leader holds.
  if has_server mariadb; then
    if mariadb_caught_up && [[ $(mq "$mp_port" -e 'CHECKSUM TABLE sbtest.sbtest1' | cut -f2) == \
      "$(mq "$mr_port" -e 'CHECKSUM TABLE sbtest.sbtest1' | cut -f2)" ]]; then
      notes[$sec/mariadb_replica]="replica caught up; CHECKSUM TABLE sbtest1 equal on primary and replica"
    else
      notes[$sec/mariadb_replica]="REPLICA DIFFERS from the primary"
      failures=$((failures + 1))
    fi
    log "mariadb ($sec): ${notes[$sec/mariadb_replica]}"
  fi
  if has_server kiln; then
    if kiln_replicas_match "$cur_cluster"; then
      if [[ ${kfull[$cur_cluster]} == "1 2 3" ]]; then
        notes[$sec/kiln_replica]="all 3 nodes hold the leader's sbtest1 row count"
      else
        notes[$sec/kiln_replica]="both full voters (nodes ${kfull[$cur_cluster]// /, }) hold the leader's sbtest1 row count (the log-only node holds no data: not checked)"
      fi
    else
      notes[$sec/kiln_replica]="NODES DIFFER in sbtest1 row count"
      failures=$((failures + 1))
    fi
    log "kiln ($sec): ${notes[$sec/kiln_replica]}"
  fi
  done_sections+=" $sec"
}

# --- the log-only node after the logonly section --------------------------------------
# logonly_check CLUSTER LOG_ONLY_ID: node LOG_ONLY_ID's /cluster/status must show it as a log-only
# voter that follows, with its commit index and the leader's match index for it within
# $logonly_max_gap of the leader's commit index (polled up to 10 s after the load stopped). Then
# stops the cluster (a clean stop flushes each engine's memtable: the engine runs without a WAL, so
# while running a full voter's recent rows may be in memory only) and measures every node's
# data/engine and data/log with du -sk; the log-only node's engine must be under
# $logonly_max_engine_kb KiB. Sets notes[logonly/check].
logonly_check() {
  local c=$1 lo=$2 l n i js jl f=() ok=1 why="" ek lk lek handoffs elected codes sizes=""
  l=$(leader "$c") || fail "kiln $c: no leader after the section ($(cluster_roles "$c"))"
  for ((n = 0; n < 100; n++)); do
    js=$(curl -s --max-time 2 "http://127.0.0.1:$(kiln_http "$c" "$lo")/cluster/status" 2>/dev/null) || js=""
    jl=$(curl -s --max-time 2 "http://127.0.0.1:$(kiln_http "$c" "$l")/cluster/status" 2>/dev/null) || jl=""
    # Prints: role term leader commit applied last self_voter self_log_only leader_commit
    # leader_last match_of_lo progress_of_lo lo_as_seen_by_leader_log_only.
    read -r -a f <<<"$("$PYTHON" -c 'import json, sys
lo = int(sys.argv[3])
try:
    s, l = json.loads(sys.argv[1]), json.loads(sys.argv[2])
except Exception:
    print("-")
    sys.exit()
me = next((m for m in s.get("Members") or [] if m["ID"] == lo), {})
ml = next((m for m in l.get("Members") or [] if m["ID"] == lo), {})
print(s["Role"], s["Term"], s["Leader"], s["Commit"], s["Applied"], s["LastIndex"], me.get("Voter", False),
      me.get("LogOnly", False), l["Commit"], l["LastIndex"], ml.get("Match", 0), ml.get("Progress") or "-",
      ml.get("LogOnly", False))' "$js" "$jl" "$lo")"
    [[ ${#f[@]} -eq 13 ]] && ((f[8] - f[10] <= logonly_max_gap && f[8] - f[3] <= logonly_max_gap)) && break
    sleep 0.1
  done
  if [[ ${#f[@]} -ne 13 ]]; then
    ok=0 why="no /cluster/status answer from node $lo or leader node $l"
    f=(- - - - - - - - - - - - -)
  else
    [[ ${f[7]} == True && ${f[12]} == True ]] || { ok=0 why+="${why:+; }not shown as log-only (own view ${f[7]}, leader's ${f[12]})"; }
    [[ ${f[6]} == True ]] || { ok=0 why+="${why:+; }not a voter"; }
    [[ ${f[0]} == follower ]] || { ok=0 why+="${why:+; }role ${f[0]}, not follower"; }
    ((f[8] - f[10] <= logonly_max_gap)) || { ok=0 why+="${why:+; }leader's match index for it ${f[10]} is $((f[8] - f[10])) behind the leader's commit ${f[8]}"; }
    ((f[8] - f[3] <= logonly_max_gap)) || { ok=0 why+="${why:+; }its commit ${f[3]} is $((f[8] - f[3])) behind the leader's ${f[8]}"; }
  fi
  ek=$(du -sk "${kdir[$c/$lo]}/data/engine" | cut -f1)
  lek=$(du -sk "${kdir[$c/$l]}/data/engine" | cut -f1)
  codes="/health $(http_code "$(kiln_http "$c" "$lo")" /health), /primary $(http_code "$(kiln_http "$c" "$lo")" /primary), /replica $(http_code "$(kiln_http "$c" "$lo")" /replica)"
  kiln_alive "$c"
  stop_cluster "$c"
  for i in 1 2 3; do
    sizes+="${sizes:+; }node $i"
    [[ $i == "$lo" ]] && sizes+=" (log-only)"
    [[ $i == "$l" ]] && sizes+=" (leader)"
    sizes+=": engine $(du -sk "${kdir[$c/$i]}/data/engine" | cut -f1) KiB, log $(du -sk "${kdir[$c/$i]}/data/log" | cut -f1) KiB"
  done
  lk=$(du -sk "${kdir[$c/$lo]}/data/engine" | cut -f1)
  ((lk < logonly_max_engine_kb)) || { ok=0 why+="${why:+; }engine ${lk} KiB after the stop, not under $logonly_max_engine_kb KiB"; }
  handoffs=$(grep -c 'hands leadership' "${kdir[$c/$lo]}/kiln.log" || true)
  elected=$(grep -c 'msg=leading ' "${kdir[$c/$lo]}/kiln.log" || true)
  notes[logonly/check]="node $lo /cluster/status (own view): role ${f[0]}, term ${f[1]}, leader node ${f[2]}, commit ${f[3]}, applied ${f[4]}, last index ${f[5]}, voter ${f[6]}, log-only ${f[7]};"
  notes[logonly/check]+=" leader node $l's view: commit ${f[8]}, last index ${f[9]}, node $lo log-only ${f[12]}, match ${f[10]} (${f[11]})."
  notes[logonly/check]+=" du -sk of data/engine while running: node $lo $ek KiB, leader node $l $lek KiB (its memtable not counted);"
  notes[logonly/check]+=" after a clean stop of all three (engines flushed): **$sizes**."
  notes[logonly/check]+=" Node $lo's HTTP: $codes. Its kiln.log: raft elected it $elected time(s) (\"leading\" lines), it handed leadership over $handoffs time(s) (\"hands leadership\" lines)."
  if [[ $ok == 1 ]]; then
    notes[logonly/check]+=" Check: ok."
  else
    notes[logonly/check]+=" **Check FAILED:** $why."
    failures=$((failures + 1))
  fi
  tsv_row logonly log-only-node "$lo" kiln "$([[ $ok == 1 ]] && echo ok || echo FAIL)" - - - - - - - "$fsync_ms" "$(cut -d' ' -f1 /proc/loadavg)" - - - \
    "role ${f[0]} commit ${f[3]} match ${f[10]} leader commit ${f[8]}; du -sk after a clean stop: $sizes${why:+; $why}"
  log "kiln $c: ${notes[logonly/check]}"
}

# --- failover -----------------------------------------------------------------------
failover_section() {
  local c=failover i k l t0 t0us ev line fo el rj r0 probe_pid ports="" https=""
  start_cluster "$c" 0
  cur_cluster=$c
  l=$(leader "$c") || fail "kiln $c: no leader"
  mq "$(kiln_port "$c" "$l")" -e 'CREATE DATABASE kilnbench'
  for i in 1 2 3; do
    ports+="${ports:+,}127.0.0.1:$(kiln_port "$c" "$i")"
    https+="${https:+,}127.0.0.1:$(kiln_http "$c" "$i")"
  done
  ev=$work/failover.events
  "$failoverprobe" --mysql "$ports" --http "$https" --db kilnbench --table failover --writers 2 \
    --interval 10ms --poll 20ms --out "$ev" </dev/null 2>"$work/failoverprobe.err" &
  probe_pid=$!
  aux_pids+=("$probe_pid")
  # last_event: the newest ok/err line ("T ok|err NODE").
  last_event() { awk '$2 == "ok" || $2 == "err" { e = $1 " " $2 " " $3 } END { print e }' "$ev" 2>/dev/null; }
  for ((k = 1; k <= kills; k++)); do
    kiln_alive "$c"
    l=$(leader "$c") || fail "kiln $c: no leader before kill $k"
    # Writes must be flowing on the leader before the kill.
    for ((i = 0; i < 1500; i++)); do
      read -r -a line <<<"$(last_event)"
      [[ ${line[1]:-} == ok && ${line[2]:-} == "$l" ]] && break
      alive "$probe_pid" || fail "failoverprobe exited: $(cat "$work/failoverprobe.err")"
      sleep 0.02
    done
    [[ ${line[1]:-} == ok && ${line[2]:-} == "$l" ]] || fail "kiln $c: writes not succeeding on leader node $l before kill $k (last: ${line[*]:-none})"
    t0=$EPOCHREALTIME
    kill -KILL "$(kiln_pid "$c" "$l")"
    t0us=${t0//[!0-9]/}
    fo="" el=""
    for ((i = 0; i < 3000; i++)); do # 60 s
      fo=$(awk -v t="$t0us" -v l="$l" '$2 == "ok" && $1 >= t && $3 != l { print $1 - t; exit }' "$ev")
      [[ -n $fo ]] && break
      sleep 0.02
    done
    [[ -n $fo ]] || fail "kiln $c: no write succeeded within 60 s of killing leader node $l (kill $k; events: $ev)"
    el=$(awk -v t="$t0us" -v l="$l" '$2 == "leader" && $1 >= t && $3 != 0 && $3 != l { print $1 - t; exit }' "$ev")
    fo=$(awk -v u="$fo" 'BEGIN { printf "%.1f", u / 1000 }')
    [[ -n $el ]] && el=$(awk -v u="$el" 'BEGIN { printf "%.1f", u / 1000 }')
    # Restart the killed node; wait until it is a healthy replica.
    r0=$EPOCHREALTIME
    start_node "$c" "$l" || { tail -n 20 "${kdir[$c/$l]}/kiln.log" >&2; fail "kiln $c node $l did not restart after kill $k"; }
    for ((i = 0; i < 1200; i++)); do
      [[ $(http_code "$(kiln_http "$c" "$l")" /replica) == 200 ]] && break
      sleep 0.05
    done
    [[ $(http_code "$(kiln_http "$c" "$l")" /replica) == 200 ]] || fail "kiln $c node $l: /replica not 200 within 60 s of its restart (kill $k)"
    rj=$(awk -v a="${r0//[!0-9]/}" -v b="${EPOCHREALTIME//[!0-9]/}" 'BEGIN { printf "%.0f", (b - a) / 1000 }')
    fo_times+=("$fo")
    fo_elect+=("${el:--}")
    fo_rejoin+=("$rj")
    tsv_row failover kill-leader "$k" kiln ok - - - - - - - "$fsync_ms" "$(cut -d' ' -f1 /proc/loadavg)" "$fo" "$el" "$rj" "killed node $l"
    log "kiln failover $k/$kills: killed leader node $l; writes again after $fo ms (new leader after ${el:--} ms); node $l a replica again after $rj ms"
    sleep "$settle"
  done
  kill -TERM "$probe_pid"
  local prc=0
  wait "$probe_pid" || prc=$?
  fo_summary=$(grep '^summary' "$ev" || true)
  log "failoverprobe: ${fo_summary:-no summary} (exit $prc)"
  if [[ $prc -ne 0 || -z $fo_summary ]]; then
    failures=$((failures + 1))
    fo_note="failoverprobe exit $prc: $(tail -n 3 "$work/failoverprobe.err" | tr '\n' ' ')"
    cp "$ev" "$out/cluster.failed.failover.events"
  fi
  stop_cluster "$c"
  done_sections+=" failover"
}

# --- the report ---------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }
pct() { # Q VALUES...: nearest-rank percentile (Q in 0..100); '-' entries ignored
  local q=$1
  shift
  printf '%s\n' "$@" | awk -v q="$q" '$1 != "-" && $1 != "" { v[n++] = $1 + 0 }
    END {
      if (n == 0) { print "-"; exit }
      for (i = 1; i < n; i++) for (j = i; j > 0 && v[j] < v[j - 1]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
      r = int(q / 100 * n); if (r < q / 100 * n) r++; if (r < 1) r = 1
      printf "%.0f", v[r - 1]
    }'
}
v() { echo "${res[$1/$2]:--}"; }

section_table() { # SECTION
  local sec=$1 w t m k tr meets
  echo "| workload | threads | MariaDB TPS | Kiln TPS | Kiln/MariaDB TPS | >= 1.5x | MariaDB p99 ms | Kiln p99 ms | MariaDB semi-sync yes/no tx | Kiln ignored errors | status MariaDB / Kiln |"
  echo "|---|---:|---:|---:|---:|:-:|---:|---:|---:|---:|---|"
  for w in $workloads; do
    for t in $threads_list; do
      m=$sec/$w/$t/mariadb
      k=$sec/$w/$t/kiln
      tr=$(ratio "$(v tps "$k")" "$(v tps "$m")")
      meets=-
      [[ $tr != - ]] && meets=$(awk -v r="$tr" 'BEGIN { print (r >= 1.5 ? "yes" : "no") }')
      echo "| $w | $t | $(v tps "$m") | $(v tps "$k") | $tr | $meets | $(v p99 "$m") | $(v p99 "$k") | $(v ss "$m") | $(v err "$k") | $(v st "$m") / $(v st "$k") |"
    done
  done
  for m in mariadb kiln; do
    for w in $workloads; do
      for t in $threads_list; do
        k=$(v note "$sec/$w/$t/$m")
        [[ $k != - && -n $k ]] && echo && echo "- $m $w threads=$t: $k"
      done
    done
  done
  for m in mariadb_replica kiln_replica; do
    [[ -n ${notes[$sec/$m]:-} ]] && echo && echo "After the section, ${m%_replica}: ${notes[$sec/$m]}."
  done
  return 0
}

write_report() {
  local md=$out/cluster.md kiln_rev
  kiln_rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
  git -C "$repo" diff --quiet HEAD -- cmd internal go.mod go.sum 2>/dev/null || kiln_rev+=" (uncommitted changes)"
  {
    echo "## Replicated commit path: Kiln 3-voter raft vs MariaDB lossless semi-sync"
    echo
    echo "Started $started, finished $(date -u '+%F %H:%M UTC'); $(nproc) cores ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)," \
      "kernel $(uname -r)); data dirs on $fs_type. $(sysbench --version), 1 table x $table_size rows, $duration s per point," \
      "--db-ps-mode=$ps_mode, --percentile=99. Every process (3 Kiln nodes, 2 MariaDB servers, delay proxies, sysbench) on the same machine, over loopback."
    echo
    echo "**Noisy machine:** the $(nproc) cores were shared with other engineers' builds and tests running at the same time" \
      "(1/5/15-min load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end; the tsv has the 1-min load at every point)." \
      "The two systems ran alternating point by point in one run, so both saw the same kind of noise, but single points can be off by a lot."
    echo
    echo "Disk fsync latency (single thread, dd bs=4k count=$probe_count oflag=dsync on the data dirs' filesystem): **$fsync_ms ms per fsync**" \
      "($fsync_rate syncs/s) before the run, $fsync_ms_end ms ($fsync_rate_end syncs/s) after."
    echo
    if has_server kiln; then
      echo "- Kiln: ${version[kiln]:-?} (commit $kiln_rev): 3 voters (\`kiln serve --node-id N --raft-listen ... --peers 1=...,2=...,3=... --cluster-id ...\`), durability sync" \
        "(the leader acknowledges a commit once a majority has the entry fsynced; followers fsync before acknowledging), default --election-timeout 500ms${kiln_flags:+, extra flags: $kiln_flags}; sysbench connects to the leader." \
        "$(has_section logonly && echo "Section 3 instead: 2 voters + 1 log-only voter (see there).")"
    fi
    if has_server mariadb; then
      echo "- MariaDB: ${version[mariadb]:-?}, primary + 1 replica from bench/mariadb-primary.cnf (log_bin, ROW, gtid_strict_mode), GTID replication (MASTER_USE_GTID=slave_pos)." \
        "Primary: ${notes[mariadb_cfg]:-?}. Replica: ${notes[mariadb_replica_cfg]:-?}." \
        "With AFTER_SYNC the primary acknowledges a commit once the replica has received its events (the replica acknowledges after writing them to its relay log, which it does not fsync per event)."
    fi
    echo
    echo "Command: \`$cmdline\`"
    echo
    echo "A point fails if sysbench aborts, or (MariaDB) Rpl_semi_sync_master_status is not ON afterwards or Rpl_semi_sync_master_no_tx grew during it." \
      "The target is Kiln TPS >= 1.5x MariaDB's."
    if has_section plain; then
      echo
      echo "### 1. Loopback, no added delay"
      echo
      echo "Disk fsync: $fsync_ms ms."
      echo
      if [[ " $done_sections " == *" plain "* || -n $fatal_msg ]]; then section_table plain; else echo "not run"; fi
    fi
    if has_section delay; then
      echo
      echo "### 2. ${delay_ms} ms added one way between nodes (tools/delayproxy)"
      echo
      if delay_on; then
        echo "Disk fsync: $fsync_ms ms. Kiln: a new 3-node cluster whose --peers name a delay proxy in front of each node's raft port" \
          "(every raft message between nodes crosses one proxy: +$delay_ms ms each way; the leader replicates to 2 followers, so its proxies carry twice MariaDB's replication traffic)." \
          "MariaDB: the replica's IO thread connects to the primary through a delay proxy (events and semi-sync acks: +$delay_ms ms each way)." \
          "Clients reach the leader / primary directly. The proxies use CPU on the same cores."
        echo
        if [[ " $done_sections " == *" delay "* || -n $fatal_msg ]]; then section_table delay; else echo "not run"; fi
      else
        echo "skipped (DELAY_MS=0)"
      fi
    fi
    if has_section logonly; then
      echo
      echo "### 3. 2 voters + 1 log-only voter"
      echo
      echo "Disk fsync: $fsync_ms ms. Kiln: a new cluster of 2 full voters (nodes 1, 2) and 1 log-only voter (node 3): every node gets the same" \
        "--peers and \`--log-only-ids 3\`, node 3 also \`--log-only\` (it keeps, fsyncs and acknowledges the raft log and votes, but holds no data" \
        "and serves no MySQL port). The leader still needs one other member's fsynced acknowledgement per commit: the other full voter's or node 3's." \
        "Loopback, no added delay. MariaDB: the same primary + semi-sync replica as in section 1, on the direct route."
      echo
      if [[ " $done_sections " == *" logonly "* || -n $fatal_msg ]]; then section_table logonly; else echo "not run"; fi
      [[ -n ${notes[logonly/check]:-} ]] && echo && echo "Log-only node after the section (load stopped): ${notes[logonly/check]}"
    fi
    if has_section failover; then
      echo
      echo "### 4. Failover: kill -9 the leader, $kills times"
      echo
      if has_server kiln && [[ ${#fo_times[@]} -gt 0 ]]; then
        echo "Load: tools/failoverprobe, 2 connections each INSERTing one row into the leader every 10 ms (connections select no database in" \
          "the handshake: see below), /primary polled every 20 ms on every node, a failed INSERT retried every 20 ms on the node then answering /primary 200." \
          "Write outage = from just before kill -9 of the leader to the first INSERT acknowledged by another node." \
          "Each killed node is restarted on its data dir and must answer GET /replica 200 before the next kill ($settle s later). Nearest-rank percentiles over ${#fo_times[@]} kills (with 20 kills p99 is the maximum)."
        echo
        echo "| Kiln (3 voters, --election-timeout 500ms) | p50 ms | p99 ms | max ms |"
        echo "|---|---:|---:|---:|"
        echo "| write outage (kill -9 to first acknowledged INSERT on the new leader) | $(pct 50 "${fo_times[@]}") | $(pct 99 "${fo_times[@]}") | $(pct 100 "${fo_times[@]}") |"
        echo "| kill -9 to a new leader answering /primary 200 | $(pct 50 "${fo_elect[@]}") | $(pct 99 "${fo_elect[@]}") | $(pct 100 "${fo_elect[@]}") |"
        echo "| restart of the killed node to /replica 200 | $(pct 50 "${fo_rejoin[@]}") | $(pct 99 "${fo_rejoin[@]}") | $(pct 100 "${fo_rejoin[@]}") |"
        echo
        echo "Every outage (ms): ${fo_times[*]}."
        echo
        echo "Acknowledged writes: ${fo_summary:-no summary} (rows may exceed acknowledgements: an INSERT whose connection broke after it committed)."
        echo
        echo "Why the probe selects no database at connect: on a Kiln node whose catalog changed through the log (a follower, or a follower that" \
          "just became leader) and that has run no statement since, a database named in the handshake or in COM_INIT_DB is checked against the" \
          "stale in-memory catalog (it is reloaded only before a statement runs) and refused with 1049 Unknown database. Found while writing this" \
          "benchmark at commit 77a759b: a client that selects its database at connect (sysbench --mysql-db, Go's DSN /db) could not write to the" \
          "new leader at all until some other client ran a statement there. \`failoverprobe --handshake-db\` shows it."
        [[ -n $fo_note ]] && echo && echo "**Probe failed:** $fo_note"
      elif has_server kiln; then
        echo "not run"
      fi
      echo
      echo "MariaDB: no automatic failover (needs external tooling, e.g. MaxScale or orchestrator); not measured."
    fi
    if [[ -n $fatal_msg ]]; then
      echo
      echo "**RUN ABORTED:** $fatal_msg"
    fi
    if [[ $failures -ne 0 ]]; then
      echo
      echo "**$failures check(s) failed** (see the status columns and notes; sysbench logs: cluster.failed.*.log)."
    fi
  } >"$md"
}

# --- the run ------------------------------------------------------------------------
need_sysbench_sections=""
for sec in plain delay logonly; do
  has_section "$sec" || continue
  [[ $sec == delay ]] && ! delay_on && continue
  need_sysbench_sections+=" $sec"
done

if has_server mariadb && [[ -n $need_sysbench_sections ]]; then
  start_mariadb
fi

for sec in $need_sysbench_sections; do
  if has_server kiln; then
    case $sec in
      delay) start_cluster delay 1 ;;
      logonly) start_cluster logonly 0 3 ;;
      *) start_cluster "$sec" 0 ;;
    esac
    cur_cluster=$sec
    cur_leader=$(leader "$sec") || fail "kiln $sec: no leader within 30 s ($(cluster_roles "$sec"))"
    version[kiln]=$(mq "$(kiln_port "$sec" "$cur_leader")" -e 'SELECT VERSION()')
    log "kiln $sec: leader node $cur_leader (mysql port $(kiln_port "$sec" "$cur_leader"))"
  fi
  if has_server mariadb; then
    if [[ $sec == delay ]]; then mariadb_route proxy; else mariadb_route direct; fi
  fi
  sysbench_section "$sec"
  if has_server kiln; then
    [[ $sec == logonly ]] && logonly_check logonly 3 # stops the cluster too
    stop_cluster "$sec"
  fi
done

if has_server mariadb && [[ -n $need_sysbench_sections ]]; then
  for d in "$mr_dir" "$mp_dir"; do "$repo/scripts/mariadb.sh" stop "$d" || true; done
fi

if has_section failover; then
  if has_server kiln; then
    failover_section
  fi
  tsv_row failover - - mariadb "not supported" - - - - - - - - - - - - "no automatic failover (needs external tooling)"
fi

read -r fsync_rate_end fsync_ms_end <<<"$(fsync_probe)"
log "fsync after the run: $fsync_rate_end syncs/s, $fsync_ms_end ms per sync"
write_report
cat "$out/cluster.md"
log "results in $out/cluster.md and $tsv"
[[ $failures -eq 0 ]]
