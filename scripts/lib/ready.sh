# server_ready ADMIN_PORT PID LOG: waits (at most 30 s) until the `serve` started as PID answers
# /readyz on 127.0.0.1:ADMIN_PORT; when it does not, or exits first, prints the tail of LOG and fails.
# Sourced by scripts/lib/conversion.sh, so by every e2e script that starts a server.
server_ready() {
  local _
  for _ in $(seq 1 150); do
    curl -fsS "http://127.0.0.1:$1/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || break
    sleep 0.2
  done
  echo "server not ready; log:"; tail -20 "$3"; return 1
}
