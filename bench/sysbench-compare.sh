#!/usr/bin/env bash
# Kiln against MariaDB, side by side, in one run.
#
#   bench/sysbench-compare.sh
#
# Starts Kiln ($KILN_BIN, default bin/kiln, via scripts/kiln.sh; build it
# first with `make build`) and MariaDB (Debian's mariadb-server via
# scripts/mariadb.sh: log_bin, binlog_format=ROW, sync_binlog=1,
# innodb_flush_log_at_trx_commit=1, the reference cnf), each on a temporary
# data dir and free port. On each: prepares sbtest with $TABLES x $TABLE_SIZE
# rows, measures the server's RSS (VmRSS) after loading and with 64 client
# connections open, then runs sysbench 1.0.20 oltp_point_select,
# oltp_read_only, oltp_update_non_index, oltp_read_write and oltp_insert at
# 1, 4 and 16 threads for $DURATION s each, the two servers alternating point
# by point. For every point: QPS, and the server's CPU microseconds per query
# (utime+stime of the server process from /proc/PID/stat over the run,
# divided by the queries sysbench completed), and the Kiln/MariaDB ratios.
#
# Writes $OUT/latest.md (for the lead to merge into docs/benchmarks.md) and
# $OUT/latest.tsv; OUT defaults to bench/results. Exits non-zero if a server
# fails to start or a sysbench run aborts.
#
# Environment: DURATION (10), TABLE_SIZE (100000), TABLES (1),
# THREADS ("1 4 16"), WORKLOADS (the five above), PS_MODE (auto),
# SERVERS ("mariadb kiln"; "mariadb" alone validates the MariaDB half),
# RSS_CONNECTIONS (64), PERCENTILE (99: the latency percentile reported), REPS (1: runs of every point, alternating servers;
# the tables give medians), KEEP=1 keeps the temporary data dirs.
#
# Before/after and settings comparisons: any server named kiln<suffix>
# (e.g. SERVERS="kilnold kilnnew") is a Kiln started from $BIN_<suffix>
# (default $KILN_BIN or bin/kiln), after which $INIT_<suffix> (SQL, e.g.
# "SET GLOBAL kiln_plan_cache_size = 0") runs once; the table then shows
# each server's QPS, CPU and p99 and the last server's ratios to the first.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

duration=${DURATION:-10}
table_size=${TABLE_SIZE:-100000}
tables=${TABLES:-1}
threads_list=${THREADS:-1 4 16}
workloads=${WORKLOADS:-oltp_point_select oltp_read_only oltp_update_non_index oltp_read_write oltp_insert}
ps_mode=${PS_MODE:-auto}
servers=${SERVERS:-mariadb kiln}
reps=${REPS:-1}
rss_conns=${RSS_CONNECTIONS:-64}
pct=${PERCENTILE:-99}
out=${OUT:-$here/results}
mkdir -p "$out"
work=$(mktemp -d /tmp/kiln-bench.XXXXXX)
clk_tck=$(getconf CLK_TCK)

command -v sysbench >/dev/null || die "sysbench not found: apt-get install -y sysbench"

declare -A port pid
cleanup() {
  # shellcheck disable=SC2086 # servers is a list
  bench_cleanup "$work" $servers
}
trap cleanup EXIT

for s in $servers; do
  port[$s]=$(bench_start "$work" "$s") || die "$s did not start"
  if [[ $s == kiln?* ]]; then
    initvar=INIT_${s#kiln}
    if [[ -n ${!initvar:-} ]]; then
      mysql_tcp 127.0.0.1 "${port[$s]}" -e "${!initvar}"
    fi
  fi
  pid[$s]=$(cat "$work/$s/pid")
done

sb_common() {
  echo --db-driver=mysql --mysql-host=127.0.0.1 "--mysql-port=${port[$1]}" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest "--tables=$tables" "--table-size=$table_size"
}

declare -A rss_loaded rss_conn version
for s in $servers; do
  version[$s]=$(mysql_tcp 127.0.0.1 "${port[$s]}" -N -e 'SELECT VERSION()')
  sbtest_prepare "$work" "$s" "${port[$s]}" "$tables" "$table_size"
  rss_loaded[$s]=$(proc_rss_kb "${pid[$s]}")
  rss_conn[$s]=$("$PYTHON" - "${port[$s]}" "${pid[$s]}" "$rss_conns" <<'PY'
import sys
import pymysql
port, pid, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
conns = []
for i in range(n):
    c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", database="sbtest")
    with c.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM sbtest1 WHERE id BETWEEN %s AND %s", (i * 100 + 1, i * 100 + 100))
        cur.fetchall()
    conns.append(c)
with open("/proc/%s/status" % pid) as f:
    print([l.split()[1] for l in f if l.startswith("VmRSS:")][0])
for c in conns:
    c.close()
PY
  )
  log "$s: RSS ${rss_loaded[$s]} kB loaded, ${rss_conn[$s]} kB with $rss_conns connections"
done

failures=0
printf 'server\tworkload\tthreads\trep\tstatus\tqps\ttps\tqueries\tcpu_us_per_query\tp%s_ms\n' "$pct" >"$out/latest.tsv"
declare -A qps cpu p99s
for w in $workloads; do
  for t in $threads_list; do
    for rep in $(seq "$reps"); do
    for s in $servers; do
      logf="$work/$s.$w.$t.log"
      c0=$(proc_cpu_ticks "${pid[$s]}")
      status=ok
      # shellcheck disable=SC2046
      timeout $((duration + 120)) sysbench "$w" $(sb_common "$s") --threads="$t" --time="$duration" \
        --db-ps-mode="$ps_mode" --report-interval=0 --percentile="$pct" run >"$logf" 2>&1 || status=FAIL
      c1=$(proc_cpu_ticks "${pid[$s]}")
      grep -q FATAL "$logf" && status=FAIL
      q=$(sed -nE '/^ *queries: /{s/^ *queries: +([0-9]+) +\(([0-9.]+) per sec.*/\1 \2/p;q}' "$logf")
      tps=$(sed -nE '/^ *transactions: /{s/^ *transactions: +[0-9]+ +\(([0-9.]+) per sec.*/\1/p;q}' "$logf")
      p99=$(sed -nE "/${pct}th percentile:/"'{s/.*: +([0-9.]+).*/\1/p;q}' "$logf")
      nq=${q%% *}
      rate=${q##* }
      us=-
      if [[ -n $nq && $nq -gt 0 ]]; then
        us=$(awk -v d=$((c1 - c0)) -v hz="$clk_tck" -v n="$nq" 'BEGIN { printf "%.1f", d * 1e6 / hz / n }')
      fi
      if [[ $status != ok ]]; then
        failures=$((failures + 1))
        log "FAIL $s $w threads=$t (log: $logf)"
        grep -m 5 -E 'FATAL|error' "$logf" >&2 || true
        cp "$logf" "$out/failed.$s.$w.$t.log"
      fi
      qps[$s/$w/$t]+="${rate:--} "
      cpu[$s/$w/$t]+="$us "
      p99s[$s/$w/$t]+="${p99:--} "
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$w" "$t" "$rep" "$status" "${rate:--}" "${tps:--}" \
        "${nq:--}" "$us" "${p99:--}" >>"$out/latest.tsv"
      log "$s $w threads=$t rep $rep: $status qps ${rate:--} cpu/query ${us} us p99 ${p99:--} ms"
    done
    done
  done
done
# Medians over the reps (each entry is a space-separated list).
# shellcheck disable=SC2086
for k in "${!qps[@]}"; do
  qps[$k]=$(median ${qps[$k]})
  cpu[$k]=$(median ${cpu[$k]})
  p99s[$k]=$(median ${p99s[$k]})
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }
have_both=0
[[ " $servers " == *" kiln "* && " $servers " == *" mariadb "* ]] && have_both=1

{
  echo "## sysbench: Kiln vs MariaDB"
  echo
  echo "$(date -u '+%F %H:%M UTC'), $(nproc) cores. sysbench 1.0.20, $tables table(s) x $table_size rows," \
    "$duration s per point, --db-ps-mode=$ps_mode, client on the same machine, median of $reps run(s)" \
    "alternating the servers."
  for s in $servers; do
    echo "- $s: ${version[$s]}$([[ $s == mariadb ]] && echo ' (bench/mariadb-primary.cnf: log_bin, ROW, sync_binlog=1, innodb_flush_log_at_trx_commit=1)')"
  done
  echo
  echo "CPU us/query: utime+stime of the server process over the run / queries completed."
  echo
  if [[ $have_both == 1 ]]; then
  echo "| workload | threads | MariaDB QPS | Kiln QPS | Kiln/MariaDB QPS | MariaDB CPU us/q | Kiln CPU us/q | Kiln/MariaDB CPU | MariaDB p${pct} ms | Kiln p${pct} ms |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for w in $workloads; do
    for t in $threads_list; do
      mq=${qps[mariadb/$w/$t]:--}
      kq=${qps[kiln/$w/$t]:--}
      mc=${cpu[mariadb/$w/$t]:--}
      kc=${cpu[kiln/$w/$t]:--}
      echo "| $w | $t | $mq | $kq | $(ratio "$kq" "$mq") | $mc | $kc | $(ratio "$kc" "$mc") | ${p99s[mariadb/$w/$t]:--} | ${p99s[kiln/$w/$t]:--} |"
    done
  done
  else
  # shellcheck disable=SC2206 # servers is a list
  list=($servers)
  first=${list[0]} last=${list[-1]}
  head="| workload | threads |" sep="|---|---:|"
  for s in $servers; do head+=" $s QPS | $s CPU us/q | $s p${pct} ms |"; sep+="---:|---:|---:|"; done
  echo "$head $last/$first QPS | $last/$first CPU |"
  echo "$sep---:|---:|"
  for w in $workloads; do
    for t in $threads_list; do
      row="| $w | $t |"
      for s in $servers; do row+=" ${qps[$s/$w/$t]:--} | ${cpu[$s/$w/$t]:--} | ${p99s[$s/$w/$t]:--} |"; done
      echo "$row $(ratio "${qps[$last/$w/$t]}" "${qps[$first/$w/$t]}") | $(ratio "${cpu[$last/$w/$t]}" "${cpu[$first/$w/$t]}") |"
    done
  done
  fi
  echo
  echo "Server memory (VmRSS, MB), $tables x $table_size rows loaded:"
  echo
  echo "| server | after load | with $rss_conns connections open |"
  echo "|---|---:|---:|"
  for s in $servers; do
    echo "| $s | $(awk -v k="${rss_loaded[$s]}" 'BEGIN { printf "%.1f", k / 1024 }') | $(awk -v k="${rss_conn[$s]}" 'BEGIN { printf "%.1f", k / 1024 }') |"
  done
  if [[ $failures -ne 0 ]]; then
    echo
    echo "**$failures sysbench run(s) aborted** (logs: failed.*.log)."
  fi
} >"$out/latest.md"
cat "$out/latest.md"
log "results in $out/latest.md and $out/latest.tsv"
[[ $failures -eq 0 ]]
