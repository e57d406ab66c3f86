#!/usr/bin/env bash
# A throwaway server for one test process (see src/throwaway.rs):
#   serve.sh postgres|nats
# starts one on loopback with tests/tools/postgres.sh or nats.sh, in a new
# temporary directory, and prints its URL and that directory (two lines).
# Then it reads its stdin to the end, which comes when the test process
# holding the pipe's other end exits or is killed, and stops the server
# and removes the directory. Nothing is installed: the caller has checked
# that the programs are there.
set -u

kind=${1:?postgres or nats}
tools="$(dirname "$0")/../tools"
# Ports from their own ranges, apart from those of the servers single
# tests start with the same scripts.
case "$kind" in
postgres) port=27432 ;;
nats) port=27222 ;;
*)
  echo "serve.sh: postgres or nats" >&2
  exit 2
  ;;
esac

# A test process that ends while this starts the server must not end this
# before it stops the server: a write to the closed pipe fails instead.
trap '' PIPE

dir=$(mktemp -d "${TMPDIR:-/tmp}/flipline-$kind.XXXXXX") || exit 1
stop() {
  "$tools/$kind.sh" stop "$dir" > /dev/null 2>&1
  rm -rf "$dir"
}
if ! url=$("$tools/$kind.sh" start "$dir" "$port"); then
  stop
  exit 1
fi
printf '%s\n%s\n' "$url" "$dir"
# From now on nobody reads what this says.
exec > /dev/null 2>&1
cat
stop
