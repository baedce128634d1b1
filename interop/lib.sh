# Shared helpers for the interop suite: start Atrium on a temp data dir and a free
# loopback port, count checks, print one line per check and a closing summary.
# shellcheck shell=bash

PASS=0
FAIL=0

check() { # check NAME COMMAND...   — passes when COMMAND exits 0
  local name=$1; shift
  if out=$("$@" 2>&1); then
    PASS=$((PASS + 1)); printf 'ok   %s\n' "$name"
  else
    FAIL=$((FAIL + 1)); printf 'FAIL %s\n' "$name"; printf '%s\n' "$out" | head -20 | sed 's/^/     /'
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_atrium BIN: exports ATRIUM_URL, DATA_DIR, ATRIUM_PID
start_atrium() {
  local bin=$1
  DATA_DIR=$(mktemp -d)
  local port; port=$(free_port)
  ATRIUM_URL="http://127.0.0.1:$port"
  "$bin" serve --data "$DATA_DIR" --listen "127.0.0.1:$port" >"$DATA_DIR/server.log" 2>&1 &
  ATRIUM_PID=$!
  for _ in $(seq 1 100); do
    curl -fsS "$ATRIUM_URL/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "atrium did not become ready; log:" >&2
  cat "$DATA_DIR/server.log" >&2
  return 1
}

stop_atrium() {
  if [ -n "${ATRIUM_PID:-}" ]; then
    kill -TERM "$ATRIUM_PID" 2>/dev/null
    wait "$ATRIUM_PID" 2>/dev/null
  fi
  [ -n "${DATA_DIR:-}" ] && rm -rf "$DATA_DIR"
}

summary() {
  printf '%d passed, %d failed\n' "$PASS" "$FAIL"
  [ "$FAIL" -eq 0 ]
}
