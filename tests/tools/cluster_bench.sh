#!/usr/bin/env bash
# Measures a cluster on this machine (BENCHMARKS.md, "A cluster on one
# machine"), with dist/cluster.sh and target/release/flip-bench:
#   throughput: one node holding GAMES games against three nodes holding a
#     third each (three load processes at once), in turn, ROUNDS times;
#   watch: a spectator on another node against one on the game's node
#     (flip-bench watch, twenty games move by move);
#   far: three nodes, each load process seeking on its own node (with
#     the lobby's leader, most of those games join two nodes) against
#     each game's players on two nodes (made on one, joined from the next:
#     flip-bench load --far), GAMES/3 games a load process, in turn;
#   takeover: three nodes, GAMES/3 games on node b, b killed (SIGKILL) in
#     the middle of the load; the time from the kill until no game in play
#     is b's any more (polled in PostgreSQL every 20 ms).
#
#   tests/tools/cluster_bench.sh DIR [GAMES] [ROUNDS] [PARTS]
# PARTS: any of throughput, takeover, watch, far (the first three by default).
set -euo pipefail

dir=${1:?a directory}
games=${2:-300}
rounds=${3:-2}
parts=${4:-throughput takeover watch}
here=$(cd "$(dirname "$0")/../.." && pwd)
bench="$here/target/release/flip-bench"
cluster="$here/dist/cluster.sh"
(cd "$here" && cargo build --release -p flipd >&2 && cargo build --release -p flipline-tests --bin flip-bench >&2)

load() { # port games seconds [far port]
  "$bench" load --server "127.0.0.1:$1" --games "$2" --duration "$3" --cooldown 2 --json \
    ${4:+--far "127.0.0.1:$4"}
}

moves_per_s() { sed -n 's/.*"moves_per_s":\([0-9.]*\).*/\1/p'; }
p99() { sed -n 's/.*"p99":\([0-9.]*\).*/\1/p'; }

one_node() {
  rm -rf "$dir/one"
  "$cluster" start "$dir/one" 1 >/dev/null
  local out
  out=$(load 7341 "$games" 10)
  "$cluster" stop "$dir/one" >/dev/null
  echo "one node, $games games: $(echo "$out" | moves_per_s) moves/s, p99 $(echo "$out" | p99) ms"
}

three_nodes() { # [far: each game's white on the next node]
  rm -rf "$dir/three"
  "$cluster" start "$dir/three" 3 >/dev/null
  local third=$((games / 3))
  load 7341 "$third" 10 ${1:+7342} > "$dir/a.json" &
  load 7342 "$third" 10 ${1:+7343} > "$dir/b.json" &
  load 7343 "$third" 10 ${1:+7341} > "$dir/c.json" &
  wait
  "$cluster" stop "$dir/three" >/dev/null
  local total=0 worst=0
  for node in a b c; do
    total=$(echo "$total + $(moves_per_s < "$dir/$node.json")" | bc)
    worst=$(printf '%s\n%s\n' "$worst" "$(p99 < "$dir/$node.json")" | sort -g | tail -1)
  done
  local where=${1:+"each game's players on two nodes"}
  echo "three nodes, $third games each${where:+ ($where)}: $total moves/s, worst p99 $worst ms"
}

takeover() {
  rm -rf "$dir/kill"
  "$cluster" start "$dir/kill" 3 >/dev/null
  local url
  url=$(sed -n 's/.*url: "\(.*\)".*/\1/p' "$dir/kill/a.ron")
  load 7342 $((games / 3)) 20 > /dev/null 2>&1 &
  local loader=$!
  sleep 8
  local killed
  killed=$(date +%s%N)
  kill -9 "$(cat "$dir/kill/b.pid")"
  rm -f "$dir/kill/b.pid"
  # Games in play still owned by b: none once the others took them all.
  local sql="SELECT count(*) FROM games g JOIN nodes n ON n.incarnation = g.owner
             WHERE g.status = 'playing' AND n.node = 'b'"
  until [[ $(psql -qtA "$url" -c "$sql") == 0 ]]; do sleep 0.02; done
  local resumed
  resumed=$(date +%s%N)
  kill "$loader" 2>/dev/null || true
  wait "$loader" 2>/dev/null || true
  local taken
  taken=$( (grep -h "took over" "$dir"/kill/[ac].log || true) \
    | sed -n 's/.*took over \([0-9]*\) games.*/\1/p' | paste -sd+ | bc)
  "$cluster" stop "$dir/kill" >/dev/null
  echo "takeover: every game of the killed node in play again $(( (resumed - killed) / 1000000 )) ms after SIGKILL ($taken games, lease 3 s)"
}

watch() {
  rm -rf "$dir/watch"
  "$cluster" start "$dir/watch" 2 >/dev/null
  "$bench" watch --owner 127.0.0.1:7341 --far 127.0.0.1:7342 --games 20
  "$cluster" stop "$dir/watch" >/dev/null
}

for part in $parts; do
  for _ in $(seq "$rounds"); do
    case "$part" in
    throughput) one_node; three_nodes ;;
    takeover) takeover ;;
    watch) watch ;;
    far) three_nodes; three_nodes far ;;
    esac
  done
done
