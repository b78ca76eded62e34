#!/usr/bin/env bash
# The sysbench suite: sysbench 1.0.20 (Debian) against a MySQL-compatible
# server at HOST PORT (user root, empty password).
#
#   test/sysbench/run.sh HOST PORT
#
# Prepares 2 tables x 10,000 rows (with the default secondary index on k) in
# database sbtest, runs every OLTP script Debian ships (the oltp_* ones and
# select_random_points / select_random_ranges) for 10 s at 4 threads, first
# with --db-ps-mode=auto (server-side prepared statements), then with
# --db-ps-mode=disable (text protocol), then cleans up.
#
# A run fails if sysbench exits non-zero or prints FATAL. sysbench keeps its
# defaults for errors: it retries and counts as "ignored errors" only 1213
# (deadlock), 1205 (lock wait timeout) and 1020 (record changed); any other
# error aborts the run, and so fails the suite. The ignored-error counts are
# reported per run, beside tps and qps.
#
# Output (directory $SYSBENCH_OUT, default a new /tmp/kiln-sysbench.XXXX):
# summary.tsv, summary.md and one log per run. Exit status 0 only if the
# prepare, every run and the cleanup succeeded.
#
# Knobs (environment): SYSBENCH_TIME (10), SYSBENCH_THREADS (4),
# SYSBENCH_TABLES (2), SYSBENCH_TABLE_SIZE (10000), SYSBENCH_PS_MODES
# ("auto disable"), SYSBENCH_SCRIPTS (all), SYSBENCH_DB (sbtest).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

[[ $# -eq 2 ]] || { echo "usage: $0 HOST PORT" >&2; exit 2; }
host=$1
port=$2

time_s=${SYSBENCH_TIME:-10}
threads=${SYSBENCH_THREADS:-4}
tables=${SYSBENCH_TABLES:-2}
table_size=${SYSBENCH_TABLE_SIZE:-10000}
modes=${SYSBENCH_PS_MODES:-auto disable}
scripts=${SYSBENCH_SCRIPTS:-oltp_point_select oltp_read_only oltp_read_write oltp_write_only oltp_update_index oltp_update_non_index oltp_delete oltp_insert select_random_points select_random_ranges}
db=${SYSBENCH_DB:-sbtest}
out=${SYSBENCH_OUT:-$(mktemp -d /tmp/kiln-sysbench.XXXXXX)}
mkdir -p "$out"

command -v sysbench >/dev/null || die "sysbench not found: apt-get install -y sysbench"

common=(--db-driver=mysql --mysql-host="$host" --mysql-port="$port" --mysql-user=root
  --mysql-password= --mysql-db="$db" --tables="$tables" --table-size="$table_size")

failures=0

# sb_ok LOG: the run's log shows no abort.
sb_ok() { ! grep -q 'FATAL' "$1"; }

# field LOG NAME: the number after "NAME:" in sysbench's report.
field() { sed -nE "/^ *$2: /{s/^ *$2: +([0-9.]+).*/\1/p;q}" "$1"; }
# rate LOG NAME: the "(N per sec.)" rate on the same line.
rate() { sed -nE "/^ *$2: /{s/^ *$2: +[0-9.]+ +\(([0-9.]+) per sec.*/\1/p;q}" "$1"; }

log "sysbench suite against $host:$port -> $out"
mysql_tcp "$host" "$port" -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db" ||
  die "cannot create database $db on $host:$port"

start=$(date +%s)
if ! timeout 600 sysbench oltp_read_write "${common[@]}" --threads="$tables" prepare >"$out/prepare.log" 2>&1 ||
  ! sb_ok "$out/prepare.log"; then
  tail -n 20 "$out/prepare.log" >&2
  die "prepare failed (see $out/prepare.log)"
fi
log "prepared $tables tables x $table_size rows in $(($(date +%s) - start))s"

printf 'ps_mode\tscript\tthreads\tstatus\ttps\tqps\tignored_errors\treconnects\tp95_ms\n' >"$out/summary.tsv"
for mode in $modes; do
  for s in $scripts; do
    logf="$out/$s.$mode.log"
    status=ok
    if ! timeout $((time_s + 120)) sysbench "$s" "${common[@]}" --threads="$threads" --time="$time_s" \
      --db-ps-mode="$mode" --report-interval=0 run >"$logf" 2>&1; then
      status=FAIL
    fi
    sb_ok "$logf" || status=FAIL
    tps=$(rate "$logf" transactions)
    qps=$(rate "$logf" queries)
    ign=$(field "$logf" "ignored errors")
    rec=$(field "$logf" reconnects)
    p95=$(field "$logf" "95th percentile")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$s" "$threads" "$status" \
      "${tps:--}" "${qps:--}" "${ign:--}" "${rec:--}" "${p95:--}" >>"$out/summary.tsv"
    if [[ $status != ok ]]; then
      failures=$((failures + 1))
      log "FAIL $s ps-mode=$mode (see $logf):"
      grep -m 5 -E 'FATAL|error' "$logf" >&2 || tail -n 5 "$logf" >&2
    else
      log "ok   $s ps-mode=$mode: tps ${tps:-?} qps ${qps:-?} ignored errors ${ign:-?}"
    fi
  done
done

if ! timeout 300 sysbench oltp_read_write "${common[@]}" cleanup >"$out/cleanup.log" 2>&1 ||
  ! sb_ok "$out/cleanup.log"; then
  failures=$((failures + 1))
  log "FAIL cleanup (see $out/cleanup.log)"
fi
mysql_tcp "$host" "$port" -e "DROP DATABASE IF EXISTS $db" || failures=$((failures + 1))

# The markdown summary puts MariaDB's ignored errors and tps for the same
# runs (test/sysbench/mariadb-baseline.tsv) beside this server's.
baseline=${SYSBENCH_BASELINE:-$here/mariadb-baseline.tsv}
[[ -f $baseline ]] || baseline=/dev/null
{
  echo "| ps-mode | script | threads | status | tps | qps | ignored errors | reconnects | p95 ms | MariaDB ignored errors | MariaDB tps |"
  echo "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' -v base="$baseline" 'FILENAME == base { if (FNR > 1) { ign[$1 "/" $2] = $7; tps[$1 "/" $2] = $5 }; next }
    FNR > 1 { k = $1 "/" $2
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9,
        (k in ign) ? ign[k] : "-", (k in tps) ? tps[k] : "-" }' "$baseline" "$out/summary.tsv"
} >"$out/summary.md"
cat "$out/summary.md"
log "sysbench suite: $failures failure(s), $(($(date +%s) - start))s; results in $out"
[[ $failures -eq 0 ]]
