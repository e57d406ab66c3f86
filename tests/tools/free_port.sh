# Sourced by the servers' scripts: free_port FROM prints the first port from
# FROM on that nothing listens on. Below the kernel's ephemeral range (32768
# and up): a port there may be held at any moment by one of the thousands of
# client sockets the load tests open.
free_port() {
  local port=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    port=$((port + 1))
  done
  echo "$port"
}
