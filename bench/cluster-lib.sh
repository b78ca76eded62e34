# shellcheck shell=bash
# Helpers for benchmarks on a local Kiln cluster (bench/commit-ack.sh, bench/read-scaleout.sh).
# Source it with KILN_BIN exported (it sources scripts/lib.sh itself); it defines functions and the
# cl_* variables below only.
#
#   cluster_start WORK N CLUSTER_ID    N voters in WORK/n1..nN, waits for a leader
#   cluster_add_learner ID             one more node, a learner (kiln cluster add --learner, --join)
#   cluster_stop                       stops every node started (for an EXIT trap); never fails
#
# After cluster_start: cl_nodes (the node ids, learners appended), cl_dir[ID], cl_leader (the
# leader's id), cl_peers (the voters' --peers list), cl_cluster_id. A node's MySQL port is
# $(cluster_port ID), its HTTP port $(cluster_http_port ID), its pid $(cat "${cl_dir[ID]}/pid").
# Each node: `kiln serve --node-id ID --raft-listen 127.0.0.1:P --peers ... --cluster-id ...` through
# scripts/kiln.sh (free ports, data under WORK/nID, log in WORK/nID/kiln.log), durability sync.

cl_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$cl_repo/scripts/lib.sh"

cl_nodes=()
cl_dir=()
cl_leader=""
cl_peers=""
cl_cluster_id=""

# http_code PORT PATH prints the HTTP status of GET 127.0.0.1:PORT/PATH (000 when nothing answers).
http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$1$2" 2>/dev/null || true; }

# mq PORT ARGS...: the mysql CLI against 127.0.0.1:PORT as root, batch output without headers.
mq() { mysql_tcp 127.0.0.1 "$1" -N -B "${@:2}"; }

# fsync_ms DIR COUNT prints the milliseconds one 4 KiB O_DSYNC write takes on DIR's filesystem
# (scripts/lib.sh fsync_rate over COUNT writes), or "-".
fsync_ms() {
  local r
  r=$(fsync_rate "$1" "$2")
  awk -v r="$r" 'BEGIN { if (r + 0 > 0) printf "%.3f", 1000 / r; else printf "-" }'
}

# conditions DIR COUNT prints "FSYNC_MS LOAD": fsync_ms DIR COUNT and the 1-minute load average,
# the machine's state a benchmark reports before and after its runs.
conditions() { echo "$(fsync_ms "$1" "$2") $(cut -d' ' -f1 /proc/loadavg)"; }

cluster_port() { cat "${cl_dir[$1]}/port"; }
cluster_http_port() { cat "${cl_dir[$1]}/http_port"; }

cluster_start() {
  local work=$1 n=$2 i d try raft=() pids=()
  cl_cluster_id=$3
  cl_peers=""
  for ((i = 1; i <= n; i++)); do
    raft[i]=$(free_port)
    cl_peers+="${cl_peers:+,}$i=127.0.0.1:${raft[i]}"
  done
  for ((i = 1; i <= n; i++)); do
    d=$work/n$i
    mkdir -p "$d"
    cl_dir[i]=$d
    cl_nodes+=("$i")
    free_port >"$d/port"
    free_port >"$d/http_port"
    KILN_PORT=$(cat "$d/port") KILN_HTTP_PORT=$(cat "$d/http_port") \
      KILN_FLAGS="--node-id $i --raft-listen 127.0.0.1:${raft[i]} --peers $cl_peers --cluster-id $cl_cluster_id" \
      "$cl_repo/scripts/kiln.sh" start "$d" >/dev/null 2>>"$d/start.log" &
    pids+=($!)
  done
  for ((i = 1; i <= n; i++)); do
    wait "${pids[i - 1]}" || { tail -n 20 "$work/n$i/kiln.log" >&2; die "node $i did not start"; }
  done
  cl_leader=""
  for ((try = 0; try < 600; try++)); do
    for ((i = 1; i <= n; i++)); do
      [[ $(http_code "$(cluster_http_port "$i")" /primary) == 200 ]] && cl_leader=$i
    done
    [[ -z $cl_leader ]] || break
    sleep 0.05
  done
  [[ -n $cl_leader ]] || die "no leader within 30 s"
  log "$n nodes up, leader node $cl_leader (MySQL port $(cluster_port "$cl_leader"))"
}

cluster_add_learner() {
  local id=$1 d raft i
  d=$(dirname "${cl_dir[$cl_leader]}")/n$id
  mkdir -p "$d"
  raft=$(free_port)
  "$KILN_BIN" cluster add --learner --http "127.0.0.1:$(cluster_http_port "$cl_leader")" --id "$id" \
    --raft "127.0.0.1:$raft" >>"$d/start.log" 2>&1 || { cat "$d/start.log" >&2; die "kiln cluster add --learner $id failed"; }
  cl_dir[id]=$d
  cl_nodes+=("$id")
  KILN_FLAGS="--node-id $id --raft-listen 127.0.0.1:$raft --join --cluster-id $cl_cluster_id --peers $cl_peers" \
    "$cl_repo/scripts/kiln.sh" start "$d" >/dev/null 2>>"$d/start.log" || { tail -n 20 "$d/kiln.log" >&2; die "learner $id did not start"; }
  for ((i = 0; i < 600; i++)); do
    [[ $(http_code "$(cluster_http_port "$id")" '/replica?max_lag=5') == 200 ]] && break
    sleep 0.05
  done
  ((i < 600)) || die "learner $id not within 5 s of the leader after 30 s"
  log "learner node $id up (MySQL port $(cluster_port "$id"))"
}

# cluster_alive dies (with the node's log tail) if a node has exited.
cluster_alive() {
  local i
  for i in "${cl_nodes[@]}"; do
    alive "$(cat "${cl_dir[i]}/pid")" || { tail -n 20 "${cl_dir[i]}/kiln.log" >&2; die "node $i died"; }
  done
}

cluster_stop() {
  local i
  for i in "${cl_nodes[@]}"; do
    "$cl_repo/scripts/kiln.sh" stop "${cl_dir[i]}" || log "warning: ${cl_dir[i]} did not stop cleanly"
  done
}
