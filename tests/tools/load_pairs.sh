#!/usr/bin/env bash
# Runs flipd and the bare baseline one after the other under the same
# `flip-bench load`, PAIRS times, and prints one table row per pair: moves/s of
# each, their ratio, the round trip, and flipd's CPU per store write by thread
# (user + system µs, from /proc). On a shared machine only ratios from runs
# made back to back mean much; this makes them the easy thing to get.
#
# Usage: tests/tools/load_pairs.sh [GAMES] [SECONDS] [PAIRS]   (100 8 3)
# Needs release builds: cargo build --release
# Environment: FLIPD, BENCH (binaries; default target/release/flipd and
# target/release/flip-bench, the load driver and the baseline; BENCH was FLIP
# while they were subcommands of the client), SYNC (full or normal, default
# full: the store setting flipd ships with), TABLES (flipd's
# descriptor_tables: auto, shared or per_worker; default auto).
set -euo pipefail
cd "$(dirname "$0")/../.."

games=${1:-100}
seconds=${2:-8}
pairs=${3:-3}
flipd=${FLIPD:-target/release/flipd}
bench=${BENCH:-target/release/flip-bench}
sync=${SYNC:-full}
tables=${TABLES:-auto}
port=7400
base_port=7401

# shellcheck source=tests/tools/measuring.sh
. tests/tools/measuring.sh

# The load comes from 254 addresses (127.0.0.1-254), hundreds of connections
# each at large loads: a build that caps connections per address (its
# embedded default names max_connections_per_address) gets the cap lifted;
# an older one does not know the setting and would refuse the file.
per_address=""
if grep -q max_connections_per_address "$flipd"; then
  per_address="max_connections_per_address: 200000,"
fi
cat > "$work/flipd.ron" <<RON
(
    listen: "127.0.0.1:$port",
    rate_limit: (per_second: 100000, burst: 100000),
    max_connections: 200000,
    $per_address
    descriptor_tables: $tables,
    store: (path: "$work/store/flipline.db", synchronous: $sync),
)
RON

# Each thread's name and CPU ticks (user, system) of process $1.
thread_ticks() {
  for task in /proc/"$1"/task/*; do
    echo "$(tr ' ' '_' < "$task/comm") $(awk '{ print $14, $15 }' "$task/stat")"
  done
}

# flipd's CPU per store write from thread_ticks output $1 and $2 writes:
# "workers 6.8+9.2 writer 3.1+2.5 " (µs user+system).
per_write() {
  awk -v writes="$2" -v hz="$(getconf CLK_TCK)" '
    { name = ($1 ~ /^actix/) ? "workers" : ($1 == "store-writer") ? "writer" : "";
      if (name != "") { user[name] += $2; sys[name] += $3 } }
    END { for (n in user) printf "%s %.1f+%.1f ", n,
            user[n] * 1e6 / hz / writes, sys[n] * 1e6 / hz / writes }' "$1"
}

run_flipd() {
  rm -rf "$work/store"
  "$flipd" --config "$work/flipd.ron" > "$work/flipd.log" 2>&1 &
  daemon_pid=$!
  sleep 1
  "$bench" load --server "127.0.0.1:$port" --games "$games" --duration "$seconds" \
    --pid "$daemon_pid" > "$work/flipd.txt"
  thread_ticks "$daemon_pid" > "$work/ticks.txt"
  kill -INT "$daemon_pid"
  wait "$daemon_pid" || true
  daemon_pid=""
  # Logged at exit: "store closed: N writes in M transactions".
  writes=$(grep -o 'store closed: [0-9]* writes' "$work/flipd.log" | awk '{ print $3 }')
  cpu=$(per_write "$work/ticks.txt" "${writes:-1}")
}

run_baseline() {
  "$bench" baseline --listen "127.0.0.1:$base_port" > /dev/null 2>&1 &
  local pid=$!
  sleep 0.5
  "$bench" load --server "127.0.0.1:$base_port" --games "$games" --duration "$seconds" \
    > "$work/baseline.txt"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}

echo "games $games, $seconds s a run, store synchronous: $sync"
echo "| pair | flipd moves/s | baseline moves/s | ratio | flipd p50 / p99 ms | baseline p50 / p99 ms | flipd µs a write (user+sys) |"
echo "|---:|---:|---:|---:|---:|---:|---|"
for pair in $(seq 1 "$pairs"); do
  run_flipd
  run_baseline
  ours=$(field moves/s "$work/flipd.txt")
  theirs=$(field moves/s "$work/baseline.txt")
  ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
  echo "| $pair | $ours | $theirs | $ratio" \
    "| $(field 'latency p50' "$work/flipd.txt") / $(field 'latency p99' "$work/flipd.txt")" \
    "| $(field 'latency p50' "$work/baseline.txt") / $(field 'latency p99' "$work/baseline.txt")" \
    "| $cpu($writes writes) |"
done
