#!/usr/bin/env bash
# A throwaway NATS server for the cluster's tests, on loopback, in a
# directory of its own:
#   tests/tools/nats.sh start DIR [PORT] [open]
#                                          (the first free from PORT, 24222) prints the URL for FLIPLINE_TEST_NATS,
#                                          with the user's password in it; `open`: a server that lets anyone in
#   tests/tools/nats.sh stop DIR
#   tests/tools/nats.sh restart DIR        stops it and starts it again on its port
#   tests/tools/nats.sh resume DIR         starts a stopped one again on its port
# It installs Debian's nats-server package if the server is missing (as root).
# Core NATS only: nothing is stored, so a restart loses what was in flight.
# Its one user, flipd, may publish and subscribe on the cluster's subjects
# (flip.>) and nothing else: the account a cluster's nodes need.
set -euo pipefail

command=${1:?start, stop, restart or resume}
dir=${2:?a directory}

# shellcheck source=free_port.sh
source "$(dirname "$0")/free_port.sh"

user=flipd
password=flipd-test

# The server's settings: loopback, the port, and (unless open) its user.
configure() {
  local port=$1 mode=$2
  {
    echo "listen: \"127.0.0.1:$port\""
    if [[ $mode != open ]]; then
      cat <<CONF
authorization {
  users = [
    {
      user: $user
      password: $password
      permissions: { publish: "flip.>", subscribe: "flip.>" }
    }
  ]
}
CONF
    fi
  } > "$dir/nats.conf"
}

run() {
  local port=$1
  nats-server -c "$dir/nats.conf" -l "$dir/nats.log" > /dev/null 2>&1 &
  echo $! > "$dir/nats.pid"
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "nats.sh: the server did not start (see $dir/nats.log)" >&2
  exit 1
}

halt() {
  [[ -e "$dir/nats.pid" ]] || return 0
  local pid
  pid=$(cat "$dir/nats.pid")
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  rm -f "$dir/nats.pid"
}

case "$command" in
start)
  if ! command -v nats-server >/dev/null; then
    if [[ $(id -u) -ne 0 ]]; then
      echo "nats.sh: nats-server is not installed and this is not root" >&2
      exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nats-server >&2
  fi
  mkdir -p "$dir"
  port=$(free_port "${3:-24222}")
  echo "$port" > "$dir/nats.port"
  mode=${4:-users}
  configure "$port" "$mode"
  run "$port"
  if [[ $mode == open ]]; then
    echo "nats://127.0.0.1:$port"
  else
    echo "nats://$user:$password@127.0.0.1:$port"
  fi
  ;;
stop)
  halt
  ;;
restart)
  halt
  run "$(cat "$dir/nats.port")"
  ;;
resume)
  run "$(cat "$dir/nats.port")"
  ;;
*)
  echo "nats.sh: start, stop, restart or resume" >&2
  exit 1
  ;;
esac
