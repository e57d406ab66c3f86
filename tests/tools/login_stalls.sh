#!/usr/bin/env bash
# The first seconds after 20,000 logins: flipd logging at info (a line a
# login) to a file, under 10,000 games at 1 s think time, a window of
# SECONDS that begins as the last login is answered (no warm-up). Prints
# one row per run: the round trip's p50 / p99 / longest, moves/s, errors,
# and what flipd's own watch logged in three spans: the first 3 s from the
# load's start (the logins and the seconds after), the rest of the load,
# and after it (the load's 20,000 connections closing, then flipd's own
# stop): moves that took 50 ms or more inside the daemon (how many, the
# slowest) and threads that woke 50 ms late or more (how many, the
# latest); then the commits of 50 ms or more.
#
# Usage: tests/tools/login_stalls.sh [RUNS] [SECONDS]   (1 10)
# Needs release builds: cargo build --release -p flipd -p flipline-tests
# Environment: FLIPD, BENCH (binaries; default target/release/flipd and
# target/release/flip-bench), KEEP (a directory to keep each run's daemon
# log and report in).
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=${1:-1}
seconds=${2:-10}
flipd=${FLIPD:-target/release/flipd}
bench=${BENCH:-target/release/flip-bench}
port=7400

# shellcheck source=tests/tools/measuring.sh
. tests/tools/measuring.sh

cat > "$work/flipd.ron" <<RON
(
    listen: "127.0.0.1:$port",
    rate_limit: (per_second: 100000, burst: 100000),
    max_connections: 200000,
    max_connections_per_address: 200000,
    log_filter: "info",
    store: (path: "$work/store/flipline.db"),
)
RON

# `secs TIME`: an RFC 3339 time of day ("2026-12-06T10:23:41.117336Z") in
# seconds.
secs() { awk -v t="$1" 'BEGIN { split(substr(t, 12, 15), f, ":"); print f[1] * 3600 + f[2] * 60 + f[3] }'; }

# `watch LOG FROM UNTIL`: what flipd's watch logged from FROM to UNTIL
# (seconds): "slow moves (slowest ms) | late threads (latest ms)".
watch() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" | awk -v from="$2" -v until="$3" '
    { split(substr($1, 12, 15), f, ":"); t = f[1] * 3600 + f[2] * 60 + f[3] }
    t < from || t >= until { next }
    / moves took [0-9]+ ms or more inside the daemon/ {
      for (i = 1; i <= NF; i++) if ($i == "moves" && $(i + 1) == "took") moves += $(i - 1)
      if (match($0, /the slowest [0-9]+/)) { ms = substr($0, RSTART + 12, RLENGTH - 12) + 0
        if (ms > slowest) slowest = ms } }
    / ms late: / { late++; if (match($0, /late_ms=[0-9]+/)) { ms = substr($0, RSTART + 8) + 0
        if (ms > latest) latest = ms } }
    END { printf "%d (%s) | %d (%s)", moves, (moves ? slowest : "-"), late, (late ? latest : "-") }'
}

printf '| run | p50 ms | p99 ms | longest ms | moves/s | errors | first 3 s: slow moves in flipd (slowest ms) | late threads (latest ms) | after: slow moves | late threads | closing: slow moves | late threads | slow commits (slowest ms) |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for run in $(seq 1 "$runs"); do
  rm -rf "$work/store"
  "$flipd" --config "$work/flipd.ron" > "$work/flipd.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 1 100); do
    if grep -q "listening" "$work/flipd.log"; then break; fi
    sleep 0.1
  done
  begun=$(secs "$(date -u +%FT%T.%6NZ)")
  "$bench" load --server "127.0.0.1:$port" --games 10000 --duration "$seconds" \
    --think-ms 1000 --ramp 60 --warmup 0 --pid "$daemon_pid" > "$work/report"
  ended=$(secs "$(date -u +%FT%T.%6NZ)")
  kill -INT "$daemon_pid"
  wait "$daemon_pid" || true
  daemon_pid=""
  first=$(awk -v b="$begun" 'BEGIN { print b + 3 }')
  commits=$( (grep -o "a commit took [0-9]* ms" "$work/flipd.log" || true) |
    awk '{ n++; if ($4 > max) max = $4 } END { printf "%d (%s)", n, (n ? max : "-") }')
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$run" \
    "$(field "latency p50" "$work/report")" "$(field "latency p99" "$work/report")" \
    "$(field "latency max" "$work/report")" "$(field "moves/s" "$work/report")" \
    "$(field errors "$work/report")" "$(watch "$work/flipd.log" "$begun" "$first")" \
    "$(watch "$work/flipd.log" "$first" "$ended")" \
    "$(watch "$work/flipd.log" "$ended" 1e9)" "$commits"
  if [[ -n "${KEEP:-}" ]]; then
    mkdir -p "$KEEP"
    cp "$work/flipd.log" "$KEEP/flipd-$run.log"
    cp "$work/report" "$KEEP/report-$run"
  fi
done
