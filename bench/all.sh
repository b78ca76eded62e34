#!/usr/bin/env bash
# Issue 12's benchmark in one run (`make bench`): Kiln against MariaDB side by side, medians of $REPS.
#
#   make bench                                   # the full run (about 2 hours on 2 cores)
#   REPS=1 DURATION=5 THREADS="1 16" NODES=5000 LB_DURATION=10s PIPE_DURATION=5 make bench   # smoke
#
# Steps, each a script of its own that can also run alone:
#   1. the disk's fsync rate (4 KiB O_DSYNC writes, one thread: scripts/lib.sh fsync_rate);
#   2. bench/sysbench-compare.sh once per --db-ps-mode in $PS_MODES (disable = the text protocol
#      most PHP/Python/Ruby applications send, auto = server-side prepared statements):
#      $WORKLOADS at $THREADS threads, $REPS runs per point alternating the servers; QPS, TPS,
#      server CPU per query, p99, RSS;
#   3. bench/commit-pipeline.sh: durable oltp_update_non_index and oltp_insert at 16 and 64 threads,
#      fsyncs per commit, commits per fsync group, TPS, p99, CPU per transaction, $REPS runs;
#   4. bench/linkbench-compare.sh $REPS times: load rows/s and request ops/s, server CPU per loaded
#      row and per request, the counttable check;
#   5. bench/report.py: $OUT/report.md (every figure, the medians, which of issue 12's targets are
#      met), $OUT/tps-vs-threads.png (TPS against threads, both servers, per workload and protocol),
#      and the same report spliced into docs/benchmarks.md between its "make bench" markers.
#
# Environment: OUT (bench/results/bench), REPS (3), DURATION (20: s per sysbench point), THREADS
# ("1 4 16 64"), WORKLOADS (oltp_point_select oltp_read_only oltp_read_write oltp_update_non_index),
# PS_MODES ("disable auto"), TABLE_SIZE (100000), PIPE_DURATION (20), NODES (100000), LB_DURATION
# (60s), STEPS ("fsync sysbench pipeline linkbench report"), DOCS (docs/benchmarks.md; empty: do
# not edit it). KILN_BIN (bin/kiln). Exits non-zero if a step fails; the report still gets written
# from whatever finished.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

out=${OUT:-$here/results/bench}
reps=${REPS:-3}
steps=${STEPS:-fsync sysbench pipeline linkbench report}
docs=${DOCS-$repo/docs/benchmarks.md}
export KILN_BIN=${KILN_BIN:-$repo/bin/kiln}
mkdir -p "$out"

"$PYTHON" -c 'import matplotlib' 2>/dev/null || {
  log "installing python3-matplotlib for the plot"
  if [[ $(id -u) == 0 ]]; then
    { apt-get install -y python3-matplotlib || { apt-get update && apt-get install -y python3-matplotlib; }; } >/dev/null
  else
    log "not root: no plot unless python3-matplotlib is installed"
  fi
}

failed=()
step() { [[ " $steps " == *" $1 "* ]]; }
probe() {
  local d r
  d=$(mktemp -d "${TMPDIR:-/tmp}/kiln-fsync.XXXXXX")
  r=$(fsync_rate "$d" 1000 || echo -)
  rm -rf "$d"
  printf '%s\t%s\t%s\n' "$1" "$(date -u +%FT%TZ)" "$r" >>"$out/fsync.tsv"
  log "fsync probe ($1): $r syncs/s"
}

{ cat /proc/loadavg; nproc; uname -r; } >"$out/machine.txt"
# The knobs this run used, for the report's "Reproduce" line.
for v in REPS DURATION THREADS WORKLOADS PS_MODES TABLE_SIZE PIPE_DURATION NODES LB_DURATION STEPS; do
  if [[ -n ${!v:-} ]]; then printf '%s="%s" ' "$v" "${!v}"; fi
done >"$out/command.txt"
if step fsync; then
  printf 'when\tat\tsyncs_per_s\n' >"$out/fsync.tsv"
  probe start
fi
if step sysbench; then
  for ps in ${PS_MODES:-disable auto}; do
    log "sysbench, --db-ps-mode=$ps"
    OUT=$out/sysbench-$ps PS_MODE=$ps REPS=$reps DURATION=${DURATION:-20} THREADS=${THREADS:-1 4 16 64} \
      WORKLOADS=${WORKLOADS:-oltp_point_select oltp_read_only oltp_read_write oltp_update_non_index} \
      TABLE_SIZE=${TABLE_SIZE:-100000} "$here/sysbench-compare.sh" || failed+=("sysbench-$ps")
    step fsync && probe "after sysbench $ps"
  done
fi
if step pipeline; then
  log "group commit"
  OUT=$out REPS=$reps DURATION=${PIPE_DURATION:-20} BINS="kiln=$KILN_BIN" "$here/commit-pipeline.sh" ||
    failed+=(pipeline)
  step fsync && probe "after group commit"
fi
if step linkbench; then
  for r in $(seq "$reps"); do
    log "linkbench, run $r"
    OUT=$out/linkbench-$r NODES=${NODES:-100000} DURATION=${LB_DURATION:-60s} "$here/linkbench-compare.sh" ||
      failed+=("linkbench-$r")
  done
  step fsync && probe "after linkbench"
fi
if step report; then
  "$PYTHON" "$here/report.py" "$out" ${docs:+--docs "$docs"} || failed+=(report)
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  die "failed: ${failed[*]} (the report shows what finished)"
fi
log "report: $out/report.md"
