#!/usr/bin/env bash
# Bulk UPDATE and DELETE, Kiln against MariaDB, side by side: the statements
# of batch jobs and data fixes, which change many rows each.
#
#   bench/bulk-dml.sh
#
# Starts the servers as bench/sysbench-compare.sh does (MariaDB with the
# reference cnf, durable; any kiln<suffix> from $BIN_<suffix>), prepares
# sbtest1 with $TABLE_SIZE rows (sysbench's table: a secondary index on k; the
# same rows on every server, --rand-seed=1),
# then runs each statement below $REPS times, the servers alternating, each
# repetition on rows the others did not touch:
#   range        UPDATE sbtest1 SET k = k + 1 WHERE id BETWEEN lo AND lo+CHUNK-1
#   range10      UPDATE ... SET k = k + 1 WHERE id BETWEEN lo AND hi AND id % 10 = 0
#                (bench/backup-compare.sh's chunked 10% change: every row of the
#                range is locked and read, one in ten changed)
#   scan         UPDATE ... SET c = CONCAT(...) WHERE id % 100 = r (a full scan, 1%)
#   secondary    UPDATE ... SET pad = ... WHERE k BETWEEN a AND b (by the index on k,
#                1/3000 of its values near the middle: some 25,000 rows of 1,000,000)
#   delete       DELETE FROM sbtest1 WHERE id BETWEEN lo AND lo+CHUNK-1
# For every run: seconds of the statement as the mysql client times it
# (autocommit: its commit's fsync included; the connection's set-up not),
# rows affected, and the server's CPU seconds (utime+stime from /proc over the
# client's run, background work included). Medians in
# $OUT/bulk-dml.md, every run in $OUT/bulk-dml.tsv (OUT defaults to
# bench/results).
#
# Environment: TABLE_SIZE (1000000), CHUNK (50000), REPS (3), SETTLE (15: seconds
# of quiet after the load, before the first statement),
# SERVERS ("mariadb kiln"), BIN_<suffix>, STATEMENTS (all five), KEEP=1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

table_size=${TABLE_SIZE:-1000000}
chunk=${CHUNK:-50000}
reps=${REPS:-3}
servers=${SERVERS:-mariadb kiln}
statements=${STATEMENTS:-range range10 scan secondary delete}
settle=${SETTLE:-15}
out=${OUT:-$here/results}
mkdir -p "$out"
work=$(mktemp -d /tmp/kiln-bench.XXXXXX)
clk_tck=$(getconf CLK_TCK)
command -v sysbench >/dev/null || die "sysbench not found: apt-get install -y sysbench"
[[ $((table_size / chunk)) -ge $((reps * 3)) ]] || die "TABLE_SIZE must hold 3 x REPS chunks of CHUNK rows"

declare -A port pid
cleanup() {
  # shellcheck disable=SC2086 # servers is a list
  bench_cleanup "$work" $servers
}
trap cleanup EXIT

for s in $servers; do
  port[$s]=$(bench_start "$work" "$s") || die "$s did not start"
  pid[$s]=$(cat "$work/$s/pid")
  sbtest_prepare "$work" "$s" "${port[$s]}" 1 "$table_size" --rand-seed=1
done

# The load leaves the servers flushing and compacting for a while (pebble's L0, InnoDB's dirty
# pages); the first statements would pay for it.
log "settling for $settle s"
sleep "$settle"

# stmt NAME REP prints the statement of repetition REP (0-based): each touches rows of its own.
stmt() {
  local lo=$(($2 * chunk + 1))
  case $1 in
    range) echo "UPDATE sbtest1 SET k = k + 1 WHERE id BETWEEN $lo AND $((lo + chunk - 1))" ;;
    range10)
      lo=$(((reps + $2) * chunk + 1))
      echo "UPDATE sbtest1 SET k = k + 1 WHERE id BETWEEN $lo AND $((lo + chunk - 1)) AND id % 10 = 0"
      ;;
    scan) echo "UPDATE sbtest1 SET c = CONCAT(LEFT(c, 100), '-$2') WHERE id % 100 = $2" ;;
    secondary)
      # sysbench's k clusters around TABLE_SIZE / 2 (its "special" distribution); both servers
      # hold the same values (--rand-seed), so the ranges match the same rows on each.
      local a=$((table_size / 2 + $2 * table_size / 3000))
      echo "UPDATE sbtest1 SET pad = 'bulk-$2' WHERE k BETWEEN $a AND $((a + table_size / 3000 - 1))"
      ;;
    delete)
      lo=$(((2 * reps + $2) * chunk + 1))
      echo "DELETE FROM sbtest1 WHERE id BETWEEN $lo AND $((lo + chunk - 1))"
      ;;
    *) die "unknown statement $1" ;;
  esac
}

printf 'server\tstatement\trep\tseconds\trows\tcpu_seconds\n' >"$out/bulk-dml.tsv"
for st in $statements; do
  for rep in $(seq 0 $((reps - 1))); do
    q=$(stmt "$st" "$rep")
    for s in $servers; do
      c0=$(proc_cpu_ticks "${pid[$s]}")
      t0=$(date +%s.%N)
      res=$(mysql_tcp 127.0.0.1 "${port[$s]}" -D sbtest -vvv -e "$q" 2>&1 | sed -nE 's/^Query OK, ([0-9]+) rows? affected(.*)/\1 \2/p')
      t1=$(date +%s.%N)
      c1=$(proc_cpu_ticks "${pid[$s]}")
      [[ -n $res ]] || die "$s: $q failed"
      rows=${res%% *}
      # The client's own timing of the statement, "(0.312 sec)": the connection's set-up (a TLS
      # handshake with Kiln, whose client-side OpenSSL start costs ~20 ms here, none with MariaDB,
      # which has no certificate) stays out. The wall time of the whole client if it is missing.
      secs=$(sed -nE 's/.*\(([0-9.]+) sec\).*/\1/p' <<<"$res")
      [[ -n $secs ]] || secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
      cpu=$(awk -v a="$c0" -v b="$c1" -v t="$clk_tck" 'BEGIN { printf "%.2f", (b - a) / t }')
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$st" "$rep" "$secs" "$rows" "$cpu" >>"$out/bulk-dml.tsv"
      log "$s $st #$rep: $secs s, $rows rows, $cpu CPU s"
    done
  done
done

first=${servers%% *}
{
  echo "Bulk DML ($(date -u '+%F %H:%M UTC'), $(nproc) cores): sbtest1 with $table_size rows, $reps runs of each"
  echo "statement on fresh rows, medians; seconds are the statement's as the client times it (autocommit,"
  echo "durable), CPU the server's over the client's run. Ratio: each server's seconds over $first's."
  echo
  printf '| statement | rows |'
  for s in $servers; do printf ' %s s | %s CPU s |' "$s" "$s"; done
  for s in $servers; do [[ $s == "$first" ]] || printf ' %s/%s |' "$s" "$first"; done
  echo
  printf '|---|---:|'
  for s in $servers; do printf -- '---:|---:|'; done
  for s in $servers; do [[ $s == "$first" ]] || printf -- '---:|'; done
  echo
  for st in $statements; do
    rows=$(awk -F'\t' -v s="$first" -v st="$st" '$1 == s && $2 == st { print $5 }' "$out/bulk-dml.tsv" | median)
    printf '| %s | %s |' "$st" "$rows"
    declare -A med=()
    for s in $servers; do
      med[$s]=$(awk -F'\t' -v s="$s" -v st="$st" '$1 == s && $2 == st { print $4 }' "$out/bulk-dml.tsv" | median)
      cpu=$(awk -F'\t' -v s="$s" -v st="$st" '$1 == s && $2 == st { print $6 }' "$out/bulk-dml.tsv" | median)
      printf ' %s | %s |' "${med[$s]}" "$cpu"
    done
    for s in $servers; do
      [[ $s == "$first" ]] && continue
      printf ' %s |' "$(awk -v a="${med[$s]}" -v b="${med[$first]}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }')"
    done
    echo
    unset med
  done
} >"$out/bulk-dml.md"
cat "$out/bulk-dml.md"
