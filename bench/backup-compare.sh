#!/usr/bin/env bash
# Online backup, Kiln against MariaDB 10.11 with mariadb-backup, in one run (issue 11's benchmark).
#
#   bench/backup-compare.sh                                   # or: make bench-backup
#   TABLES=1 TABLE_SIZE=20000 DURATION=5 ROUNDS=1 bench/backup-compare.sh   # smoke run
#
# Starts Kiln ($KILN_BIN, default bin/kiln, via scripts/kiln.sh; `make build` first) and MariaDB
# (Debian's mariadb-server via scripts/mariadb.sh with the reference cnf bench/mariadb-primary.cnf),
# each on a temporary data dir under $TMPDIR (default /tmp) and a free port, and one server after
# the other:
#   1. sysbench prepare of $TABLES x $TABLE_SIZE rows (sbtest), every row read once;
#   2. full backup of the idle server, $ROUNDS times: time, size (du), throughput = size / time.
#      Kiln: kiln backup --from HTTP --to DIR. MariaDB: mariadb-backup --backup --target-dir DIR;
#   3. restore of the last full backup, $ROUNDS times, until a server started on it answers:
#      Kiln: kiln restore --from DIR --data-dir NEW, then kiln serve on NEW (which replays the log
#      after the engine snapshot). MariaDB: mariadb-backup --prepare (applies its redo copy),
#      --copy-back into a new datadir, then mariadbd on it;
#   4. sysbench oltp_read_write at $THREADS threads for $DURATION s, $ROUNDS rounds, each round once
#      without a backup and once with full backups running back to back for the whole run (the
#      first started with sysbench; the last one is let finish): TPS and p99 latency (ms);
#   5. ~10% of rows changed (UPDATE ... SET k = k + 1 WHERE id % 10 = 0, in chunks of $CHUNK ids),
#      then an incremental backup on top of a new full one: its size and time. Kiln: kiln backup
#      --incremental-from FULL $KILN_INC_FLAGS (file form: the sstables FULL does not hold plus the log
#      after its checkpoint; KILN_INC_FLAGS="--form logical": the log since FULL). MariaDB: mariadb-backup --backup
#      --incremental-basedir FULL (the pages changed since FULL's LSN). Kiln's log-only incremental
#      (--form logical --incremental-from FULL: the log since FULL) is taken beside it.
# Medians of $ROUNDS are reported. Before the servers start, the raw fsync rate of the data dirs'
# filesystem (lib.sh fsync_rate: dd of $FSYNC_PROBE_COUNT 4 KiB O_DSYNC writes).
#
# Writes $OUT/backup-compare.md and $OUT/backup-compare.tsv (OUT defaults to bench/results). Exits
# non-zero if a server fails to start, a backup or restore fails, or a sysbench run aborts.
#
# Environment: TABLES (8), TABLE_SIZE (500000: 4 M rows, the issue's "1 GB"; about 15 min for both
# servers), THREADS (8), DURATION (30), ROUNDS (3), CHUNK
# (20000), SERVERS ("kiln mariadb"), FSYNC_PROBE_COUNT (1000), KEEP=1 keeps the temporary dirs,
# KILN_BACKUP_FLAGS / MARIADB_BACKUP_FLAGS (extra flags of every full backup, e.g. "--max-rate 20M"
# / "--throttle=20": Kiln's and mariadb-backup's own pacing, or "--form logical": Kiln's key stream;
# default none), KILN_INC_FLAGS (extra flags of Kiln's incremental backup).
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
chunk=${CHUNK:-20000}
servers=${SERVERS:-kiln mariadb}
probe_count=${FSYNC_PROBE_COUNT:-1000}
kiln_bin=${KILN_BIN:-$repo/bin/kiln}
kiln_backup_flags=${KILN_BACKUP_FLAGS:-}
kiln_inc_flags=${KILN_INC_FLAGS:-}
mariadb_backup_flags=${MARIADB_BACKUP_FLAGS:-}
out=${OUT:-$here/results}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-bkbench.XXXXXX")
clk_tck=$(getconf CLK_TCK)

command -v sysbench >/dev/null || die "sysbench not found: apt-get install -y sysbench"
[[ " $servers " != *" mariadb "* ]] || command -v mariadb-backup >/dev/null ||
  die "mariadb-backup not found: apt-get install -y mariadb-backup"

cleanup() {
  local s
  for s in kiln-restored mariadb-restored; do
    [[ -d $work/$s ]] || continue
    if [[ $s == kiln-* ]]; then "$repo/scripts/kiln.sh" stop "$work/$s" || true; else "$repo/scripts/mariadb.sh" stop "$work/$s" || true; fi
  done
  # shellcheck disable=SC2086 # servers is a list
  bench_cleanup "$work" $servers
}
trap cleanup EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", b - a }'; }
bytes_of() { du -sb "$1" | awk '{print $1}'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
rate() { awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f", b / 1048576 / s; else printf "-" }'; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A port
sb_common() {
  echo --db-driver=mysql --mysql-host=127.0.0.1 "--mysql-port=${port[$1]}" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest "--tables=$tables" "--table-size=$table_size"
}

# backup_full SERVER DIR: a full backup of the running SERVER into DIR (absent).
backup_full() {
  # shellcheck disable=SC2086 # the flags are lists
  case $1 in
    kiln) "$kiln_bin" backup --from "127.0.0.1:$(cat "$work/kiln/http_port")" --to "$2" $kiln_backup_flags ;;
    mariadb) mariadb-backup --defaults-file="$work/mariadb/my.cnf" --backup --user=root \
      --socket="$work/mariadb/mysqld.sock" --target-dir="$2" $mariadb_backup_flags ;;
  esac
}

# backup_inc SERVER DIR PREV: an incremental backup following PREV.
backup_inc() {
  # shellcheck disable=SC2086 # the flags are a list
  case $1 in
    kiln) "$kiln_bin" backup --from "127.0.0.1:$(cat "$work/kiln/http_port")" --to "$2" --incremental-from "$3" $kiln_inc_flags ;;
    mariadb) mariadb-backup --defaults-file="$work/mariadb/my.cnf" --backup --user=root \
      --socket="$work/mariadb/mysqld.sock" --target-dir="$2" --incremental-basedir="$3" ;;
  esac
}

# restore SERVER BACKUP: restores BACKUP into $work/SERVER-restored and starts a server on it
# (stopped again by the caller's restore_stop).
restore() {
  local dst=$work/$1-restored
  rm -rf "$dst"
  mkdir -p "$dst"
  case $1 in
    kiln)
      "$kiln_bin" restore --from "$2" --data-dir "$dst/data" >/dev/null
      "$repo/scripts/kiln.sh" start "$dst" >/dev/null
      ;;
    mariadb)
      # $2 is a copy of the backup (--prepare rewrites it in place), made before the clock starts.
      mariadb-backup --no-defaults --prepare --target-dir="$2"
      mariadb-backup --no-defaults --copy-back --target-dir="$2" --datadir="$dst/data"
      "$repo/scripts/mariadb.sh" start "$dst" >/dev/null
      ;;
  esac
}
restore_stop() {
  if [[ $1 == kiln ]]; then "$repo/scripts/kiln.sh" stop "$work/kiln-restored"; else "$repo/scripts/mariadb.sh" stop "$work/mariadb-restored"; fi
  rm -rf "${work:?}/$1-restored"
}

# sb_run SERVER LOG: oltp_read_write for $duration s; prints "TPS P99".
sb_run() {
  # shellcheck disable=SC2046
  timeout $((duration + 300)) sysbench oltp_read_write $(sb_common "$1") --threads="$threads" \
    --time="$duration" --percentile=99 --report-interval=0 run >"$2" 2>&1 || { tail -n 20 "$2" >&2; return 1; }
  ! grep -q FATAL "$2" || { grep -m 5 FATAL "$2" >&2; return 1; }
  local tps p99
  tps=$(sed -nE '/^ *transactions: /{s/^ *transactions: +[0-9]+ +\(([0-9.]+) per sec.*/\1/p;q}' "$2")
  p99=$(sed -nE '/99th percentile:/{s/.*: +([0-9.]+).*/\1/p;q}' "$2")
  echo "${tps:--} ${p99:--}"
}

fsync_per_s=$(fsync_rate "$work" "$probe_count")
log "fsync: $fsync_per_s syncs/s"
printf 'server\tmetric\tround\tvalue\n' >"$out/backup-compare.tsv"
tsv() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$out/backup-compare.tsv"; }

declare -A r version
for s in $servers; do
  case $s in
    kiln) port[kiln]=$("$repo/scripts/kiln.sh" start "$work/kiln") || die "kiln did not start" ;;
    mariadb) port[mariadb]=$("$repo/scripts/mariadb.sh" start "$work/mariadb") || die "mariadb did not start" ;;
    *) die "unknown server $s" ;;
  esac
  version[$s]=$(mysql_tcp 127.0.0.1 "${port[$s]}" -N -e 'SELECT VERSION()')
  mysql_tcp 127.0.0.1 "${port[$s]}" -e 'DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest'
  log "$s: prepare $tables x $table_size rows"
  t0=$(now)
  # shellcheck disable=SC2046
  sysbench oltp_read_write $(sb_common "$s") --threads="$tables" prepare >"$work/$s.prepare.log" 2>&1 ||
    { tail -n 20 "$work/$s.prepare.log" >&2; die "$s: prepare failed"; }
  r[$s/prepare_s]=$(secs "$t0" "$(now)")
  for ((i = 1; i <= tables; i++)); do
    mysql_tcp 127.0.0.1 "${port[$s]}" -D sbtest -N -e "SELECT COUNT(*), SUM(LENGTH(c)) FROM sbtest$i" >/dev/null
  done
  r[$s/data_bytes]=$(bytes_of "$work/$s/data")
  log "$s: prepared in ${r[$s/prepare_s]} s, data dir $(mib "${r[$s/data_bytes]}") MiB"

  # 2. Full backups of the idle server.
  times=""; sizes=""; cpus=""; spid=$(cat "$work/$s/pid")
  for ((k = 1; k <= rounds; k++)); do
    rm -rf "$work/$s.full"
    c0=$(proc_cpu_ticks "$spid")
    t0=$(now)
    # `times` in the subshell: the CPU time of the backup tool (its children).
    (backup_full "$s" "$work/$s.full" >"$work/$s.full.log" 2>&1 && times >"$work/times.out") ||
      { tail -n 20 "$work/$s.full.log" >&2; die "$s: full backup failed"; }
    t=$(secs "$t0" "$(now)")
    c1=$(proc_cpu_ticks "$spid")
    cpu=$(awk -v d=$((c1 - c0)) -v hz="$clk_tck" 'NR == 2 { gsub(/s/, ""); split($1, u, "m"); split($2, y, "m");
      printf "%.2f", u[1] * 60 + u[2] + y[1] * 60 + y[2] + d / hz }' "$work/times.out")
    cpus+=" $cpu"
    tsv "$s" full_backup_cpu_s "$k" "$cpu"
    b=$(bytes_of "$work/$s.full")
    times+=" $t"; sizes+=" $b"
    tsv "$s" full_backup_s "$k" "$t"; tsv "$s" full_backup_bytes "$k" "$b"
    log "$s: full backup $k: $t s, $(mib "$b") MiB"
  done
  r[$s/full_s]=$(median <<<"$times")
  r[$s/full_cpu]=$(median <<<"$cpus")
  r[$s/full_bytes]=$(median <<<"$sizes")

  # 3. Restores of the last full backup, to a server that answers.
  times=""
  for ((k = 1; k <= rounds; k++)); do
    src=$work/$s.full
    if [[ $s == mariadb ]]; then
      rm -rf "$work/mariadb.rbk"
      cp -a "$src" "$work/mariadb.rbk"
      src=$work/mariadb.rbk
    fi
    t0=$(now)
    restore "$s" "$src" >"$work/$s.restore.log" 2>&1 || { tail -n 20 "$work/$s.restore.log" >&2; die "$s: restore failed"; }
    t=$(secs "$t0" "$(now)")
    restore_stop "$s" >>"$work/$s.restore.log" 2>&1
    rm -rf "$work/mariadb.rbk"
    times+=" $t"
    tsv "$s" restore_s "$k" "$t"
    log "$s: restore $k: $t s"
  done
  r[$s/restore_s]=$(median <<<"$times")

  # 4. oltp_read_write without and during backups.
  tb=""; pb=""; tw=""; pw=""; bt=""
  for ((k = 1; k <= rounds; k++)); do
    read -r tps p99 < <(sb_run "$s" "$work/$s.sb.base.$k.log") || die "$s: sysbench failed"
    tb+=" $tps"; pb+=" $p99"
    tsv "$s" base_tps "$k" "$tps"; tsv "$s" base_p99_ms "$k" "$p99"
    log "$s: round $k without backup: $tps TPS, p99 $p99 ms"
    rm -f "$work/stop-backups"
    (
      n=0
      while [[ ! -e $work/stop-backups ]]; do
        n=$((n + 1))
        rm -rf "$work/$s.load"
        t0=$(now)
        backup_full "$s" "$work/$s.load" >"$work/$s.load.log" 2>&1 || { tail -n 20 "$work/$s.load.log" >&2; exit 1; }
        secs "$t0" "$(now)" >>"$work/$s.load.times"
      done
    ) &
    loop=$!
    read -r tps p99 < <(sb_run "$s" "$work/$s.sb.load.$k.log") || { touch "$work/stop-backups"; wait "$loop" || true; die "$s: sysbench failed"; }
    touch "$work/stop-backups"
    wait "$loop" || die "$s: a backup under load failed"
    tw+=" $tps"; pw+=" $p99"
    tsv "$s" backup_tps "$k" "$tps"; tsv "$s" backup_p99_ms "$k" "$p99"
    log "$s: round $k during backups ($(wc -l <"$work/$s.load.times") so far): $tps TPS, p99 $p99 ms"
  done
  bt=$(tr '\n' ' ' <"$work/$s.load.times")
  r[$s/base_tps]=$(median <<<"$tb"); r[$s/base_p99]=$(median <<<"$pb")
  r[$s/load_tps]=$(median <<<"$tw"); r[$s/load_p99]=$(median <<<"$pw")
  r[$s/load_full_s]=$(median <<<"$bt")
  r[$s/load_backups]=$(wc -l <"$work/$s.load.times")
  rm -rf "$work/$s.load"

  # 5. A new full backup, ~10% of rows changed, an incremental on top.
  rm -rf "$work/$s.full" "$work/$s.inc"
  backup_full "$s" "$work/$s.full" >"$work/$s.full.log" 2>&1 || { tail -n 20 "$work/$s.full.log" >&2; die "$s: full backup failed"; }
  t0=$(now)
  for ((i = 1; i <= tables; i++)); do
    for ((lo = 1; lo <= table_size; lo += chunk)); do
      mysql_tcp 127.0.0.1 "${port[$s]}" -D sbtest -e \
        "UPDATE sbtest$i SET k = k + 1 WHERE id BETWEEN $lo AND $((lo + chunk - 1)) AND id % 10 = 0"
    done
  done
  log "$s: updated 10% of rows in $(secs "$t0" "$(now)") s"
  t0=$(now)
  backup_inc "$s" "$work/$s.inc" "$work/$s.full" >"$work/$s.inc.log" 2>&1 || { tail -n 20 "$work/$s.inc.log" >&2; die "$s: incremental backup failed"; }
  r[$s/inc_s]=$(secs "$t0" "$(now)")
  r[$s/inc_bytes]=$(bytes_of "$work/$s.inc")
  r[$s/full2_bytes]=$(bytes_of "$work/$s.full")
  tsv "$s" inc_backup_s 1 "${r[$s/inc_s]}"; tsv "$s" inc_backup_bytes 1 "${r[$s/inc_bytes]}"
  log "$s: incremental backup ${r[$s/inc_s]} s, $(mib "${r[$s/inc_bytes]}") MiB (full $(mib "${r[$s/full2_bytes]}") MiB)"
  if [[ $s == kiln && $kiln_inc_flags != *logical* ]]; then
    # Beside the file-form incremental, the log-only one on the same full backup (the log since it).
    rm -rf "$work/kiln.inclog"
    t0=$(now)
    # It needs the node to hold the log since FULL: if it was purged, say so and go on.
    if "$kiln_bin" backup --from "127.0.0.1:$(cat "$work/kiln/http_port")" --to "$work/kiln.inclog" \
      --incremental-from "$work/kiln.full" --form logical >"$work/kiln.inclog.log" 2>&1; then
      r[kiln/inclog_s]=$(secs "$t0" "$(now)")
      r[kiln/inclog_bytes]=$(bytes_of "$work/kiln.inclog")
      tsv kiln inclog_backup_s 1 "${r[kiln/inclog_s]}"; tsv kiln inclog_backup_bytes 1 "${r[kiln/inclog_bytes]}"
      log "kiln: log-only incremental backup ${r[kiln/inclog_s]} s, $(mib "${r[kiln/inclog_bytes]}") MiB"
    else
      log "kiln: log-only incremental backup refused: $(tail -n 1 "$work/kiln.inclog.log")"
    fi
    rm -rf "$work/kiln.inclog"
  fi
  rm -rf "$work/$s.full" "$work/$s.inc"

  # One server at a time: stop this one before the next loads.
  if [[ $s == kiln ]]; then "$repo/scripts/kiln.sh" stop "$work/kiln"; else "$repo/scripts/mariadb.sh" stop "$work/mariadb"; fi
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }
{
  echo "## Online backup: Kiln vs mariadb-backup (bench/backup-compare.sh)"
  echo
  echo "$(date -u '+%F %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)." \
    "sysbench 1.0.20, $tables table(s) x $table_size rows; oltp_read_write at $threads threads," \
    "$duration s per run, --percentile=99; medians of $rounds; backup flags: Kiln '${kiln_backup_flags:-none}'," \
    "MariaDB '${mariadb_backup_flags:-none}'. fsync: $fsync_per_s syncs/s" \
    "($(awk -v r="$fsync_per_s" 'BEGIN { if (r + 0 > 0) printf "%.2f ms", 1000 / r; else printf "-" }') per 4 KiB O_DSYNC write)."
  for s in $servers; do
    extra=""
    [[ $s == mariadb ]] && extra=" (bench/mariadb-primary.cnf), $(mariadb-backup --version 2>&1 | head -1)"
    echo "- $s: ${version[$s]}$extra"
  done
  echo
  echo "| | Kiln | MariaDB |"
  echo "|---|---:|---:|"
  row() { echo "| $1 | ${2:--} | ${3:--} |"; }
  row "prepare (s)" "${r[kiln/prepare_s]:-}" "${r[mariadb/prepare_s]:-}"
  row "data dir after prepare (MiB)" "$(mib "${r[kiln/data_bytes]:-0}")" "$(mib "${r[mariadb/data_bytes]:-0}")"
  row "full backup, idle (s)" "${r[kiln/full_s]:-}" "${r[mariadb/full_s]:-}"
  row "full backup size (MiB)" "$(mib "${r[kiln/full_bytes]:-0}")" "$(mib "${r[mariadb/full_bytes]:-0}")"
  row "full backup throughput (MiB/s)" "$(rate "${r[kiln/full_bytes]:-0}" "${r[kiln/full_s]:-0}")" "$(rate "${r[mariadb/full_bytes]:-0}" "${r[mariadb/full_s]:-0}")"
  row "CPU s per idle full backup (server + backup tool)" "${r[kiln/full_cpu]:-}" "${r[mariadb/full_cpu]:-}"
  row "full backup under load (s, median of all)" "${r[kiln/load_full_s]:-}" "${r[mariadb/load_full_s]:-}"
  row "restore until the server answers (s)" "${r[kiln/restore_s]:-}" "${r[mariadb/restore_s]:-}"
  row "TPS without backup" "${r[kiln/base_tps]:-}" "${r[mariadb/base_tps]:-}"
  row "TPS during backups" "${r[kiln/load_tps]:-}" "${r[mariadb/load_tps]:-}"
  row "TPS during / without" "$(ratio "${r[kiln/load_tps]:-}" "${r[kiln/base_tps]:-}")" "$(ratio "${r[mariadb/load_tps]:-}" "${r[mariadb/base_tps]:-}")"
  row "p99 without backup (ms)" "${r[kiln/base_p99]:-}" "${r[mariadb/base_p99]:-}"
  row "p99 during backups (ms)" "${r[kiln/load_p99]:-}" "${r[mariadb/load_p99]:-}"
  row "p99 during / without" "$(ratio "${r[kiln/load_p99]:-}" "${r[kiln/base_p99]:-}")" "$(ratio "${r[mariadb/load_p99]:-}" "${r[mariadb/base_p99]:-}")"
  row "incremental after 10% of rows changed (MiB)" "$(mib "${r[kiln/inc_bytes]:-0}")" "$(mib "${r[mariadb/inc_bytes]:-0}")"
  row "incremental backup time (s)" "${r[kiln/inc_s]:-}" "${r[mariadb/inc_s]:-}"
  [[ -z ${r[kiln/inclog_bytes]:-} ]] || row "Kiln's log-only incremental (--form logical), MiB / s" \
    "$(mib "${r[kiln/inclog_bytes]}") / ${r[kiln/inclog_s]}" "-"
  row "its full backup (MiB)" "$(mib "${r[kiln/full2_bytes]:-0}")" "$(mib "${r[mariadb/full2_bytes]:-0}")"
  echo
  echo "Backups under load: $rounds x $duration s of sysbench, full backups back to back throughout" \
    "(Kiln ${r[kiln/load_backups]:--}, MariaDB ${r[mariadb/load_backups]:--} backups)."
} >"$out/backup-compare.md"
cat "$out/backup-compare.md"
log "results in $out/backup-compare.md and $out/backup-compare.tsv"
