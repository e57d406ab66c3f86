#!/usr/bin/env bash
# What the log costs the games: flipd (FLIPD, default target/release/flipd)
# under 10,000 games at 1 s think time, its log at FILTER (info: a line per
# login), written to a file or to a pipe read at 64 KiB a second (`pv`), as
# a journald under pressure might read it. Prints the round trip's p99 and
# longest of a 10 s window that starts right after the 20,000 logins.
#
# Usage: tests/tools/log_stalls.sh FILTER file|slowpipe
# Needs release builds (cargo build --release -p flipd -p flipline-tests) and pv.
set -u
cd "$(dirname "$0")/../.."
flipd=${FLIPD:-target/release/flipd}
work=$(mktemp -d)
cat > "$work"/flipd.ron <<RON
( listen: "127.0.0.1:7400", rate_limit: (per_second: 100000, burst: 100000), max_connections: 200000, max_connections_per_address: 200000, log_filter: "$1", store: (path: "$work/store/flipline.db"), )
RON
if [ "$2" = slowpipe ]; then
  "$flipd" --config "$work"/flipd.ron 2>&1 | pv -q -L 64k > "$work"/flipd.log &
  sleep 0.5; pid=$(pgrep -f -- "--config $work/flipd.ron" | head -1)
else
  "$flipd" --config "$work"/flipd.ron > "$work"/flipd.log 2>&1 &
  pid=$!; sleep 0.5
fi
target/release/flip-bench load --server 127.0.0.1:7400 --games 10000 --duration 10 --think-ms 1000 --ramp 60 --warmup 0 --pid "$pid" > "$work"/report
kill -INT "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
echo "$1 $2: p99 $(grep 'latency p99' "$work"/report | awk '{print $3}') max $(grep 'latency max' "$work"/report | awk '{print $3}') moves/s $(grep 'moves/s' "$work"/report | awk '{print $2}')"
pkill -f "pv -q -L 64k" 2>/dev/null
rm -rf "$work"
