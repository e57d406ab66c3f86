#!/usr/bin/env bash
# The TLS port against the plain port of the same flipd build: PAIRS pairs
# of `flip-bench load` runs, each on a fresh daemon with both ports, in the
# order plain TLS, TLS plain, ... (so that neither always goes first on a
# machine whose load drifts), one table row per run; then the memory a
# connection holds idle on each port (IDLE games that never move), and the
# TLS handshakes a second `openssl s_time` makes against the TLS port.
#
# Usage: tests/tools/tls_pairs.sh [GAMES] [SECONDS] [PAIRS] [IDLE]   (1000 8 3 2000)
# Needs release builds (cargo build --release --bin flipd --bin flip-bench)
# and openssl. Environment: FLIPD, BENCH (binaries), SYNC (the store's
# synchronous setting, default full).
set -euo pipefail
cd "$(dirname "$0")/../.."

games=${1:-1000}
seconds=${2:-8}
pairs=${3:-3}
idle=${4:-2000}
flipd=${FLIPD:-target/release/flipd}
bench=${BENCH:-target/release/flip-bench}
sync=${SYNC:-full}
plain_port=7400
tls_port=7402

# shellcheck source=tests/tools/measuring.sh
. tests/tools/measuring.sh

# A throwaway authority and the daemon's certificate for 127.0.0.1 (P-256,
# what a certificate authority issues most today).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj "/CN=tls_pairs CA" -keyout "$work/ca.key" -out "$work/ca.pem" 2> /dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -subj "/CN=127.0.0.1" -keyout "$work/key.pem" -out "$work/cert.csr" 2> /dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > "$work/san.ext"
openssl x509 -req -in "$work/cert.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
  -CAcreateserial -days 2 -extfile "$work/san.ext" -out "$work/cert.pem" 2> /dev/null

cat > "$work/flipd.ron" <<RON
(
    listen: "127.0.0.1:$plain_port",
    tls: (listen: "127.0.0.1:$tls_port", certificate: "$work/cert.pem", key: "$work/key.pem"),
    rate_limit: (per_second: 100000, burst: 100000),
    max_connections: 200000,
    max_connections_per_address: 200000,
    store: (path: "$work/store/flipline.db", synchronous: $sync),
)
RON

start_flipd() {
  rm -rf "$work/store"
  "$flipd" --config "$work/flipd.ron" > "$work/flipd.log" 2>&1 &
  daemon_pid=$!
  sleep 1
}

stop_flipd() {
  kill -INT "$daemon_pid"
  wait "$daemon_pid" || true
  daemon_pid=""
}

# `load PORT_KIND OUT EXTRA...`: one load run on a fresh daemon.
load() {
  local kind=$1 out=$2
  shift 2
  start_flipd
  if [[ $kind == tls ]]; then
    "$bench" load --server "127.0.0.1:$tls_port" --tls-ca "$work/ca.pem" --pid "$daemon_pid" "$@" > "$out"
  else
    "$bench" load --server "127.0.0.1:$plain_port" --pid "$daemon_pid" "$@" > "$out"
  fi
  stop_flipd
}

echo "games $games, $seconds s a run, store synchronous: $sync"
echo "| run | port | moves/s | p50 / p99 ms | errors |"
echo "|---:|---|---:|---:|---:|"
run=0
for pair in $(seq 1 "$pairs"); do
  order="plain tls"
  if (( pair % 2 == 0 )); then order="tls plain"; fi
  for kind in $order; do
    run=$((run + 1))
    load "$kind" "$work/$kind.txt" --games "$games" --duration "$seconds"
    echo "| $run | $kind | $(field moves/s "$work/$kind.txt")" \
      "| $(field 'latency p50' "$work/$kind.txt") / $(field 'latency p99' "$work/$kind.txt")" \
      "| $(field errors "$work/$kind.txt") |"
  done
done

echo
echo "idle: $idle games (two connections each) that never move"
echo "| port | rss before KiB | rss after KiB | KiB a game |"
echo "|---|---:|---:|---:|"
for kind in plain tls; do
  load "$kind" "$work/idle-$kind.txt" --games "$idle" --duration 3 --warmup 2 \
    --think-ms 100000000 --ramp 120
  echo "| $kind | $(field 'rss before' "$work/idle-$kind.txt") | $(field 'rss after' "$work/idle-$kind.txt")" \
    "| $(field rss/game "$work/idle-$kind.txt") |"
done

echo
echo "handshakes (openssl s_time -new, 10 s, one client process):"
start_flipd
openssl s_time -connect "127.0.0.1:$tls_port" -CAfile "$work/ca.pem" -new -time 10 2> /dev/null |
  grep -E 'connections in|connections/user sec' || true
stop_flipd
