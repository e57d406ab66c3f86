# Sourced by the measuring scripts (load_pairs.sh, memory_pairs.sh, login_stalls.sh,
# store_pairs.sh, commit_stalls.sh): a work directory, and a daemon started
# into $daemon_pid, both gone when the script exits however it exits; and
# `field` to read a `flip-bench load` report. A script with more to undo
# sets `extra_cleanup` to a command before it sources this.

work=$(mktemp -d)
daemon_pid=""
cleanup() {
  if [[ -n "$daemon_pid" ]]; then kill -INT "$daemon_pid" 2>/dev/null || true; fi
  if [[ -n "${extra_cleanup:-}" ]]; then eval "$extra_cleanup" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# `field NAME FILE`: the first word after NAME on its line of a
# `flip-bench load` report ("moves/s 51234", "latency p99 4.1 ms").
field() {
  awk -v name="$1" 'index($0, name " ") == 1 {
    split(substr($0, length(name) + 2), words, " "); print words[1]; exit }' "$2"
}
