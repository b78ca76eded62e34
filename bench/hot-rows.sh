#!/usr/bin/env bash
# Hot rows, durable: Kiln with and without early lock release against MariaDB, in one run.
#
#   bench/hot-rows.sh
#   DURATION=5 HOT_THREADS="1 10" bench/hot-rows.sh   # smoke run
#
# Starts Kiln ($KILN_BIN, default bin/kiln, via scripts/kiln.sh, durability sync) and MariaDB
# (scripts/mariadb.sh with bench/mariadb-primary.cnf: log_bin, sync_binlog=1,
# innodb_flush_log_at_trx_commit=1), each on a temporary data dir under $TMPDIR (default /tmp)
# and a free port. Two workloads (bench/hot_row.lua, autocommit UPDATE t SET b=b+1 WHERE a=?):
#   one   a single hot row (a=1)
#   few   $FEW_ROWS hot rows (default 10), each event picking one uniformly
# For each workload and each thread count in $HOT_THREADS ("1 10 50 100 500"), three points
# back to back: MariaDB, Kiln with kiln_early_lock_release=OFF, Kiln with it ON (switched with
# SET GLOBAL on the same server). Each point reports TPS, p99 latency and commits per fsync group
# (Kiln: Kiln_commits / Kiln_commit_groups; MariaDB: Binlog_commits / Binlog_group_commits, deltas
# of SHOW GLOBAL STATUS), and checks that SUM(b) grew by exactly the transactions sysbench
# reported (a MISMATCH fails the run). Before the servers start, the disk's raw fsync rate (dd,
# 4 KiB O_DSYNC writes) is measured: it decides what a durable commit costs.
#
# 500 threads need max_connections above them: Kiln gets --max-connections=600 and MariaDB
# SET GLOBAL max_connections=600.
#
# Writes $OUT/hot-rows.md and $OUT/hot-rows.tsv (OUT defaults to bench/results).
# Environment: DURATION (10), HOT_THREADS, FEW_ROWS (10), REPS (1: runs per point; the median TPS
# and its run's p99 are reported), FSYNC_PROBE_COUNT (2000), KEEP=1 keeps the data dirs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

duration=${DURATION:-10}
threads_list=${HOT_THREADS:-1 10 50 100 500}
few_rows=${FEW_ROWS:-10}
reps=${REPS:-1}
probe_count=${FSYNC_PROBE_COUNT:-2000}
out=${OUT:-$here/results}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-hot.XXXXXX")
servers="mariadb kiln"
command -v sysbench >/dev/null || die "sysbench not found: apt-get install -y sysbench"

declare -A port pid
cleanup() {
  # shellcheck disable=SC2086 # servers is a list
  bench_cleanup "$work" $servers
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fs_type=$(df -T "$work" | awk 'NR == 2 { print $2 }')
[[ $fs_type == tmpfs ]] && log "warning: $work is on tmpfs: fsync costs nothing there (set TMPDIR)"
probe=$(fsync_rate "$work" "$probe_count")
[[ $probe_count -gt 0 ]] && log "fsync baseline: $probe syncs/s (dd bs=4k count=$probe_count oflag=dsync on $fs_type)"

port[kiln]=$(KILN_FLAGS="--max-connections=600" "$repo/scripts/kiln.sh" start "$work/kiln") || die "kiln did not start"
pid[kiln]=$(cat "$work/kiln/pid")
port[mariadb]=$("$repo/scripts/mariadb.sh" start "$work/mariadb") || die "mariadb did not start"
pid[mariadb]=$(cat "$work/mariadb/pid")
mysql_tcp 127.0.0.1 "${port[mariadb]}" -e 'SET GLOBAL max_connections=600'

declare -A version
for s in $servers; do
  version[$s]=$(mysql_tcp 127.0.0.1 "${port[$s]}" -N -B -e 'SELECT VERSION()')
  mysql_tcp 127.0.0.1 "${port[$s]}" -e 'DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest'
done
kiln_rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

sb_conn() {
  echo --db-driver=mysql --mysql-host=127.0.0.1 "--mysql-port=${port[$1]}" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest
}

# counters S: "commits groups" from SHOW GLOBAL STATUS.
counters() {
  local names
  if [[ $1 == kiln ]]; then names="Kiln_commits Kiln_commit_groups"; else names="Binlog_commits Binlog_group_commits"; fi
  mysql_tcp 127.0.0.1 "${port[$1]}" -N -B -e 'SHOW GLOBAL STATUS' | awk -v names="$names" '
    { v[$1] = $2 }
    END { n = split(names, a, " "); for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), v[a[i]] + 0; print "" }'
}

sum_b() { mysql_tcp 127.0.0.1 "${port[$1]}" -D sbtest -N -B -e "SELECT SUM(b) FROM $2"; }

failures=0
tsv=$out/hot-rows.tsv
printf 'workload\tthreads\tvariant\trep\tstatus\ttps\tp99_ms\tcommits\tgroups\tgroup_size\tcheck\n' >"$tsv"
declare -A res

# point WORKLOAD ROWS THREADS VARIANT REP: one sysbench run. VARIANT: mariadb, kiln-off, kiln-on.
point() {
  local w=$1 rows=$2 t=$3 variant=$4 rep=$5 s=${4%%-*}
  local table=hot_$w logf="$work/$variant.$w.$t.$rep.log" status=ok check=ok
  if [[ $s == kiln ]]; then
    local v=OFF
    [[ $variant == kiln-on ]] && v=ON
    mysql_tcp 127.0.0.1 "${port[kiln]}" -e "SET GLOBAL kiln_early_lock_release = $v"
  fi
  local b0 b1 before after
  b0=$(sum_b "$s" "$table")
  before=$(counters "$s")
  # shellcheck disable=SC2046
  timeout $((duration + 120)) sysbench "$here/hot_row.lua" $(sb_conn "$s") --hot-table="$table" --hot-rows="$rows" \
    --threads="$t" --time="$duration" --percentile=99 --report-interval=0 run >"$logf" 2>&1 || status=FAIL
  grep -q FATAL "$logf" && status=FAIL
  alive "${pid[$s]}" || { tail -n 20 "$logf" >&2; die "$s died ($variant $w threads=$t)"; }
  after=$(counters "$s")
  b1=$(sum_b "$s" "$table")
  local tx tps p99 c0 g0 c1 g1 dc dg gsz
  tx=$(sed -nE '/^ *transactions: /{s/^ *transactions: +([0-9]+) .*/\1/p;q}' "$logf")
  tps=$(sed -nE '/^ *transactions: /{s/^ *transactions: +[0-9]+ +\(([0-9.]+) per sec.*/\1/p;q}' "$logf")
  p99=$(sed -nE '/99th percentile:/{s/.*: +([0-9.]+).*/\1/p;q}' "$logf")
  read -r c0 g0 <<<"$before"
  read -r c1 g1 <<<"$after"
  dc=$((c1 - c0)) dg=$((g1 - g0))
  gsz=$(awk -v c="$dc" -v g="$dg" 'BEGIN { if (g > 0) printf "%.2f", c / g; else printf "-" }')
  if [[ $status == ok && ( -z $tx || $((b1 - b0)) -ne $tx ) ]]; then
    check="MISMATCH: SUM(b) +$((b1 - b0)), sysbench ${tx:-?} transactions"
    status=MISMATCH
  fi
  if [[ $status != ok ]]; then
    failures=$((failures + 1))
    log "$status $variant $w threads=$t: $check (log: $logf)"
    cp "$logf" "$out/hot-rows.failed.$variant.$w.$t.$rep.log"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$t" "$variant" "$rep" "$status" "${tps:--}" "${p99:--}" \
    "$dc" "$dg" "$gsz" "$check" >>"$tsv"
  res[tps/$w/$t/$variant/$rep]=${tps:-0}
  res[p99/$w/$t/$variant/$rep]=${p99:--}
  res[gsz/$w/$t/$variant/$rep]=$gsz
  log "$variant $w threads=$t rep $rep: tps ${tps:--} p99 ${p99:--} ms group $gsz"
}

variants="mariadb kiln-off kiln-on"
for w in one few; do
  rows=1
  [[ $w == few ]] && rows=$few_rows
  for s in $servers; do
    # shellcheck disable=SC2046
    sysbench "$here/hot_row.lua" $(sb_conn "$s") --hot-table="hot_$w" --hot-rows="$rows" prepare >"$work/$s.$w.prepare.log" 2>&1 ||
      { tail -n 20 "$work/$s.$w.prepare.log" >&2; die "$s: prepare $w failed"; }
  done
  for t in $threads_list; do
    for ((r = 1; r <= reps; r++)); do
      for v in $variants; do
        point "$w" "$rows" "$t" "$v" "$r"
      done
    done
  done
done

# median V W T: the rep with the median TPS; prints "tps p99 group".
median() {
  local w=$1 t=$2 v=$3 r
  for ((r = 1; r <= reps; r++)); do
    echo "${res[tps/$w/$t/$v/$r]} ${res[p99/$w/$t/$v/$r]} ${res[gsz/$w/$t/$v/$r]}"
  done | sort -n | awk -v n="$reps" 'NR == int((n + 1) / 2) { print; exit }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }

md=$out/hot-rows.md
{
  echo "## Hot rows, durable: Kiln with and without early lock release vs MariaDB"
  echo
  echo "$(date -u '+%F %H:%M UTC'); $(nproc) cores ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo));" \
    "data dirs on $fs_type; raw fsync rate $probe syncs/s (dd bs=4k oflag=dsync, single thread)." \
    "$(sysbench --version); $duration s per point; median of $reps run(s); client on the same machine."
  echo "- kiln: ${version[kiln]} (commit $kiln_rev), durability sync, kiln_early_lock_release switched per point"
  echo "- mariadb: ${version[mariadb]} (bench/mariadb-primary.cnf: log_bin, sync_binlog=1, innodb_flush_log_at_trx_commit=1)"
  echo
  echo "Command: \`DURATION=$duration HOT_THREADS=\"$threads_list\" FEW_ROWS=$few_rows REPS=$reps bench/hot-rows.sh\`"
  echo
  echo "group = commits per fsync group (Kiln_commits / Kiln_commit_groups; Binlog_commits / Binlog_group_commits)."
  for w in one few; do
    echo
    if [[ $w == one ]]; then echo "### One hot row"; else echo "### $few_rows hot rows, uniform"; fi
    echo
    echo "| threads | MariaDB TPS | Kiln TPS (ELR off) | Kiln TPS (ELR on) | ELR on / MariaDB | MariaDB p99 ms | Kiln off p99 ms | Kiln on p99 ms | MariaDB group | Kiln off group | Kiln on group |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for t in $threads_list; do
      read -r mt mp mg <<<"$(median "$w" "$t" mariadb)"
      read -r ft fp fg <<<"$(median "$w" "$t" kiln-off)"
      read -r nt np ng <<<"$(median "$w" "$t" kiln-on)"
      echo "| $t | $mt | $ft | $nt | $(ratio "$nt" "$mt") | $mp | $fp | $np | $mg | $fg | $ng |"
    done
  done
  if [[ $failures -ne 0 ]]; then
    echo
    echo "**$failures point(s) failed** (logs: hot-rows.failed.*.log)."
  fi
} >"$md"
cat "$md"
log "results in $md and $tsv"
[[ $failures -eq 0 ]]
