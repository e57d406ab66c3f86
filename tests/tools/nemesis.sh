#!/usr/bin/env bash
# The cluster's fault-injection run (tests/e2e/cluster_nemesis.rs), longer
# than a test run's: three nodes whose links to PostgreSQL and NATS are
# cut and healed, nodes paused and killed, while pairs of players play.
#   tests/tools/nemesis.sh [FAULTS [SEED [PAIRS]]]     (default 60 faults, seed 47, 12 pairs)
# It starts throwaway PostgreSQL and NATS servers (tests/tools/postgres.sh,
# nats.sh) unless FLIPLINE_TEST_POSTGRES / FLIPLINE_TEST_NATS name them,
# and prints a line per fault (its kind, node and length, the longest time
# a game went without an acknowledged move across it, the moves refused
# with 503) and the totals; it fails on any broken promise.
set -euo pipefail
cd "$(dirname "$0")/../.."

export FLIPLINE_NEMESIS_FAULTS=${1:-60}
export FLIPLINE_NEMESIS_SEED=${2:-47}
export FLIPLINE_NEMESIS_PAIRS=${3:-12}

cargo test --workspace --test e2e -- --ignored --nocapture \
  cluster_nemesis::the_cluster_keeps_every_promise 2>&1 | grep -E '^nemesis: |^test |panicked|promises broken|^    "'
