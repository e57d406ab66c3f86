#!/usr/bin/env bash
# The same flipd under the same `flip-bench load` with its store in SQLite
# and in PostgreSQL, alternately (SQLite, PostgreSQL, PostgreSQL, SQLite, ...:
# ABBA, so that a drift of the machine falls on both), PAIRS times; one
# table row a run: moves/s, p50 and p99, and the bytes of journal a move
# (SQLite: what flipd wrote to the disk, /proc/PID/io; PostgreSQL: the WAL
# the server wrote, pg_current_wal_lsn before and after).
#
# Usage: FLIPLINE_TEST_POSTGRES=URL tests/tools/store_pairs.sh [GAMES] [SECONDS] [PAIRS] [THINK_MS]
#        (100 8 2 0). URL names a server whose role may create databases
#        (tests/tools/postgres.sh start prints one). Needs release builds.
set -euo pipefail
cd "$(dirname "$0")/../.."

games=${1:-100}
seconds=${2:-8}
pairs=${3:-2}
think=${4:-0}
flipd=${FLIPD:-target/release/flipd}
bench=${BENCH:-target/release/flip-bench}
server=${FLIPLINE_TEST_POSTGRES:?a PostgreSQL server URL}
port=7410

extra_cleanup='psql "$server" -qc "DROP DATABASE IF EXISTS flipline_bench WITH (FORCE)" >/dev/null 2>&1'
# shellcheck source=tests/tools/measuring.sh
. tests/tools/measuring.sh

# `run sqlite|postgres`: one run; sets moves, p50, p99, bytes.
run() {
  local url="" before=0 after=0
  rm -rf "$work/store"
  if [[ $1 == postgres ]]; then
    psql "$server" -qc "DROP DATABASE IF EXISTS flipline_bench WITH (FORCE)" >/dev/null
    psql "$server" -qc "CREATE DATABASE flipline_bench" >/dev/null
    url="${server%/*}/flipline_bench"
  fi
  cat > "$work/flipd.ron" <<RON
(
    listen: "127.0.0.1:$port",
    rate_limit: (per_second: 100000, burst: 100000),
    max_connections: 200000,
    max_connections_per_address: 200000,
    store: (path: "$work/store/flipline.db", url: "$url"),
)
RON
  "$flipd" --config "$work/flipd.ron" > "$work/flipd.log" 2>&1 &
  daemon_pid=$!
  sleep 1
  if [[ $1 == postgres ]]; then
    before=$(psql "$server" -Atc "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")
  else
    before=$(awk '/^write_bytes/ { print $2 }' "/proc/$daemon_pid/io")
  fi
  "$bench" load --server "127.0.0.1:$port" --games "$games" --duration "$seconds" \
    --think-ms "$think" > "$work/run.txt"
  if [[ $1 == postgres ]]; then
    after=$(psql "$server" -Atc "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")
  else
    after=$(awk '/^write_bytes/ { print $2 }' "/proc/$daemon_pid/io")
  fi
  kill -INT "$daemon_pid"
  wait "$daemon_pid" || true
  daemon_pid=""
  moves=$(field moves/s "$work/run.txt")
  total=$(field moves "$work/run.txt")
  p50=$(field 'latency p50' "$work/run.txt")
  p99=$(field 'latency p99' "$work/run.txt")
  bytes=$(awk -v a="$before" -v b="$after" -v n="${total:-0}" \
    'BEGIN { printf "%.0f", (n > 0) ? (b - a) / n : 0 }')
}

echo "games $games, think $think ms, $seconds s a run"
echo "| run | store | moves/s | p50 / p99 ms | journal bytes a move |"
echo "|---:|---|---:|---:|---:|"
for pair in $(seq 1 "$pairs"); do
  if (( pair % 2 == 1 )); then order="sqlite postgres"; else order="postgres sqlite"; fi
  for store in $order; do
    run "$store"
    echo "| $pair | $store | $moves | $p50 / $p99 | $bytes |"
  done
done
