#!/usr/bin/env bash
# A cluster of flipd nodes on this machine, to try one and to measure it:
# a PostgreSQL server and a NATS server of its own and NODES flipd on
# loopback sharing them.
#
#   dist/cluster.sh start DIR [NODES]   PostgreSQL in DIR/postgres and NATS in
#                                       DIR/nats (Debian's postgresql and
#                                       nats-server, as tests/tools/postgres.sh
#                                       and nats.sh start them), NODES (3) flipd
#                                       named a, b, c, ... on 127.0.0.1:7341,
#                                       7342, ..., metrics on 127.0.0.1:9341, ...
#   dist/cluster.sh stop DIR            every node (SIGTERM), then the servers
#
# Each node's configuration is DIR/<node>.ron, its log DIR/<node>.log; flipd
# is target/release/flipd, built first if missing. Kill a node (kill -9 "$(cat
# DIR/b.pid)") and the others take its games over within its lease (3 s)
# and a second; its players reconnect to another node and take their seats
# back.
set -euo pipefail

command=${1:?start or stop}
dir=${2:?a directory}
nodes=${3:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
names=(a b c d e f g h i j)

start() {
  if (( nodes < 1 || nodes > ${#names[@]} )); then
    echo "cluster.sh: 1 to ${#names[@]} nodes" >&2
    exit 1
  fi
  mkdir -p "$dir"
  local flipd="$here/target/release/flipd"
  if [[ ! -x "$flipd" ]]; then
    (cd "$here" && cargo build --release -p flipd >&2)
  fi
  local server
  server=$(bash "$here/tests/tools/postgres.sh" start "$dir/postgres")
  # A database of the cluster's own beside the server's default one.
  psql -q "$server" -c 'CREATE DATABASE flipline' >/dev/null
  local url=${server%/*}/flipline
  local nats
  nats=$(bash "$here/tests/tools/nats.sh" start "$dir/nats")
  for (( i = 0; i < nodes; i++ )); do
    local node=${names[$i]}
    cat > "$dir/$node.ron" <<RON
(
    listen: "127.0.0.1:$((7341 + i))",
    metrics: (listen: "127.0.0.1:$((9341 + i))"),
    store: (url: "$url"),
    cluster: (node: "$node", nats: "$nats"),
)
RON
    "$flipd" --config "$dir/$node.ron" > "$dir/$node.log" 2>&1 &
    echo $! > "$dir/$node.pid"
  done
  for (( i = 0; i < nodes; i++ )); do
    local node=${names[$i]}
    for _ in $(seq 100); do
      grep -q "listening on" "$dir/$node.log" && break
      kill -0 "$(cat "$dir/$node.pid")" 2>/dev/null || { cat "$dir/$node.log" >&2; exit 1; }
      sleep 0.1
    done
    echo "node $node: 127.0.0.1:$((7341 + i)) (metrics 127.0.0.1:$((9341 + i))), log $dir/$node.log"
  done
  echo "store: $url, bus: $nats"
}

stop() {
  for pid in "$dir"/*.pid; do
    [[ -e "$pid" ]] || continue
    kill "$(cat "$pid")" 2>/dev/null || true
  done
  for pid in "$dir"/*.pid; do
    [[ -e "$pid" ]] || continue
    while kill -0 "$(cat "$pid")" 2>/dev/null; do sleep 0.1; done
    rm -f "$pid"
  done
  bash "$here/tests/tools/nats.sh" stop "$dir/nats"
  bash "$here/tests/tools/postgres.sh" stop "$dir/postgres"
}

case "$command" in
start) start ;;
stop) stop ;;
*) echo "cluster.sh: start or stop" >&2; exit 1 ;;
esac
