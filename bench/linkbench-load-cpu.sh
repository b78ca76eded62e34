#!/usr/bin/env bash
# Server CPU per loaded row of LinkBench's load, Kiln alone, binaries alternating:
#
#   BINS="main=/tmp/kiln-a new=/tmp/kiln-b" RUNS=3 bench/linkbench-load-cpu.sh
#
# For each run and binary: a fresh server (scripts/kiln.sh start in a temporary directory), then
# `kiln bench linkbench --nodes $NODES --seed 1 --load-threads 4 --duration 0 --skip-check` (the
# JDBC-mode load: 1,024-row INSERTs), the server's utime+stime from /proc/PID/stat around the load,
# and again $SETTLE seconds after it (compactions finishing). Prints one line per run: us per loaded
# row during the load and settled, the load's wall time and the data directory's size.
#
# Environment: BINS (name=path pairs; default "kiln=bin/kiln"), RUNS (3), NODES (150000), SETTLE (15),
# CLIENT (the kiln binary that drives the load; bin/kiln).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

bins=${BINS:-kiln=$repo/bin/kiln}
runs=${RUNS:-3}
nodes=${NODES:-150000}
settle=${SETTLE:-15}
client=${CLIENT:-$repo/bin/kiln}
tck=$(getconf CLK_TCK)
work=$(mktemp -d /tmp/kiln-lbload.XXXXXX)
trap 'rm -rf "$work"' EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

one() {
  local name=$1 bin=$2 run=$3 d port pid c0 c1 c2 t0 t1 rows
  d=$work/$name-$run
  port=$(KILN_BIN=$bin "$repo/scripts/kiln.sh" start "$d" 2>/dev/null | tail -n 1)
  pid=$(cat "$d/pid")
  c0=$(cpu_ticks "$pid")
  t0=$(date +%s.%N)
  "$client" bench linkbench --addr "127.0.0.1:$port" --nodes "$nodes" --seed 1 --load-threads 4 \
    --duration 0 --skip-check --json >"$d/load.json" 2>"$d/load.err"
  t1=$(date +%s.%N)
  c1=$(cpu_ticks "$pid")
  sleep "$settle"
  c2=$(cpu_ticks "$pid")
  rows=$(python3 -c "import json,sys; print(sum(t['rows'] for t in json.load(open(sys.argv[1]))['load']['tables']))" "$d/load.json")
  python3 - "$name" "$run" "$rows" "$c0" "$c1" "$c2" "$tck" "$t0" "$t1" "$(du -sm "$d/data" | cut -f1)" <<'PY'
import sys
name, run, rows, c0, c1, c2, tck, t0, t1, mb = sys.argv[1:]
rows, tck = int(rows), int(tck)
us = lambda a, b: (float(b) - float(a)) / tck * 1e6 / rows
print(f"{name}\trun {run}\trows {rows}\tus/row {us(c0, c1):.2f}\tsettled {us(c0, c2):.2f}\twall {float(t1) - float(t0):.2f} s\tdata {mb} MB")
PY
  KILN_BIN=$bin "$repo/scripts/kiln.sh" stop "$d" >/dev/null 2>&1 || true
  rm -rf "$d"
}

for ((r = 1; r <= runs; r++)); do
  for pair in $bins; do
    one "${pair%%=*}" "${pair#*=}" "$r"
  done
done
