#!/usr/bin/env bash
# Idle memory per game of two flipd builds, measured in turn: each pair starts
# build A, holds GAMES idle games with `flip-bench load` (nobody moves) and
# reads the daemon's resident memory before and after, then does the same with
# build B.
# On a shared machine only figures taken back to back compare.
#
# Usage: tests/tools/memory_pairs.sh FLIPD_A FLIPD_B [GAMES] [PAIRS]   (5000 3)
# Environment: BENCH (the load driver, the same for both; default
# target/release/flip-bench; BENCH was FLIP while the driver was a subcommand
# of the client).
set -euo pipefail
cd "$(dirname "$0")/../.."

a=$1
b=$2
games=${3:-5000}
pairs=${4:-3}
bench=${BENCH:-target/release/flip-bench}
port=7400

# shellcheck source=tests/tools/measuring.sh
. tests/tools/measuring.sh

# The load comes from 254 addresses (127.0.0.1-254), hundreds of connections
# each: a build that caps connections per address (its embedded default
# names max_connections_per_address) gets the cap lifted; an older one does
# not know the setting and would refuse the file.
config_for() {
  local per_address=""
  if grep -q max_connections_per_address "$1"; then
    per_address="max_connections_per_address: 200000,"
  fi
  cat > "$work/flipd.ron" <<RON
(
    listen: "127.0.0.1:$port",
    rate_limit: (per_second: 100000, burst: 100000),
    max_connections: 200000,
    $per_address
    store: (path: "$work/store/flipline.db"),
)
RON
}

# Prints the KiB per idle game of one run of flipd binary $1.
per_game() {
  rm -rf "$work/store"
  config_for "$1"
  "$1" --config "$work/flipd.ron" > "$work/flipd.log" 2>&1 &
  daemon_pid=$!
  sleep 1
  "$bench" load --server "127.0.0.1:$port" --games "$games" --think-ms 1000000 \
    --duration 4 --pid "$daemon_pid" > "$work/load.txt"
  kill -INT "$daemon_pid"
  wait "$daemon_pid" || true
  daemon_pid=""
  awk '$1 == "rss/game" { print $2 }' "$work/load.txt"
}

echo "games $games; KiB per idle game"
echo "| pair | A | B | B / A |"
echo "|---:|---:|---:|---:|"
for pair in $(seq 1 "$pairs"); do
  ka=$(per_game "$a")
  kb=$(per_game "$b")
  ratio=$(awk -v x="$ka" -v y="$kb" 'BEGIN { printf "%.3f", (x > 0) ? y / x : 0 }')
  echo "| $pair | $ka | $kb | $ratio |"
done
