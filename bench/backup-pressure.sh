#!/usr/bin/env bash
# What a Kiln backup costs the foreground, by backup client variant (issue 11's p99 target).
#
#   VARIANTS="disk:bin/kiln:disk: null:bin/kiln:null: nice:bin/kiln:disk:--nice=10" bench/backup-pressure.sh
#
# Starts one Kiln server ($KILN_BIN, default bin/kiln) on a temporary data dir, prepares $TABLES x
# $TABLE_SIZE sysbench rows, then for $ROUNDS rounds runs oltp_read_write ($THREADS threads,
# $DURATION s) once without a backup ("none") and once per variant with full backups of the
# server running back to back for the whole run. The variants of one round run one after the
# other, so that the machine's load drifts across all of them alike. A variant is
# NAME:CLIENT_BINARY:DEST:FLAGS, DEST being disk (kiln backup --to DIR) or null (--to - piped to
# cat >/dev/null: everything but the backup's disk writes); FLAGS are comma-separated extra flags.
# Prints, per variant, the median TPS, p99 (ms) and p99 ratio to "none" of the same rounds, the
# backups taken, the median backup time and the client's CPU seconds per backup (the server's
# share cannot be told apart from its foreground work, which the backups slow down). Writes $OUT/backup-pressure.md (OUT defaults to bench/results).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

tables=${TABLES:-8}
table_size=${TABLE_SIZE:-500000}
threads=${THREADS:-8}
duration=${DURATION:-30}
rounds=${ROUNDS:-3}
variants=${VARIANTS:-"disk:$repo/bin/kiln:disk:"}
out=${OUT:-$here/results}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-bkpressure.XXXXXX")
trap 'bench_cleanup "$work" kiln' EXIT

now() { date +%s.%N; }
port=$("$repo/scripts/kiln.sh" start "$work/kiln") || die "kiln did not start"
http=127.0.0.1:$(cat "$work/kiln/http_port")
mysql_tcp 127.0.0.1 "$port" -e 'CREATE DATABASE sbtest'
sb() {
  sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest --tables="$tables" --table-size="$table_size" "$@"
}
log "prepare $tables x $table_size rows"
sb --threads="$tables" prepare >"$work/prepare.log" 2>&1 || { tail "$work/prepare.log" >&2; die "prepare failed"; }
for ((i = 1; i <= tables; i++)); do
  mysql_tcp 127.0.0.1 "$port" -D sbtest -N -e "SELECT COUNT(*), SUM(LENGTH(c)) FROM sbtest$i" >/dev/null
done
log "data dir $(du -sm "$work/kiln/data" | cut -f1) MiB"

# run NAME ROUND: one sysbench run, with the variant's backups looping unless NAME is none.
declare -A tps p99 nb bt cpu_c
run() {
  local name=$1 k=$2 spec bin dest flags loop="" n
  if [[ $name != none ]]; then
    for spec in $variants; do [[ ${spec%%:*} == "$name" ]] && break; done
    IFS=: read -r _ bin dest flags <<<"$spec"
    rm -f "$work/stop" "$work/times" "$work/cpu"
    (
      while [[ ! -e $work/stop ]]; do
        rm -rf "$work/bk"
        t0=$(now)
        # shellcheck disable=SC2086 # flags are a list
        if [[ $dest == null ]]; then
          # A pipe: kiln backup refuses to write its tar stream to a terminal or device.
          (ulimit -c 0; set -o pipefail; "$bin" backup --from "$http" --to - ${flags//,/ } 2>"$work/bk.log" | cat >/dev/null && times >"$work/t.out") || exit 1
        else
          (ulimit -c 0; "$bin" backup --from "$http" --to "$work/bk" ${flags//,/ } >"$work/bk.log" 2>&1 && times >"$work/t.out") || exit 1
        fi
        awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f\n", b - a }' >>"$work/times"
        awk 'NR == 2 { gsub(/s/, ""); split($1, u, "m"); split($2, y, "m"); printf "%.3f\n", u[1] * 60 + u[2] + y[1] * 60 + y[2] }' "$work/t.out" >>"$work/cpu"
      done
    ) &
    loop=$!
  fi
  sb --threads="$threads" --time="$duration" --percentile=99 --report-interval=0 run >"$work/sb.log" 2>&1 ||
    { touch "$work/stop"; tail "$work/sb.log" >&2; die "sysbench failed"; }
  if [[ -n $loop ]]; then
    touch "$work/stop"
    wait "$loop" || { cat "$work/bk.log" >&2; die "$name: a backup failed"; }
  fi
  tps[$name]+=" $(sed -nE '/^ *transactions: /{s/^ *transactions: +[0-9]+ +\(([0-9.]+) per sec.*/\1/p;q}' "$work/sb.log")"
  p99[$name]+=" $(sed -nE '/99th percentile:/{s/.*: +([0-9.]+).*/\1/p;q}' "$work/sb.log")"
  if [[ -n $loop ]]; then
    n=$(wc -l <"$work/times")
    nb[$name]=$((${nb[$name]:-0} + n))
    bt[$name]+=" $(tr '\n' ' ' <"$work/times")"
    cpu_c[$name]+=" $(tr '\n' ' ' <"$work/cpu")"
  fi
  log "round $k $name: TPS ${tps[$name]##* }, p99 ${p99[$name]##* } ms${loop:+, $(wc -l <"$work/times") backups}"
}

names=none
for spec in $variants; do names+=" ${spec%%:*}"; done
for ((k = 1; k <= rounds; k++)); do
  for name in $names; do run "$name" "$k"; done
done

# shellcheck disable=SC2086 # the values are lists
{
  echo "## Backup pressure (bench/backup-pressure.sh)"
  echo
  echo "$(date -u '+%F %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $tables x $table_size rows" \
    "(data dir $(du -sm "$work/kiln/data" | cut -f1) MiB at the end); oltp_read_write $threads threads, $duration s; medians of $rounds rounds."
  echo
  echo "| variant | TPS | p99 ms | p99 / none | backups | backup s | client CPU s / backup |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  b=$(median ${p99[none]})
  for name in $names; do
    p=$(median ${p99[$name]})
    echo "| $name | $(median ${tps[$name]}) | $p | $(awk -v a="$p" -v b="$b" 'BEGIN { printf "%.2f", a / b }') | ${nb[$name]:--} |" \
      "$(median ${bt[$name]:-}) | $(median ${cpu_c[$name]:-}) |"
  done
  echo
  for spec in $variants; do echo "- ${spec%%:*}: \`$(cut -d: -f2- <<<"$spec")\`"; done
  echo "- p99 per round:"; for name in $names; do echo "  - $name:${p99[$name]}"; done
} | tee "$out/backup-pressure.md"
