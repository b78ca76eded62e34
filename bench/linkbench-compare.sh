#!/usr/bin/env bash
# LinkBench (kiln bench linkbench), Kiln against MariaDB, one server after the other.
#
#   bench/linkbench-compare.sh
#   NODES=5000 DURATION=10s bench/linkbench-compare.sh        # smoke run
#
# For each server in $SERVERS (MariaDB first, then Kiln; never both at once):
# starts it on a temporary data dir (under $TMPDIR, default /tmp) and a free
# port (scripts/mariadb.sh with bench/mariadb-primary.cnf: log_bin,
# sync_binlog=1, innodb_flush_log_at_trx_commit=1; scripts/kiln.sh with
# $KILN_BIN, default bin/kiln, durability sync), then runs, with the same
# flags on both:
#   1. load     kiln bench linkbench --nodes $NODES --load-threads $LOAD_THREADS
#               --duration 0 --skip-check; the server's CPU time is read
#               around this step too (server CPU us per loaded row)
#   2. requests kiln bench linkbench --skip-load --threads $THREADS
#               --duration $DURATION --skip-check; the server's CPU time
#               (utime+stime from /proc) is read around this step
#   3. check    kiln bench linkbench --skip-load --duration 0
# and stops the server (its data dir is removed unless KEEP=1).
#
# Writes $OUT/linkbench.md (the side-by-side table for docs/benchmarks.md)
# and $OUT/linkbench.SERVER.{load,requests,check}.json; OUT defaults to
# bench/results. Exits non-zero if a server fails to start, a step fails
# (operation errors, or the counttable check finds a mismatch).
#
# Environment: NODES (100000), THREADS (4), LOAD_THREADS (4), DURATION
# (60s), SEED (1), SERVERS ("mariadb kiln"), OUT, KEEP=1, KILN_FLAGS
# (extra `kiln serve` flags), LINKBENCH_FLAGS (extra flags for every step,
# e.g. --jdbc=false for the older Go workload).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

nodes=${NODES:-100000}
threads=${THREADS:-4}
load_threads=${LOAD_THREADS:-4}
duration=${DURATION:-60s}
seed=${SEED:-1}
servers=${SERVERS:-mariadb kiln}
out=${OUT:-$here/results}
bin=${KILN_BIN:-$repo/bin/kiln}
read -r -a extra <<<"${LINKBENCH_FLAGS:-}"
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-linkbench.XXXXXX")
clk_tck=$(getconf CLK_TCK)

[[ -x $bin ]] || die "$bin not found: make build"
for s in $servers; do
  [[ $s == kiln || $s == mariadb ]] || die "unknown server $s"
done

cleanup() {
  # shellcheck disable=SC2086 # servers is a list
  bench_cleanup "$work" $servers
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

failures=0
declare -A cpu loadcpu
for s in $servers; do
  log "=== $s"
  port=$("$repo/scripts/$s.sh" start "$work/$s") || die "$s did not start"
  pid=$(cat "$work/$s/pid")
  common=(--addr "127.0.0.1:$port" --nodes "$nodes" --seed "$seed" "${extra[@]}")
  l0=$(proc_cpu_ticks "$pid")
  if ! "$bin" bench linkbench "${common[@]}" --load-threads "$load_threads" --duration 0 --skip-check --json \
    >"$out/linkbench.$s.load.json"; then
    log "FAIL $s: load"
    failures=$((failures + 1))
  fi
  l1=$(proc_cpu_ticks "$pid")
  loadcpu[$s]=$(awk -v t=$((l1 - l0)) -v hz="$clk_tck" 'BEGIN { printf "%.2f", t / hz }')
  c0=$(proc_cpu_ticks "$pid")
  if ! "$bin" bench linkbench "${common[@]}" --skip-load --threads "$threads" --duration "$duration" --skip-check --json \
    >"$out/linkbench.$s.requests.json"; then
    log "FAIL $s: requests"
    failures=$((failures + 1))
  fi
  c1=$(proc_cpu_ticks "$pid")
  cpu[$s]=$(awk -v t=$((c1 - c0)) -v hz="$clk_tck" 'BEGIN { printf "%.2f", t / hz }')
  if ! "$bin" bench linkbench "${common[@]}" --skip-load --duration 0 --json >"$out/linkbench.$s.check.json"; then
    log "FAIL $s: check"
    failures=$((failures + 1))
  fi
  "$repo/scripts/$s.sh" stop "$work/$s" || die "$s did not stop"
  if [[ ${KEEP:-0} != 1 ]]; then rm -rf "$work/$s/data"; fi
done

# The server CPU seconds of each step, for bench/report.py (make bench).
printf 'server\tload_cpu_s\trequest_cpu_s\n' >"$out/linkbench.cpu.tsv"
for s in $servers; do printf '%s\t%s\t%s\n' "$s" "${loadcpu[$s]:-}" "${cpu[$s]:-}" >>"$out/linkbench.cpu.tsv"; done

# The table: one column per server, in $SERVERS order.
md=$out/linkbench.md
cpu_args=()
for s in $servers; do cpu_args+=("$s=${cpu[$s]}:${loadcpu[$s]}"); done
{
  echo "## LinkBench: ${servers// / vs }"
  echo
  echo "$(date -u '+%F %H:%M UTC'); $(nproc) cores, kernel $(uname -r); client on the same machine; servers run one after the other."
  echo
  echo "Command: \`NODES=$nodes THREADS=$threads LOAD_THREADS=$load_threads DURATION=$duration SEED=$seed${LINKBENCH_FLAGS:+ LINKBENCH_FLAGS=\"$LINKBENCH_FLAGS\"} bench/linkbench-compare.sh\`"
  echo
  "$PYTHON" - "$out" "${cpu_args[@]}" <<'EOF'
import json, sys

out = sys.argv[1]
servers = [a.split("=", 1)[0] for a in sys.argv[2:]]
cpu = {a.split("=", 1)[0]: float(a.split("=", 1)[1].split(":")[0] or 0) for a in sys.argv[2:]}
loadcpu = {a.split("=", 1)[0]: float(a.split("=", 1)[1].split(":")[1] or 0) for a in sys.argv[2:]}


def load(s, step):
    try:
        with open(f"{out}/linkbench.{s}.{step}.json") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


docs = {s: {step: load(s, step) for step in ("load", "requests", "check")} for s in servers}
L = {s: docs[s]["load"].get("load") or {} for s in servers}
R = {s: docs[s]["requests"].get("request") or {} for s in servers}
C = {s: docs[s]["check"].get("check") for s in servers}
for s in servers:
    print(f"- {s}: {docs[s]['load'].get('server', '?')}")
print()
two = len(servers) == 2
num = (int, float)


def cells(vals, fmt):
    return [fmt.format(v) if isinstance(v, num) else "-" for v in vals]


def row(name, vals, fmt="{:,.0f}"):
    r = [name] + cells(vals, fmt)
    if two:
        a, b = vals
        r.append(f"{b / a:.2f}" if isinstance(a, num) and isinstance(b, num) and a else "-")
    print("| " + " | ".join(r) + " |")


print("| | " + " | ".join(servers) + (f" | {servers[1]}/{servers[0]} |" if two else " |"))
print("|---|" + "---:|" * (len(servers) + two))
for t in ("nodetable", "linktable", "counttable"):
    vals = []
    for s in servers:
        m = [x["rows_per_sec"] for x in L[s].get("tables", []) if x["table"] == t]
        vals.append(m[0] if m else None)
    row(f"load {t}, rows/s", vals)
row("links loaded per node", [L[s].get("links_per_node") for s in servers], "{:.2f}")


def loaded_rows(s):
    return sum(t["rows"] for t in L[s].get("tables", []))


row("server CPU us per row (load)",
    [loadcpu[s] * 1e6 / loaded_rows(s) if loaded_rows(s) else None for s in servers], "{:.1f}")
row("requests, ops/s", [R[s].get("ops_per_sec") for s in servers])
row("server CPU us per op (request phase)",
    [cpu[s] * 1e6 / R[s]["ops"] if R[s].get("ops") else None for s in servers], "{:.1f}")
row("operations failed", [R[s].get("errors") for s in servers], "{:d}")
row("deadlock / lock wait retries", [R[s].get("retries") for s in servers], "{:d}")
checks = []
for s in servers:
    c = C[s]
    checks.append("-" if not c else "OK" if c["mismatches"] == 0 else f"{c['mismatches']} mismatches")
print("| counttable check | " + " | ".join(checks) + (" | |" if two else " |"))
print()
print("Per operation (" + " / ".join(servers) + "), latency in ms:")
print()
print("| op | mix % | count | p50 | p95 | p99 | max |")
print("|---|---:|---|---|---|---|---|")
ops = [o["op"] for o in R[servers[0]].get("per_op", [])]
mix = {m["op"]: m["percent"] for m in R[servers[0]].get("mix", [])}
for op in ops:
    per = []
    for s in servers:
        m = [o for o in R[s].get("per_op", []) if o["op"] == op]
        per.append(m[0] if m else {})

    def col(k, fmt):
        return " / ".join(fmt.format(p[k]) if k in p else "-" for p in per)

    print(f"| {op} | {mix.get(op, 0):.2f} | {col('count', '{:,}')} | {col('p50_ms', '{:.2f}')} | "
          f"{col('p95_ms', '{:.2f}')} | {col('p99_ms', '{:.2f}')} | {col('max_ms', '{:.1f}')} |")
EOF
  if [[ $failures -ne 0 ]]; then
    echo
    echo "**$failures step(s) failed** (see the JSON files and the log)."
  fi
} >"$md"
cat "$md"
log "results in $md"
[[ $failures -eq 0 ]]
