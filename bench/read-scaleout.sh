#!/usr/bin/env bash
# Reads on a cluster (issue 10): sysbench oltp_point_select against the leader alone vs spread over
# the leader and the followers (and a learner), under kiln_read_concern = local and linearizable,
# on one local 3-voter cluster.
#
#   bench/read-scaleout.sh                                  # needs bin/kiln (make build), sysbench 1.0.20
#   DURATION=3 THREADS=12 ROUNDS=1 bench/read-scaleout.sh  # smoke run
#
# Three `kiln serve` voters on 127.0.0.1 (bench/cluster-lib.sh: free ports, data under a temporary
# dir in $TMPDIR, durability sync) and, with LEARNER=1 (the default), a fourth node added with
# `kiln cluster add --learner` and started with --join. One sysbench table of $TABLE_SIZE rows
# (default 10000) prepared through the leader; every node has applied it before the runs.
# oltp_point_select is one primary-key SELECT per event, text protocol (--db-ps-mode=disable), so
# its latency percentiles are per query. Placements ($PLACEMENTS):
#   leader     all $THREADS client threads on the leader
#   follower   all on one follower (what a read costs where it is not the leader's)
#   spread     the threads split evenly over the leader and the two followers, one sysbench each
#   spread4    the same over the leader, the two followers and the learner (LEARNER=1)
# each under every read concern in $CONCERNS (default "local linearizable"), set with
# SET GLOBAL kiln_read_concern on every node before the run (new sessions take the global value;
# sysbench opens its connections after it). Each (placement, concern) point runs $ROUNDS times
# (default 3) for $DURATION s (default 10); the rounds interleave (round 1 of every point, then
# round 2, ...) so that a drift in the machine's load hits all points alike. Reported per point,
# as medians over the rounds: total QPS; p99 latency (ms, the highest of the run's sysbench
# processes); server CPU per query over the whole cluster (utime+stime of every kiln process,
# /proc/PID/stat, divided by all queries answered) and the leader's alone per query answered
# anywhere (what reads on the other nodes still cost the leader); per node, the CPU per query it
# answered and its CPU use in % of one core (a node that answers nothing still spends CPU:
# heartbeats, and for linearizable reads the read-index rounds). The disk's fsync latency
# (scripts/lib.sh fsync_rate; reads do not fsync, it is printed for comparison with the other
# benchmarks) and the load average are printed before and after.
#
# Writes $OUT/read-scaleout.md and $OUT/read-scaleout.tsv (OUT defaults to bench/results). Exits
# non-zero if a node fails to start or dies, sysbench fails, or a read fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
export KILN_BIN=${KILN_BIN:-$repo/bin/kiln}
# shellcheck source=bench/cluster-lib.sh
. "$here/cluster-lib.sh"

duration=${DURATION:-10}
threads_list=${THREADS:-12}
rounds=${ROUNDS:-3}
table_size=${TABLE_SIZE:-10000}
learner=${LEARNER:-1}
concerns=${CONCERNS:-local linearizable}
placements=${PLACEMENTS:-leader follower spread spread4}
probe_count=${FSYNC_PROBE_COUNT:-500}
out=${OUT:-$repo/bench/results}
[[ -x $KILN_BIN ]] || die "$KILN_BIN not built: make build"
command -v sysbench >/dev/null || die "sysbench not installed: apt-get install -y sysbench"
if [[ $learner != 1 ]]; then placements=${placements//spread4/}; fi
mkdir -p "$out"
hz=$(getconf CLK_TCK)

work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-read-scaleout.XXXXXX")
cleanup() {
  cluster_stop
  if [[ ${KEEP:-0} == 1 ]]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# --- the cluster ------------------------------------------------------------------------------
cluster_start "$work" 3 kiln-bench-reads
[[ $learner != 1 ]] || cluster_add_learner 4
lport=$(cluster_port "$cl_leader")
followers=()
for i in 1 2 3; do [[ $i == "$cl_leader" ]] || followers+=("$i"); done
# role[ID]: the column a node's figures go in.
declare -A role=([$cl_leader]=leader [${followers[0]}]=follower_a [${followers[1]}]=follower_b)
roles="leader follower_a follower_b"
if [[ $learner == 1 ]]; then role[4]=learner roles+=" learner"; fi

mq "$lport" -e 'CREATE DATABASE sbtest'
sb=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-password= --mysql-db=sbtest
  --tables=1 "--table-size=$table_size" --db-ps-mode=disable --percentile=99)
sysbench oltp_point_select "${sb[@]}" "--mysql-port=$lport" prepare >"$work/prepare.log" 2>&1 ||
  { tail "$work/prepare.log" >&2; die "prepare failed"; }
# Every node has applied the table before any read: wait for the leader's executed set everywhere.
gtids=$(mq "$lport" -e 'SELECT @@gtid_executed')
for i in "${cl_nodes[@]}"; do
  r=$(mq "$(cluster_port "$i")" -e "SELECT WAIT_FOR_EXECUTED_GTID_SET('$gtids', 60)")
  [[ $r == 0 ]] || die "node $i did not apply $gtids within 60 s"
done

# nodes_of PLACEMENT prints the node ids its sysbench processes connect to.
nodes_of() {
  case $1 in
    leader) echo "$cl_leader" ;;
    follower) echo "${followers[0]}" ;;
    spread) echo "$cl_leader ${followers[*]}" ;;
    spread4) echo "$cl_leader ${followers[*]} 4" ;;
    *) die "unknown placement $1" ;;
  esac
}

tsv=$out/read-scaleout.tsv
printf 'threads\tplacement\tconcern\tround\tnode\trole\tclient_threads\tqueries\tqps\tp99_ms\tcpu_ms\tload\n' >"$tsv"
declare -A qps p99 cpuq leadq nodeq nodepct

# run T PLACEMENT CONCERN ROUND [record]: one sysbench process per node of the placement, all at
# once, with T threads split over them; unless the fifth argument is "warmup", the figures are kept.
run() {
  local t=$1 pl=$2 rc=$3 r=$4 keep=${5:-record} ids k j i n logf sum_q=0 sum_qps=0 worst=0 \
    total_ticks=0 lead_ticks=0 q qs p ticks ld key=$1/$2/$3
  read -r -a ids <<<"$(nodes_of "$pl")"
  k=${#ids[@]}
  cluster_alive
  for i in "${cl_nodes[@]}"; do mq "$(cluster_port "$i")" -e "SET GLOBAL kiln_read_concern = '$rc'"; done
  declare -A before=() nthreads=() spids=()
  for i in "${cl_nodes[@]}"; do before[$i]=$(proc_cpu_ticks "$(cat "${cl_dir[i]}/pid")"); done
  for ((j = 0; j < k; j++)); do
    i=${ids[j]}
    n=$((t / k + (j < t % k ? 1 : 0)))
    ((n > 0)) || continue
    nthreads[$i]=$n
    logf=$work/run.$t.$pl.$rc.$r.n$i.log
    timeout $((duration + 120)) sysbench oltp_point_select "${sb[@]}" "--mysql-port=$(cluster_port "$i")" \
      --threads="$n" --time="$duration" --report-interval=0 run >"$logf" 2>&1 &
    spids[$i]=$!
  done
  for i in "${!spids[@]}"; do
    logf=$work/run.$t.$pl.$rc.$r.n$i.log
    wait "${spids[$i]}" || { tail "$logf" >&2; die "sysbench failed ($pl, $rc, node $i)"; }
    ! grep -q FATAL "$logf" || { grep -m 3 FATAL "$logf" >&2; die "sysbench FATAL ($pl, $rc, node $i)"; }
  done
  ld=$(cut -d' ' -f1 /proc/loadavg)
  [[ $keep == record ]] || return 0
  for i in "${cl_nodes[@]}"; do
    ticks=$(($(proc_cpu_ticks "$(cat "${cl_dir[i]}/pid")") - before[$i]))
    total_ticks=$((total_ticks + ticks))
    [[ $i != "$cl_leader" ]] || lead_ticks=$ticks
    q=0 qs=0 p=-
    if [[ -n ${spids[$i]:-} ]]; then
      logf=$work/run.$t.$pl.$rc.$r.n$i.log
      q=$(sed -nE '/^ *queries: /{s/^ *queries: +([0-9]+) +\(.*/\1/p;q}' "$logf")
      qs=$(sed -nE '/^ *queries: /{s/.*\(([0-9.]+) per sec.*/\1/p;q}' "$logf")
      p=$(sed -nE '/99th percentile:/{s/.*: +([0-9.]+).*/\1/p;q}' "$logf")
      [[ -n $q && -n $qs && -n $p ]] || { tail "$logf" >&2; die "no figures in $logf"; }
      sum_q=$((sum_q + q))
      sum_qps=$(awk -v a="$sum_qps" -v b="$qs" 'BEGIN { printf "%.2f", a + b }')
      worst=$(awk -v a="$worst" -v b="$p" 'BEGIN { print (b + 0 > a + 0) ? b : a }')
      nodeq[$key/${role[$i]}]+=" $(awk -v c="$ticks" -v hz="$hz" -v q="$q" 'BEGIN { printf "%.1f", c * 1e6 / hz / q }')"
    fi
    nodepct[$key/${role[$i]}]+=" $(awk -v c="$ticks" -v hz="$hz" -v d="$duration" 'BEGIN { printf "%.0f", c * 100 / hz / d }')"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$pl" "$rc" "$r" "$i" "${role[$i]}" \
      "${nthreads[$i]:-0}" "$q" "$qs" "$p" "$((ticks * 1000 / hz))" "$ld" >>"$tsv"
  done
  ((sum_q > 0)) || die "no queries answered ($pl, $rc)"
  qps[$key]+=" $sum_qps"
  p99[$key]+=" $worst"
  cpuq[$key]+=" $(awk -v c="$total_ticks" -v hz="$hz" -v q="$sum_q" 'BEGIN { printf "%.1f", c * 1e6 / hz / q }')"
  leadq[$key]+=" $(awk -v c="$lead_ticks" -v hz="$hz" -v q="$sum_q" 'BEGIN { printf "%.1f", c * 1e6 / hz / q }')"
  log "threads=$t $pl $rc round $r: $sum_qps qps, p99 $worst ms, cluster CPU $(awk -v c="$total_ticks" -v hz="$hz" -v q="$sum_q" 'BEGIN { printf "%.1f", c * 1e6 / hz / q }') us/query (load $ld)"
}

read -r fsync_before load_before <<<"$(conditions "$work" "$probe_count")"
log "fsync ${fsync_before} ms per 4 KiB O_DSYNC write, load $load_before"
# Warm-up: every node's cache and connections, not recorded.
warm=spread
if [[ $learner == 1 ]]; then warm=spread4; fi
run "${threads_list%% *}" "$warm" local 0 warmup
for ((r = 1; r <= rounds; r++)); do
  for t in $threads_list; do
    for pl in $placements; do
      for rc in $concerns; do
        run "$t" "$pl" "$rc" "$r"
      done
    done
  done
done
for i in "${cl_nodes[@]}"; do mq "$(cluster_port "$i")" -e "SET GLOBAL kiln_read_concern = 'local'"; done
read -r fsync_after load_after <<<"$(conditions "$work" "$probe_count")"

md=$out/read-scaleout.md
{
  echo "# Reads on a cluster: oltp_point_select on the leader vs spread over the nodes"
  echo
  echo "bench/read-scaleout.sh: DURATION=$duration THREADS=\"$threads_list\" ROUNDS=$rounds TABLE_SIZE=$table_size LEARNER=$learner, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs shared by every node and sysbench."
  echo "3 voters (leader node $cl_leader)$([[ $learner != 1 ]] || echo ' + 1 learner'); sysbench oltp_point_select, text protocol, 1 table; medians over the rounds."
  echo "fsync (4 KiB O_DSYNC write): ${fsync_before} ms before, ${fsync_after} ms after; load ${load_before} before, ${load_after} after."
  echo "Cluster and leader CPU: microseconds of CPU (all kiln processes; the leader's alone) per query answered anywhere in the cluster."
  echo "Per node: server CPU in microseconds per query that node answered, then its CPU use in % of one core (\"-\" where it answered none)."
  echo
  hdr="| threads | placement | read concern | QPS | p99 ms | cluster CPU us/query | leader CPU us/query |"
  sep="|---|---|---|---|---|---|---|"
  for ro in $roles; do hdr+=" $ro us/q (cpu %) |"; sep+="---|"; done
  echo "$hdr"
  echo "$sep"
  for t in $threads_list; do
    for pl in $placements; do
      for rc in $concerns; do
        key=$t/$pl/$rc
        row="| $t | $pl | $rc | $(median <<<"${qps[$key]}") | $(median <<<"${p99[$key]}") | $(median <<<"${cpuq[$key]}") | $(median <<<"${leadq[$key]}") |"
        for ro in $roles; do
          row+=" $(median <<<"${nodeq[$key/$ro]:-}") ($(median <<<"${nodepct[$key/$ro]:-}")) |"
        done
        echo "$row"
      done
    done
  done
} >"$md"
cat "$md"
log "wrote $md and $tsv"
