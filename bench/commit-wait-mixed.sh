#!/usr/bin/env bash
# Holding commit groups open (--commit-wait-time) where it can only cost: writers among readers.
#
#   BINS="off=bin/kiln,--commit-wait-time=0 on=bin/kiln" bench/commit-wait-mixed.sh
#
# For each Kiln build in $BINS (label=path[,flag...]) and each repetition, a fresh server, one sysbench
# table of $TABLE_SIZE rows, then $WRITERS threads of oltp_update_non_index (durable) beside $READERS
# threads of oltp_point_select, both for $DURATION seconds. The readers keep commands in progress
# while every writer commits, so the loop's wait for other commits (repl gather) finds none: this
# measures what the back-off leaves of its cost. Prints the writers' TPS and p99 and the readers'
# QPS per run, then medians per build, with Kiln_commit_wait_timeouts and commits per group.
#
# Environment: BINS (required), REPS (3), DURATION (10), TABLE_SIZE (10000), WRITERS (1),
# READERS (8).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

[[ -n ${BINS:-} ]] || die "set BINS=\"label=path[,flag...] ...\""
reps=${REPS:-3}
duration=${DURATION:-10}
table_size=${TABLE_SIZE:-10000}
writers=${WRITERS:-1}
readers=${READERS:-8}
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-cwmixed.XXXXXX")
trap 'for d in "$work"/*/; do "$repo/scripts/kiln.sh" stop "$d" >/dev/null 2>&1 || true; done; rm -rf "$work"' EXIT

status() { # PORT VAR: a global status value
  mysql_tcp 127.0.0.1 "$1" -N -e "SHOW GLOBAL STATUS LIKE '$2'" | awk '{print $2}'
}

sb() { # PORT WORKLOAD THREADS EXTRA...
  local port=$1 w=$2 t=$3
  shift 3
  sysbench "$w" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root \
    --mysql-db=sbtest --tables=1 --table-size="$table_size" --threads="$t" --time="$duration" \
    --percentile=99 --db-ps-mode=auto "$@" run
}

declare -A wtps wp99 rqps
for ((r = 1; r <= reps; r++)); do
  for b in $BINS; do
    bin_entry "$b"
    dir=$work/$label-$r
    port=$(KILN_BIN=$path KILN_FLAGS=$flags "$repo/scripts/kiln.sh" start "$dir")
    mysql_tcp 127.0.0.1 "$port" -e "CREATE DATABASE sbtest"
    sysbench oltp_update_non_index --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
      --mysql-user=root --mysql-db=sbtest --tables=1 --table-size="$table_size" prepare >/dev/null
    c0=$(status "$port" Kiln_commits) g0=$(status "$port" Kiln_commit_groups) t0=$(status "$port" Kiln_commit_wait_timeouts)
    sb "$port" oltp_point_select "$readers" >"$dir/readers.out" 2>&1 &
    rpid=$!
    sb "$port" oltp_update_non_index "$writers" >"$dir/writers.out" 2>&1
    wait "$rpid"
    c1=$(status "$port" Kiln_commits) g1=$(status "$port" Kiln_commit_groups) t1=$(status "$port" Kiln_commit_wait_timeouts)
    wt=$(awk '/transactions:/ {gsub(/[(]/,"",$3); print $3}' "$dir/writers.out")
    wp=$(awk '/99th percentile:/ {print $3}' "$dir/writers.out")
    rq=$(awk '/queries:/ {gsub(/[(]/,"",$3); print $3}' "$dir/readers.out")
    wtps[$label]+="$wt " wp99[$label]+="$wp " rqps[$label]+="$rq "
    log "$label rep $r: writers tps $wt p99 $wp ms; readers qps $rq; commits/group $(awk -v c=$((c1 - c0)) -v g=$((g1 - g0)) 'BEGIN{printf "%.2f", g ? c/g : 0}'); wait timeouts $((t1 - t0)) of $((g1 - g0)) groups"
    KILN_BIN=$path "$repo/scripts/kiln.sh" stop "$dir" >/dev/null
  done
done
printf '| build | writers TPS | writers p99 ms | readers QPS |\n|---|---:|---:|---:|\n'
for b in $BINS; do
  label=${b%%=*}
  # shellcheck disable=SC2086
  printf '| %s | %s | %s | %s |\n' "$label" "$(median ${wtps[$label]})" "$(median ${wp99[$label]})" "$(median ${rqps[$label]})"
done
