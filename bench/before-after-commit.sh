#!/bin/bash
# Usage: build the two binaries first (e.g. git worktree add /tmp/old <commit>; go build -o /tmp/kiln-old ./cmd/kiln there,
# and go build -o /tmp/kiln-new ./cmd/kiln here), then run this script: it starts both on /tmp/ba and alternates them.
# before/after single-node commit path: sysbench oltp_update_non_index, alternating
mkdir -p /tmp/ba && cd /tmp/ba && rm -rf old new
setsid /tmp/kiln-old serve --data-dir old --listen 127.0.0.1:17601 --http 127.0.0.1:17602 </dev/null >old.log 2>&1 & echo $! > old.pid
setsid /tmp/kiln-new serve --data-dir new --listen 127.0.0.1:17611 --http 127.0.0.1:17612 </dev/null >new.log 2>&1 & echo $! > new.pid
sleep 2
for p in 17601 17611; do
  mariadb -h127.0.0.1 -P$p -uroot --skip-ssl -e "create database sbtest"
  sysbench oltp_update_non_index --mysql-host=127.0.0.1 --mysql-port=$p --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=10000 prepare >/dev/null
done
for rep in 1 2 3; do
 for th in 1 16; do
  for p in 17601 17611; do
    r=$(sysbench oltp_update_non_index --mysql-host=127.0.0.1 --mysql-port=$p --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=10000 --threads=$th --time=10 --percentile=99 --db-ps-mode=auto run | awk '/transactions:/ {gsub("\\(","",$3); print $3} /99th percentile/ {print $3}' | tr '\n' ' ')
    echo "rep=$rep threads=$th $( [ $p = 17601 ] && echo old || echo new ) tps,p99: $r"
  done
 done
done
kill "$(cat old.pid)" "$(cat new.pid)"
