#!/usr/bin/env bash
# Group commit under concurrency (issue 12, target 2): Kiln builds against MariaDB, median of REPS runs.
#
#   bench/commit-pipeline.sh
#   BINS="before=/tmp/kiln-old after=bin/kiln" bench/commit-pipeline.sh      # before vs after
#   BINS="serial=bin/kiln pipelined=bin/kiln,--commit-pipeline" bench/commit-pipeline.sh
#   REPS=1 DURATION=5 bench/commit-pipeline.sh                                # smoke run
#
# Each repetition runs bench/commit-path.sh's durable section (oltp_update_non_index and oltp_insert
# at $THREADS, durable on both servers, MariaDB with bench/mariadb-primary.cnf) once per Kiln binary
# in $BINS (label=path[,flag...]: KILN_BIN and KILN_FLAGS of commit-path.sh), with MariaDB alongside
# the first binary only
# (commit-path.sh alternates the two servers point by point). The binaries take turns within each
# repetition, so a noisy minute on this shared machine hits all of them alike.
#
# Per point and server: the median over the repetitions of TPS, p99, fsyncs per commit and commits
# per fsync group, the server's CPU per transaction (utime+stime over the point), exactly as
# commit-path.sh counts them (Kiln: Kiln_log_fsyncs / Kiln_commits and
# Kiln_commits / Kiln_commit_groups; MariaDB: (Innodb_data_fsyncs + Binlog_group_commits) /
# Binlog_commits and Binlog_commits / Binlog_group_commits), and the machine's raw fsync rate
# (commit-path.sh's dd probe: 4 KiB O_DSYNC writes from one thread, before each repetition).
#
# Writes $OUT/commit-pipeline.md and $OUT/commit-pipeline.tsv (every repetition's rows).
# Environment: BINS ("kiln=bin/kiln"), REPS (3), DURATION (30), THREADS ("16 64"), TABLE_SIZE
# (10000), OUT (bench/results).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

bins=${BINS:-kiln=$repo/bin/kiln}
reps=${REPS:-3}
duration=${DURATION:-30}
threads=${THREADS:-16 64}
table_size=${TABLE_SIZE:-10000}
out=${OUT:-$here/results}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-pipeline.XXXXXX")
trap 'rm -rf "$work"' EXIT

labels=()
for b in $bins; do
  bin_entry "$b"
  [[ $label != "$b" && -x $path ]] || die "BINS entry $b: want label=path to an executable kiln"
  [[ $label != mariadb ]] || die "label mariadb is taken"
  labels+=("$label")
done

tsv=$out/commit-pipeline.tsv
printf 'rep\tserver\tworkload\tthreads\tstatus\ttps\tp99_ms\tfsyncs_per_commit\tgroup_size\tfsync_probe_per_s\tcpu_us_per_tx\n' >"$tsv"
for ((r = 1; r <= reps; r++)); do
  first=1
  for b in $bins; do
    bin_entry "$b"
    servers=kiln
    [[ $first == 1 ]] && servers="mariadb kiln"
    first=0
    d=$work/$r.$label
    mkdir -p "$d"
    log "repetition $r/$reps: $label ($path${flags:+ $flags}) with servers: $servers"
    KILN_BIN=$path KILN_FLAGS=$flags OUT=$d SECTIONS=durable SERVERS="$servers" THREADS="$threads" DURATION="$duration" \
      TABLE_SIZE="$table_size" "$here/commit-path.sh" >"$d/stdout" 2>"$d/stderr" ||
      { tail -n 20 "$d/stderr" >&2; die "commit-path.sh failed ($label, repetition $r)"; }
    probe=$(sed -nE 's/.*fsync baseline: ([0-9]+) syncs\/s.*/\1/p' "$d/stderr" | head -n 1)
    # commit-path.tsv: section workload threads server status tps transactions p99_ms ignored_errors
    # commits groups log_fsyncs binlog_fsyncs fsyncs_per_commit group_size check cpu_us_per_tx
    awk -F'\t' -v r="$r" -v label="$label" -v probe="${probe:--}" 'NR > 1 {
        s = ($4 == "kiln" ? label : $4)
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r, s, $2, $3, $5, $6, $8, $14, $15, probe, $17
      }' "$d/commit-path.tsv" >>"$tsv"
  done
done

md=$out/commit-pipeline.md
{
  echo "## Group commit: Kiln (${labels[*]}) vs MariaDB, durable, median of $reps"
  echo
  echo "$(date -u '+%F %H:%M UTC'); $(nproc) cores, kernel $(uname -r); $(sysbench --version); 1 table x" \
    "$table_size rows, $duration s per point, --db-ps-mode=auto, servers alternating point by point."
  echo
  echo "Command: \`BINS=\"$bins\" REPS=$reps DURATION=$duration THREADS=\"$threads\" bench/commit-pipeline.sh\`"
  echo
  echo "Raw fsync (dd bs=4k oflag=dsync, one thread), per repetition: $(awk -F'\t' 'NR > 1 && !seen[$1]++ { printf "%s%s/s", (n++ ? ", " : ""), $10 }' "$tsv")"
  echo "(1 / that is the fsync latency)."
  echo
  echo "| workload | threads | server | TPS | p99 ms | fsyncs/commit | commits/group | server CPU us/tx | TPS vs MariaDB |"
  echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' -v order="mariadb ${labels[*]}" '
    function median(key, f,    n, i, j, t, a) {
      n = split(vals[key, f], a, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      if (n == 0) return "-"
      return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    NR > 1 && $5 == "ok" {
      k = $3 SUBSEP $4 SUBSEP $2
      if (!(($3 SUBSEP $4) in seen)) { seen[$3, $4] = 1; pts[++np] = $3 SUBSEP $4 }
      for (f = 6; f <= 11; f++) if (f != 10 && $f != "-" && $f != "") vals[k, f] = vals[k, f] " " $f
    }
    END {
      ns = split(order, srv, " ")
      for (p = 1; p <= np; p++) {
        split(pts[p], wt, SUBSEP)
        m = median(pts[p] SUBSEP "mariadb", 6)
        for (s = 1; s <= ns; s++) {
          k = pts[p] SUBSEP srv[s]
          tps = median(k, 6)
          ratio = (m + 0 > 0 && tps + 0 > 0) ? sprintf("%.2f", tps / m) : "-"
          printf "| %s | %s | %s | %.0f | %s | %s | %s | %s | %s |\n", wt[1], wt[2], srv[s], tps, median(k, 7), median(k, 8), median(k, 9), median(k, 11), ratio
        }
      }
    }' "$tsv"
} >"$md"
cat "$md"
log "results in $md and $tsv"
