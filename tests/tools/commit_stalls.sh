#!/usr/bin/env bash
# Runs flipd on its embedded store settings (`synchronous: full`) under
# 10,000 games at 1 s think time, RUNS times, and prints one row per run: the
# round trip's p50 / p99 / longest, errors, and what flipd's log said about
# slow commits (how many, the slowest). What the commit path costs under many
# games in play, with the log's reasons beside the latency.
#
# Usage: tests/tools/commit_stalls.sh [GAMES] [SECONDS] [RUNS]   (10000 20 3)
# Needs release builds: cargo build --release -p flipd -p flipline-tests
# Environment: FLIPD, BENCH (binaries; default target/release/flipd and
# target/release/flip-bench), KEEP (a directory to keep each run's daemon
# log and report in), PHASES (flip-bench load's phase flags, default
# "--ramp 90 --warmup 5 --cooldown 10").
set -euo pipefail
cd "$(dirname "$0")/../.."

games=${1:-10000}
seconds=${2:-20}
runs=${3:-3}
flipd=${FLIPD:-target/release/flipd}
bench=${BENCH:-target/release/flip-bench}
port=7400

# shellcheck source=tests/tools/measuring.sh
. tests/tools/measuring.sh

# Only what the load needs beyond the embedded defaults: the address, room
# for 2 x GAMES connections from 254 loopback addresses, no rate limit.
cat > "$work/flipd.ron" <<RON
(
    listen: "127.0.0.1:$port",
    rate_limit: (per_second: 100000, burst: 100000),
    max_connections: 200000,
    max_connections_per_address: 200000,
    store: (path: "$work/store/flipline.db"),
)
RON

printf '| run | p50 ms | p99 ms | longest ms | moves/s | errors | slow commits | slowest commit ms |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for run in $(seq 1 "$runs"); do
  rm -rf "$work/store"
  "$flipd" --config "$work/flipd.ron" > "$work/flipd.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 1 100); do
    if grep -q "listening" "$work/flipd.log"; then break; fi
    sleep 0.1
  done
  "$bench" load --server "127.0.0.1:$port" --games "$games" --duration "$seconds" \
    --think-ms 1000 ${PHASES:---ramp 90 --warmup 5 --cooldown 10} --pid "$daemon_pid" > "$work/report"
  kill -INT "$daemon_pid"
  wait "$daemon_pid" || true
  daemon_pid=""
  slow=$(grep -c "a commit took" "$work/flipd.log" || true)
  slowest=$( (grep -o "a commit took [0-9]* ms" "$work/flipd.log" || true) | awk '{ print $4 }' | sort -n | tail -1)
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$run" \
    "$(field "latency p50" "$work/report")" "$(field "latency p99" "$work/report")" \
    "$(field "latency max" "$work/report")" "$(field "moves/s" "$work/report")" \
    "$(field errors "$work/report")" "$slow" "${slowest:--}"
  if [[ -n "${KEEP:-}" ]]; then
    mkdir -p "$KEEP"
    cp "$work/flipd.log" "$KEEP/flipd-$run.log"
    cp "$work/report" "$KEEP/report-$run"
  fi
done
