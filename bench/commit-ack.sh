#!/usr/bin/env bash
# The cost of kiln_commit_ack = applied against durable (the default), in one run on one 3-voter
# cluster (issue 10).
#
#   bench/commit-ack.sh                          # needs bin/kiln (make build) and sysbench 1.0.20
#   DURATION=3 THREADS="1 8" ROUNDS=1 bench/commit-ack.sh   # smoke run
#
# Three `kiln serve` processes on 127.0.0.1 (free ports, data under a temporary dir in $TMPDIR),
# --node-id 1..3 with one --peers and --cluster-id, durability sync. sysbench oltp_insert (single-row
# INSERTs, autocommit: one commit each) against the leader, 1 table, --db-ps-mode=auto. At each of
# $THREADS, $ROUNDS rounds of $DURATION s per level, the two levels alternating (durable, applied,
# durable, ...) so that a drift in the machine's load hits both; the level is switched with
# SET GLOBAL kiln_commit_ack on the leader, which every new sysbench connection starts with. For
# each point: median TPS, median average and p99 latency (ms) over the rounds, and applied's cost
# as (applied - durable) average latency in microseconds and as a TPS ratio. Before and after the
# run the disk's fsync latency (single-threaded dd of $FSYNC_PROBE_COUNT 4 KiB O_DSYNC writes on the
# data dir's filesystem, scripts/lib.sh fsync_rate) and the 1-minute load average are printed: a
# commit costs at least one fsync on the leader and one on a follower, in parallel.
#
# Writes $OUT/commit-ack.md and $OUT/commit-ack.tsv (OUT defaults to bench/results). Exits
# non-zero if a node fails to start or dies, or sysbench fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

duration=${DURATION:-10}
threads_list=${THREADS:-1 4 16 64}
rounds=${ROUNDS:-3}
probe_count=${FSYNC_PROBE_COUNT:-500}
out=${OUT:-$repo/bench/results}
export KILN_BIN=${KILN_BIN:-$repo/bin/kiln}
[[ -x $KILN_BIN ]] || die "$KILN_BIN not built: make build"
command -v sysbench >/dev/null || die "sysbench not installed: apt-get install -y sysbench"
mkdir -p "$out"

work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-commit-ack.XXXXXX")
# shellcheck source=bench/cluster-lib.sh
. "$here/cluster-lib.sh"
cleanup() {
  cluster_stop
  if [[ ${KEEP:-0} == 1 ]]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# --- the cluster ------------------------------------------------------------------------------
cluster_start "$work" 3 kiln-bench-ack
lport=$(cluster_port "$cl_leader")

mq "$lport" -e 'CREATE DATABASE sbtest'
sb=(--db-driver=mysql --mysql-host=127.0.0.1 "--mysql-port=$lport" --mysql-user=root --mysql-password=
  --mysql-db=sbtest --tables=1 --table-size=1000 --db-ps-mode=auto --percentile=99)
sysbench oltp_insert "${sb[@]}" prepare >"$work/prepare.log" 2>&1 || { tail "$work/prepare.log" >&2; die "prepare failed"; }

read -r fsync_before load_before <<<"$(conditions "$work" "$probe_count")"
log "fsync ${fsync_before} ms per 4 KiB O_DSYNC write, load $load_before"

tsv=$out/commit-ack.tsv
printf 'threads\tlevel\tround\ttps\tavg_ms\tp99_ms\tload\n' >"$tsv"
declare -A tps avg p99
for t in $threads_list; do
  for ((r = 1; r <= rounds; r++)); do
    for level in durable applied; do
      cluster_alive
      mq "$lport" -e "SET GLOBAL kiln_commit_ack = '$level'"
      logf=$work/run.$t.$level.$r.log
      timeout $((duration + 120)) sysbench oltp_insert "${sb[@]}" --threads="$t" --time="$duration" \
        --report-interval=0 run >"$logf" 2>&1 || { tail "$logf" >&2; die "sysbench failed ($level, $t threads)"; }
      ! grep -q FATAL "$logf" || { grep -m 3 FATAL "$logf" >&2; die "sysbench FATAL ($level, $t threads)"; }
      x=$(sed -nE '/^ *transactions: /{s/^ *transactions: +[0-9]+ +\(([0-9.]+) per sec.*/\1/p;q}' "$logf")
      a=$(sed -nE '/^ *avg: /{s/.*: +([0-9.]+).*/\1/p;q}' "$logf")
      p=$(sed -nE '/99th percentile:/{s/.*: +([0-9.]+).*/\1/p;q}' "$logf")
      ld=$(cut -d' ' -f1 /proc/loadavg)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$level" "$r" "${x:--}" "${a:--}" "${p:--}" "$ld" >>"$tsv"
      tps[$t/$level]+=" ${x:--}"
      avg[$t/$level]+=" ${a:--}"
      p99[$t/$level]+=" ${p:--}"
      log "threads=$t $level round $r: tps ${x:--} avg ${a:--} ms p99 ${p:--} ms (load $ld)"
    done
  done
done
mq "$lport" -e "SET GLOBAL kiln_commit_ack = 'durable'"
read -r fsync_after load_after <<<"$(conditions "$work" "$probe_count")"

md=$out/commit-ack.md
{
  echo "# kiln_commit_ack: durable vs applied (3 voters, one machine)"
  echo
  echo "bench/commit-ack.sh: DURATION=$duration THREADS=\"$threads_list\" ROUNDS=$rounds, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs."
  echo "sysbench oltp_insert (single-row autocommit INSERTs) against the leader; medians over the rounds."
  echo "fsync (4 KiB O_DSYNC write): ${fsync_before} ms before, ${fsync_after} ms after; load ${load_before} before, ${load_after} after."
  echo
  echo "| threads | durable TPS | applied TPS | TPS ratio | durable avg ms | applied avg ms | added avg us | durable p99 ms | applied p99 ms |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for t in $threads_list; do
    dt=$(median <<<"${tps[$t/durable]}") at=$(median <<<"${tps[$t/applied]}")
    da=$(median <<<"${avg[$t/durable]}") aa=$(median <<<"${avg[$t/applied]}")
    dp=$(median <<<"${p99[$t/durable]}") ap=$(median <<<"${p99[$t/applied]}")
    ratio=$(awk -v a="$at" -v d="$dt" 'BEGIN { if (a + 0 > 0 && d + 0 > 0) printf "%.2f", a / d; else printf "-" }')
    added=$(awk -v a="$aa" -v d="$da" 'BEGIN { if (a + 0 > 0 && d + 0 > 0) printf "%.0f", (a - d) * 1000; else printf "-" }')
    echo "| $t | $dt | $at | $ratio | $da | $aa | $added | $dp | $ap |"
  done
} >"$md"
cat "$md"
log "wrote $md and $tsv"
