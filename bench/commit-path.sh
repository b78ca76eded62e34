#!/usr/bin/env bash
# The durable commit path, Kiln against MariaDB, in one run.
#
#   bench/commit-path.sh
#   DURATION=3 THREADS="1 4" ASYNC_THREADS=1 HOT_THREADS="1 10" bench/commit-path.sh   # smoke run
#
# Starts Kiln ($KILN_BIN, default bin/kiln, via scripts/kiln.sh; build it
# first with `make build`) and MariaDB (Debian's mariadb-server via
# scripts/mariadb.sh with the reference cnf bench/mariadb-primary.cnf), each
# on a temporary data dir (under $TMPDIR, default /tmp) and a free port,
# prepares sbtest1 with $TABLE_SIZE rows on each, then runs these sections
# (sysbench 1.0.20, --db-ps-mode=auto, --percentile=99, $DURATION s per point),
# the two servers alternating point by point:
#
#   durable  Kiln as `kiln serve` (durability sync: acknowledged after the
#            log fsync) vs MariaDB with log_bin, sync_binlog=1,
#            innodb_flush_log_at_trx_commit=1. oltp_update_non_index and
#            oltp_insert at $THREADS.
#   async    Kiln restarted with --durability=async (acknowledged once
#            applied; the log fsynced every --sync-interval, 100 ms) vs
#            MariaDB after SET GLOBAL sync_binlog=0,
#            innodb_flush_log_at_trx_commit=2 (set back to 1/1 afterwards).
#            The same workloads at $ASYNC_THREADS.
#   hot      durable mode on both; t1 (a INT PRIMARY KEY, b INT NOT NULL)
#            holding (1, 0), every client running autocommit
#            UPDATE t1 SET b=b+1 WHERE a=1 (bench/hot_row.lua) at
#            $HOT_THREADS. After each point b must have grown by exactly the
#            transactions sysbench reported (it retries an event whose
#            statement hit a deadlock or lock wait timeout and counts it
#            once); a difference is reported as MISMATCH and fails the run.
#
# For every point: TPS, p99 latency (ms), the server's CPU per transaction (utime+stime
# of its process over the run, in the TSV only), fsyncs per commit and group size
# (commits per log group), from deltas of SHOW GLOBAL STATUS around the run:
#   Kiln     commits = Kiln_commits (proposals applied), groups =
#            Kiln_commit_groups (log fsyncs that made new entries durable),
#            fsyncs = Kiln_log_fsyncs (every fsync of the log's data; the
#            log directory's fsyncs on segment create/rename are not counted).
#   MariaDB  commits = Binlog_commits, groups = Binlog_group_commits,
#            fsyncs = Innodb_data_fsyncs (MariaDB 10.11 counts its redo log
#            fsyncs there, plus data file and doublewrite fsyncs of page
#            flushing; it has no Innodb_os_log_fsyncs) + one binlog fsync per
#            binlog group when sync_binlog=1 (none in the async section).
#   fsyncs/commit = fsyncs / commits; group size = commits / groups.
# Before starting the servers, a baseline of raw fsync speed on the data
# dirs' filesystem: single-threaded dd of $FSYNC_PROBE_COUNT (2000) 4 KiB
# O_DSYNC writes (one sync per write), as syncs/s; 0 skips it.
#
# Writes $OUT/commit-path.md and $OUT/commit-path.tsv; OUT defaults to
# bench/results. Exits non-zero if a server fails to start or dies, a sysbench
# run aborts, or a hot-row check fails.
#
# Environment: DURATION (10), TABLE_SIZE (10000), THREADS ("1 4 16 64"),
# ASYNC_THREADS ("1 16"), HOT_THREADS ("1 10 50 100"; Kiln allows 151
# connections by default), SECTIONS ("durable async hot"), SERVERS
# ("mariadb kiln"; either alone validates its half), OUT, KEEP=1 keeps the
# temporary data dirs, FSYNC_PROBE_COUNT (2000), KILN_FLAGS (extra
# `kiln serve` flags, kept in every section).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

duration=${DURATION:-10}
table_size=${TABLE_SIZE:-10000}
threads_list=${THREADS:-1 4 16 64}
async_threads=${ASYNC_THREADS:-1 16}
hot_threads=${HOT_THREADS:-1 10 50 100}
sections=${SECTIONS:-durable async hot}
servers=${SERVERS:-mariadb kiln}
probe_count=${FSYNC_PROBE_COUNT:-2000}
kiln_flags=${KILN_FLAGS:-}
ps_mode=auto
workloads="oltp_update_non_index oltp_insert"
out=${OUT:-$here/results}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-commit.XXXXXX")

command -v sysbench >/dev/null || die "sysbench not found: apt-get install -y sysbench"
for s in $servers; do
  [[ $s == kiln || $s == mariadb ]] || die "unknown server $s"
done
for sec in $sections; do
  [[ $sec == durable || $sec == async || $sec == hot ]] || die "unknown section $sec"
done

cmdline="DURATION=$duration TABLE_SIZE=$table_size THREADS=\"$threads_list\" ASYNC_THREADS=\"$async_threads\""
cmdline+=" HOT_THREADS=\"$hot_threads\" SECTIONS=\"$sections\" SERVERS=\"$servers\""
[[ -n $kiln_flags ]] && cmdline+=" KILN_FLAGS=\"$kiln_flags\""
cmdline+=" bench/commit-path.sh"

declare -A port pid
kiln_mode=sync
cleanup() {
  # shellcheck disable=SC2086 # servers is a list
  bench_cleanup "$work" $servers
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Raw fsync speed of the filesystem the data dirs live on, before any server runs.
fs_type=$(df -T "$work" | awk 'NR == 2 { print $2 }')
[[ $fs_type == tmpfs ]] && log "warning: $work is on tmpfs: fsync costs nothing there (set TMPDIR)"
probe=$(fsync_rate "$work" "$probe_count")
[[ $probe_count -gt 0 ]] && log "fsync baseline: $probe syncs/s (dd bs=4k count=$probe_count oflag=dsync on $fs_type)"

start_kiln() { # MODE: sync|async
  local flags=$kiln_flags
  [[ $1 == async ]] && flags+=" --durability=async"
  port[kiln]=$(KILN_FLAGS=$flags "$repo/scripts/kiln.sh" start "$work/kiln") || die "kiln did not start"
  pid[kiln]=$(cat "$work/kiln/pid")
  kiln_mode=$1
}

# set_mode MODE puts every server in durable (sync) or non-durable (async) mode.
set_mode() {
  local mode=$1 s
  for s in $servers; do
    if [[ $s == kiln && $kiln_mode != "$mode" ]]; then
      log "kiln: restart with durability $mode"
      "$repo/scripts/kiln.sh" stop "$work/kiln" || die "kiln did not stop"
      KILN_PORT=${port[kiln]} KILN_HTTP_PORT=$(cat "$work/kiln/http_port") start_kiln "$mode"
    elif [[ $s == mariadb ]]; then
      if [[ $mode == async ]]; then
        mysql_tcp 127.0.0.1 "${port[mariadb]}" -e 'SET GLOBAL sync_binlog=0; SET GLOBAL innodb_flush_log_at_trx_commit=2'
      else
        mysql_tcp 127.0.0.1 "${port[mariadb]}" -e 'SET GLOBAL sync_binlog=1; SET GLOBAL innodb_flush_log_at_trx_commit=1'
      fi
      log "mariadb: $(mysql_tcp 127.0.0.1 "${port[mariadb]}" -N -B -e \
        'SELECT CONCAT("sync_binlog=", @@sync_binlog, " innodb_flush_log_at_trx_commit=", @@innodb_flush_log_at_trx_commit)')"
    fi
  done
}

for s in $servers; do
  if [[ $s == kiln ]]; then
    start_kiln sync
  else
    port[mariadb]=$("$repo/scripts/mariadb.sh" start "$work/mariadb") || die "mariadb did not start"
    pid[mariadb]=$(cat "$work/mariadb/pid")
  fi
done

status_names() {
  if [[ $1 == kiln ]]; then
    echo "Kiln_commits Kiln_commit_groups Kiln_log_fsyncs"
  else
    echo "Binlog_commits Binlog_group_commits Innodb_data_fsyncs"
  fi
}

# counters S prints "commits groups log_fsyncs" from SHOW GLOBAL STATUS.
counters() {
  local st
  st=$(mysql_tcp 127.0.0.1 "${port[$1]}" -N -B -e 'SHOW GLOBAL STATUS') || return 1
  awk -v names="$(status_names "$1")" -v s="$1" '
    { v[$1] = $2 }
    END {
      n = split(names, a, " ")
      for (i = 1; i <= n; i++) {
        if (!(a[i] in v)) { print s ": no status variable " a[i] > "/dev/stderr"; bad = 1 }
        printf "%s%s", (i > 1 ? " " : ""), v[a[i]] + 0
      }
      print ""
      exit bad
    }' <<<"$st"
}

declare -A version
for s in $servers; do
  version[$s]=$(mysql_tcp 127.0.0.1 "${port[$s]}" -N -B -e 'SELECT VERSION()')
  counters "$s" >/dev/null || die "$s: commit counters missing from SHOW GLOBAL STATUS"
done
kiln_rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$repo" diff --quiet HEAD -- cmd internal go.mod go.sum 2>/dev/null || kiln_rev+=" (uncommitted changes)"

sb_conn() {
  echo --db-driver=mysql --mysql-host=127.0.0.1 "--mysql-port=${port[$1]}" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest
}

for s in $servers; do
  mysql_tcp 127.0.0.1 "${port[$s]}" -e 'DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest'
  if [[ " $sections " == *" durable "* || " $sections " == *" async "* ]]; then
    log "$s: prepare 1 x $table_size rows"
    # shellcheck disable=SC2046
    sysbench oltp_insert $(sb_conn "$s") --tables=1 --table-size="$table_size" prepare \
      >"$work/$s.prepare.log" 2>&1 || { tail -n 20 "$work/$s.prepare.log" >&2; die "$s: prepare failed"; }
    mysql_tcp 127.0.0.1 "${port[$s]}" -D sbtest -N -e 'SELECT COUNT(*), SUM(LENGTH(c)) FROM sbtest1' >/dev/null
  fi
  if [[ " $sections " == *" hot "* ]]; then
    # shellcheck disable=SC2046
    sysbench "$here/hot_row.lua" $(sb_conn "$s") prepare >"$work/$s.hot-prepare.log" 2>&1 ||
      { tail -n 20 "$work/$s.hot-prepare.log" >&2; die "$s: hot row prepare failed"; }
  fi
done

hot_b() {
  mysql_tcp 127.0.0.1 "${port[$1]}" -D sbtest -N -B -e 'SELECT b FROM t1 WHERE a=1'
}

failures=0
tsv=$out/commit-path.tsv
printf 'section\tworkload\tthreads\tserver\tstatus\ttps\ttransactions\tp99_ms\tignored_errors\tcommits\tgroups\tlog_fsyncs\tbinlog_fsyncs\tfsyncs_per_commit\tgroup_size\tcheck\tcpu_us_per_tx\n' >"$tsv"
declare -A res # res[FIELD/SECTION/WORKLOAD/THREADS/SERVER]

# point SECTION WORKLOAD THREADS SERVER: one sysbench run with counter deltas.
point() {
  local sec=$1 w=$2 t=$3 s=$4
  local logf="$work/$s.$sec.$w.$t.log" status=ok before after b0="" b1="" check=- test
  local -a args
  read -ra args <<<"$(sb_conn "$s")"
  if [[ $w == hot_row ]]; then
    test=$here/hot_row.lua
    b0=$(hot_b "$s") || die "$s: cannot read t1"
  else
    test=$w
    args+=(--tables=1 "--table-size=$table_size")
  fi
  before=$(counters "$s") || die "$s: SHOW GLOBAL STATUS failed"
  local cpu0 cpu1
  cpu0=$(proc_cpu_ticks "${pid[$s]}")
  timeout $((duration + 120)) sysbench "$test" "${args[@]}" --threads="$t" --time="$duration" \
    --db-ps-mode="$ps_mode" --percentile=99 --report-interval=0 run >"$logf" 2>&1 || status=FAIL
  grep -q FATAL "$logf" && status=FAIL
  alive "${pid[$s]}" || { tail -n 20 "$logf" >&2; die "$s died during $sec $w threads=$t"; }
  cpu1=$(proc_cpu_ticks "${pid[$s]}")
  after=$(counters "$s") || die "$s: SHOW GLOBAL STATUS failed"

  local tx tps p99 errs
  tx=$(sed -nE '/^ *transactions: /{s/^ *transactions: +([0-9]+) .*/\1/p;q}' "$logf")
  tps=$(sed -nE '/^ *transactions: /{s/^ *transactions: +[0-9]+ +\(([0-9.]+) per sec.*/\1/p;q}' "$logf")
  p99=$(sed -nE '/99th percentile:/{s/.*: +([0-9.]+).*/\1/p;q}' "$logf")
  errs=$(sed -nE '/^ *ignored errors: /{s/^ *ignored errors: +([0-9]+) .*/\1/p;q}' "$logf")

  local c0 g0 f0 c1 g1 f1 dc dg dlog dbin fpc gsz
  read -r c0 g0 f0 <<<"$before"
  read -r c1 g1 f1 <<<"$after"
  dc=$((c1 - c0)) dg=$((g1 - g0)) dlog=$((f1 - f0)) dbin=0
  # With sync_binlog=1 MariaDB fsyncs the binlog once per binlog group commit.
  [[ $s == mariadb && $sec != async ]] && dbin=$dg
  # Server CPU (utime+stime of its process) per transaction sysbench completed, in microseconds.
  local cpt
  cpt=$(awk -v d=$((cpu1 - cpu0)) -v hz="$(getconf CLK_TCK)" -v n="${tx:-0}" 'BEGIN { if (n > 0) printf "%.1f", d * 1e6 / hz / n; else printf "-" }')
  fpc=$(awk -v f=$((dlog + dbin)) -v c="$dc" 'BEGIN { if (c > 0) printf "%.4f", f / c; else printf "-" }')
  gsz=$(awk -v c="$dc" -v g="$dg" 'BEGIN { if (g > 0) printf "%.2f", c / g; else printf "-" }')

  if [[ $w == hot_row && $status == ok ]]; then
    b1=$(hot_b "$s") || die "$s: cannot read t1"
    if [[ -n $tx && $((b1 - b0)) -eq $tx ]]; then
      check=ok
    else
      check="MISMATCH: b +$((b1 - b0)), sysbench ${tx:-?} transactions"
      status=MISMATCH
      log "error: $s hot row threads=$t: b went from $b0 to $b1 (+$((b1 - b0))) but sysbench reported ${tx:-?} transactions"
    fi
  fi
  if [[ $status != ok ]]; then
    failures=$((failures + 1))
    if [[ $status == FAIL ]]; then
      log "FAIL $s $sec $w threads=$t (log: $logf)"
      grep -m 5 -E 'FATAL|error' "$logf" >&2 || true
    fi
    cp "$logf" "$out/commit-path.failed.$s.$sec.$w.$t.log"
  fi
  local k=$sec/$w/$t/$s
  res[tps/$k]=${tps:--}
  res[p99/$k]=${p99:--}
  res[fpc/$k]=$fpc
  res[gsz/$k]=$gsz
  res[err/$k]=${errs:--}
  res[chk/$k]=$check
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sec" "$w" "$t" "$s" "$status" \
    "${tps:--}" "${tx:--}" "${p99:--}" "${errs:--}" "$dc" "$dg" "$dlog" "$dbin" "$fpc" "$gsz" "$check" "$cpt" >>"$tsv"
  log "$s $sec $w threads=$t: $status tps ${tps:--} p99 ${p99:--} ms fsyncs/commit $fpc group $gsz${b1:+ b $b0->$b1}"
}

sec_workloads() { if [[ $1 == hot ]]; then echo hot_row; else echo "$workloads"; fi; }
sec_threads() {
  case $1 in
    durable) echo "$threads_list" ;;
    async) echo "$async_threads" ;;
    hot) echo "$hot_threads" ;;
  esac
}

for sec in $sections; do
  if [[ $sec == async ]]; then set_mode async; else set_mode sync; fi
  for w in $(sec_workloads "$sec"); do
    for t in $(sec_threads "$sec"); do
      for s in $servers; do
        point "$sec" "$w" "$t" "$s"
      done
    done
  done
done
set_mode sync

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }
have_both=0
[[ " $servers " == *" kiln "* && " $servers " == *" mariadb "* ]] && have_both=1
v() { echo "${res[$1/$2]:--}"; }

md=$out/commit-path.md
{
  echo "## Commit path: Kiln vs MariaDB"
  echo
  echo "$(date -u '+%F %H:%M UTC'); $(nproc) cores ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)," \
    "kernel $(uname -r)); data dirs on $fs_type. $(sysbench --version), 1 table x $table_size rows," \
    "$duration s per point, --db-ps-mode=$ps_mode, client on the same machine, servers alternating point by point."
  for s in $servers; do
    if [[ $s == kiln ]]; then
      echo "- kiln: ${version[kiln]} (commit $kiln_rev)${kiln_flags:+, extra flags: $kiln_flags}"
    else
      echo "- mariadb: ${version[mariadb]} (bench/mariadb-primary.cnf: log_bin, ROW, sync_binlog=1, innodb_flush_log_at_trx_commit=1)"
    fi
  done
  echo
  echo "Command: \`$cmdline\`"
  echo
  if [[ $probe_count -gt 0 ]]; then
    echo "Raw fsync baseline (single thread, dd bs=4k count=$probe_count oflag=dsync on the data dirs' filesystem): $probe syncs/s."
  else
    echo "Raw fsync baseline: skipped (FSYNC_PROBE_COUNT=0)."
  fi
  echo
  echo "fsyncs/commit and group size are deltas of SHOW GLOBAL STATUS over each run."
  echo "Kiln: Kiln_log_fsyncs / Kiln_commits; Kiln_commits / Kiln_commit_groups."
  echo "MariaDB: (Innodb_data_fsyncs + Binlog_group_commits when sync_binlog=1) / Binlog_commits;"
  echo "Binlog_commits / Binlog_group_commits. Innodb_data_fsyncs holds the redo log fsyncs (10.11 has no"
  echo "Innodb_os_log_fsyncs) and also page flushing's data file fsyncs."
  for sec in $sections; do
    echo
    case $sec in
      durable) echo "### Durable: Kiln durability sync vs MariaDB sync_binlog=1, innodb_flush_log_at_trx_commit=1" ;;
      async) echo "### Not durable: Kiln --durability=async (log fsync every 100 ms) vs MariaDB sync_binlog=0, innodb_flush_log_at_trx_commit=2" ;;
      hot) echo "### Hot row, durable: autocommit UPDATE t1 SET b=b+1 WHERE a=1 from every client"
        echo
        echo "check: b grew by exactly the transactions sysbench reported; errors: deadlocks / lock wait timeouts sysbench retried." ;;
    esac
    echo
    hdr="| workload | threads | MariaDB TPS | Kiln TPS | Kiln/MariaDB TPS | MariaDB p99 ms | Kiln p99 ms | MariaDB fsyncs/commit | Kiln fsyncs/commit | MariaDB group size | Kiln group size |"
    sep="|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    if [[ $sec == hot ]]; then
      hdr+=" MariaDB errors | Kiln errors | MariaDB check | Kiln check |"
      sep+="---:|---:|---|---|"
    fi
    echo "$hdr"
    echo "$sep"
    for w in $(sec_workloads "$sec"); do
      for t in $(sec_threads "$sec"); do
        m=$sec/$w/$t/mariadb
        k=$sec/$w/$t/kiln
        tr=-
        [[ $have_both == 1 ]] && tr=$(ratio "$(v tps "$k")" "$(v tps "$m")")
        row="| $w | $t | $(v tps "$m") | $(v tps "$k") | $tr | $(v p99 "$m") | $(v p99 "$k")"
        row+=" | $(v fpc "$m") | $(v fpc "$k") | $(v gsz "$m") | $(v gsz "$k") |"
        if [[ $sec == hot ]]; then
          row+=" $(v err "$m") | $(v err "$k") | $(v chk "$m") | $(v chk "$k") |"
        fi
        echo "$row"
      done
    done
  done
  if [[ $failures -ne 0 ]]; then
    echo
    echo "**$failures point(s) failed** (sysbench aborted or hot-row check mismatch; logs: commit-path.failed.*.log)."
  fi
} >"$md"
cat "$md"
log "results in $md and $tsv"
[[ $failures -eq 0 ]]
