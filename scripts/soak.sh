#!/usr/bin/env bash
# A long mixed load on one Kiln server, then a restart that must keep every
# committed row.
#
#   scripts/soak.sh
#
# Starts bin/kiln ($KILN_BIN; SOAK_SERVER=mariadb soaks MariaDB instead, to
# check the script), prepares 4 tables x 100,000 rows, then runs sysbench
# oltp_read_write and oltp_insert at $SOAK_THREADS (16) threads alternately in
# slices of $SOAK_SLICE s (60) for $SOAK_SECONDS s (1800), recording per slice
# tps, ignored errors and the server's RSS and CPU. Fails if a run aborts.
# Then stops the server with SIGTERM (it must exit by itself), starts it on the
# same data dir and compares COUNT(*) and SUM(k) of every table before and
# after: they must match. Results in $SOAK_OUT (default a new
# /tmp/kiln-soak.XXXX): soak.tsv and the logs; the data dir is removed if
# the soak passed (SOAK_KEEP_DATA=1 keeps it).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

server=${SOAK_SERVER:-kiln}
seconds=${SOAK_SECONDS:-1800}
slice=${SOAK_SLICE:-60}
threads=${SOAK_THREADS:-16}
tables=${SOAK_TABLES:-4}
table_size=${SOAK_TABLE_SIZE:-100000}
out=${SOAK_OUT:-$(mktemp -d /tmp/kiln-soak.XXXXXX)}
mkdir -p "$out"
ctl=$here/$server.sh
[[ -x $ctl ]] || die "unknown SOAK_SERVER $server"
dir=$out/server
trap '"$ctl" stop "$dir" >/dev/null 2>&1 || true' EXIT

port=$("$ctl" start "$dir")
pid=$(cat "$dir/pid")
common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root --mysql-password=
  --mysql-db=sbtest --tables="$tables" --table-size="$table_size")
mysql_tcp 127.0.0.1 "$port" -e 'DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest'
sysbench oltp_read_write "${common[@]}" --threads="$tables" prepare >"$out/prepare.log" 2>&1 ||
  die "prepare failed (see $out/prepare.log)"

checksum() {
  local t q=""
  for ((t = 1; t <= tables; t++)); do
    q+="SELECT $t, COUNT(*), COALESCE(SUM(k), 0) FROM sbtest$t; "
  done
  mysql_tcp 127.0.0.1 "$port" -D sbtest -N -e "$q"
}

printf 'slice\tworkload\tstatus\ttps\tqps\tignored_errors\trss_kb\tcpu_s\n' >"$out/soak.tsv"
failures=0
start=$(date +%s)
n=0
while (($(date +%s) - start < seconds)); do
  n=$((n + 1))
  w=oltp_read_write
  ((n % 2 == 0)) && w=oltp_insert
  logf=$out/slice.$n.$w.log
  c0=$(proc_cpu_ticks "$pid")
  status=ok
  timeout $((slice + 120)) sysbench "$w" "${common[@]}" --threads="$threads" --time="$slice" \
    --report-interval=0 run >"$logf" 2>&1 || status=FAIL
  grep -q FATAL "$logf" && status=FAIL
  c1=$(proc_cpu_ticks "$pid")
  alive "$pid" || { status=FAIL; log "server died"; }
  tps=$(sed -nE '/^ *transactions: /{s/.*\(([0-9.]+) per sec.*/\1/p;q}' "$logf")
  qps=$(sed -nE '/^ *queries: /{s/.*\(([0-9.]+) per sec.*/\1/p;q}' "$logf")
  ign=$(sed -nE '/^ *ignored errors: /{s/^ *ignored errors: +([0-9]+).*/\1/p;q}' "$logf")
  rss=$(proc_rss_kb "$pid" 2>/dev/null || echo -)
  cpu=$(awk -v d=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", d / hz }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$w" "$status" "${tps:--}" "${qps:--}" "${ign:--}" "$rss" "$cpu" >>"$out/soak.tsv"
  log "slice $n $w: $status tps ${tps:--} ignored ${ign:--} rss ${rss} kB"
  if [[ $status != ok ]]; then
    failures=$((failures + 1))
    alive "$pid" || break
  fi
done

if alive "$pid"; then
  before=$(checksum)
  "$ctl" stop "$dir" || { failures=$((failures + 1)); log "FAIL: the server did not stop on SIGTERM"; }
  port=$("$ctl" start "$dir")
  pid=$(cat "$dir/pid")
  after=$(checksum)
  if [[ $before != "$after" ]]; then
    failures=$((failures + 1))
    log "FAIL: tables differ after restart"
    diff <(echo "$before") <(echo "$after") >&2 || true
  else
    log "restart: all $tables tables identical (count, sum(k))"
  fi
fi
"$ctl" stop "$dir" >/dev/null 2>&1 || true
[[ $failures -ne 0 || ${SOAK_KEEP_DATA:-0} == 1 ]] || rm -rf "$dir/data"
column -t "$out/soak.tsv" 2>/dev/null || cat "$out/soak.tsv"
log "soak: $failures failure(s); results in $out"
[[ $failures -eq 0 ]]
