#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests, on loopback, in a directory of
# its own:
#   tests/tools/postgres.sh start DIR [PORT]   (the first free from PORT, 25432) prints the URL for FLIPLINE_TEST_POSTGRES;
#                                              DIR/ca.pem is FLIPLINE_TEST_POSTGRES_CA
#   tests/tools/postgres.sh stop DIR
#   tests/tools/postgres.sh crash DIR    pg_ctl stop -m immediate: as a crash
#   tests/tools/postgres.sh resume DIR   starts it again on its port
# It installs Debian's postgresql package if the server is missing (as root),
# and runs the server as the `postgres` user when started as root (initdb
# refuses root). The role `flipd` logs in over TCP with a password
# (scram-sha-256), so that the tests exercise password authentication, and
# may create the databases each test uses.
set -euo pipefail

command=${1:?start or stop}
dir=${2:?a directory}
password=flipd-test

# shellcheck source=free_port.sh
source "$(dirname "$0")/free_port.sh"

find_bin() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [[ -z "$found" ]] && command -v initdb >/dev/null; then
    found=$(dirname "$(command -v initdb)")
  fi
  echo "$found"
}

as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$command" in
start)
  bin=$(find_bin)
  if [[ -z "$bin" ]]; then
    if [[ $(id -u) -ne 0 ]]; then
      echo "postgres.sh: PostgreSQL is not installed and this is not root" >&2
      exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2
    bin=$(find_bin)
  fi
  mkdir -p "$dir"
  if [[ $(id -u) -eq 0 ]]; then
    chown postgres "$dir"
  fi
  # TLS as a real server offers it: a certificate authority of the test's
  # own (ca.pem, for sslrootcert) and the server's certificate from it, for
  # the name flipline-test only (so that verify-full to 127.0.0.1 fails and
  # verify-ca passes).
  openssl req -x509 -newkey rsa:2048 -nodes -days 3 -subj "/CN=flipline test CA" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=flipline-test" \
    -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:flipline-test\nbasicConstraints=CA:FALSE\n' > "$dir/server.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 3 -extfile "$dir/server.ext" -out "$dir/server.crt" 2>/dev/null
  chmod 600 "$dir/server.key"
  if [[ $(id -u) -eq 0 ]]; then
    chown postgres "$dir/server.key" "$dir/server.crt" "$dir/ca.pem"
  fi
  pwfile="$dir/superuser-password"
  as_owner bash -c "echo unused > '$pwfile'"
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust \
    --auth-host=scram-sha-256 --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 >/dev/null
  # A port can still be taken between the look and the start: try further.
  next=${3:-25432}
  for attempt in 1 2 3 4 5; do
    port=$(free_port "$next")
    options="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir' \
      -c max_connections=400 -c synchronous_commit=on -c fsync=on \
      -c ssl=on -c ssl_cert_file='$dir/server.crt' -c ssl_key_file='$dir/server.key'"
    echo "$options" > "$dir/options"
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o "$options" start \
      >/dev/null; then
      break
    fi
    if [[ $attempt -eq 5 ]]; then
      echo "postgres.sh: the server would not start (see $dir/server.log)" >&2
      exit 1
    fi
    next=$((port + 1))
  done
  as_owner "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE flipd LOGIN CREATEDB PASSWORD '$password'" >/dev/null
  echo "postgres://flipd:$password@127.0.0.1:$port/postgres"
  ;;
stop)
  bin=$(find_bin)
  if [[ -d "$dir/data" ]]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
  fi
  ;;
crash)
  as_owner "$(find_bin)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
  ;;
resume)
  as_owner "$(find_bin)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "$(cat "$dir/options")" start >/dev/null
  ;;
*)
  echo "postgres.sh: start, stop, crash or resume" >&2
  exit 2
  ;;
esac
