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
    FAIL=$((FAIL + 1)); printf 'FAIL %s\n' "$name"
    # The start, and the end, where a test runner lists what failed and why.
    local n; n=$(printf '%s\n' "$out" | wc -l)
    if [ "$n" -le 80 ]; then
      printf '%s\n' "$out" | sed 's/^/     /'
    else
      printf '%s\n' "$out" | head -20 | sed 's/^/     /'
      printf '     ... (%d lines) ...\n' "$((n - 80))"
      printf '%s\n' "$out" | tail -60 | sed 's/^/     /'
    fi
    # CI prints every failure's end again after the last suite
    # (INTEROP_FAILURES, a file it names), where a reader of a long log looks.
    if [ -n "${INTEROP_FAILURES:-}" ]; then
      { printf 'FAIL %s\n' "$name"; printf '%s\n' "$out" | tail -60 | sed 's/^/     /'; } >>"$INTEROP_FAILURES"
    fi
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_ready URL LOG: the server at URL answers readyz within 10 s (else its log is printed)
wait_ready() {
  for _ in $(seq 1 100); do
    curl -fsS "$1/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  cat "$2"
  return 1
}

# same_json TOKEN URL_A URL_B: both answer GET with 2xx and the same JSON
same_json() {
  local a b
  a=$(set -o pipefail; curl -fsS -H "Authorization: Bearer $1" "$2" | jq -S .) || return 1
  b=$(set -o pipefail; curl -fsS -H "Authorization: Bearer $1" "$3" | jq -S .) || return 1
  diff <(echo "$a") <(echo "$b")
}

# start_atrium BIN: exports ATRIUM_URL, DATA_DIR, ATRIUM_PID. In cluster mode
# (ATRIUM_CLUSTER=N, N >= 2) it starts N nodes behind nginx instead
# (scripts/cluster.sh, with ATRIUM_DATABASE_URL and ATRIUM_S3_* when set, else
# a PostgreSQL and a versitygw of its own): ATRIUM_URL is the balancer, DATA_DIR
# node 1's data directory (for the CLI, which acts on the shared database), and
# ATRIUM_NODE_URLS, ATRIUM_NODE_PIDS, ATRIUM_NODE_DATA_DIRS and CLUSTER_DIR
# name the nodes; there is no ATRIUM_PID.
start_atrium() {
  local bin=$1
  # Webhook receivers of the tests listen on loopback, which the server refuses
  # by default; one attempt per delivery, so that a failed one can be replayed
  # at once (the default schedule retries after 30 s).
  if [ "${ATRIUM_CLUSTER:-0}" -ge 2 ] 2>/dev/null; then
    local cdir out
    cdir=$(mktemp -d)
    out=$(ATRIUM_BIN="$bin" ATRIUM_WEBHOOK_ALLOW_PRIVATE=true ATRIUM_WEBHOOK_RETRY_SCHEDULE=0s \
      bash scripts/cluster.sh start "$cdir") || { echo "the cluster did not start (its logs are above)" >&2; return 1; }
    eval "$out"
    DATA_DIR=${ATRIUM_NODE_DATA_DIRS%% *}
    return 0
  fi
  DATA_DIR=$(mktemp -d)
  local port; port=$(free_port)
  ATRIUM_URL="http://127.0.0.1:$port"
  # Cluster mode (a database and a bucket set) requires a public URL of the
  # server and the CLI: this server's. Only then: suites that start servers of
  # their own (backup, Litestream, crash; skipped in cluster mode) must not
  # inherit it.
  if [ -n "${ATRIUM_DATABASE_URL:-}" ] && [ -n "${ATRIUM_S3_ENDPOINT:-}" ]; then
    export ATRIUM_PUBLIC_URL="$ATRIUM_URL"
  fi
  ATRIUM_WEBHOOK_ALLOW_PRIVATE=true ATRIUM_WEBHOOK_RETRY_SCHEDULE=0s \
    "$bin" serve --data "$DATA_DIR" --listen "127.0.0.1:$port" >"$DATA_DIR/server.log" 2>&1 &
  ATRIUM_PID=$!
  wait_ready "$ATRIUM_URL" "$DATA_DIR/server.log" >&2 && return 0
  echo "atrium did not become ready (its log is above)" >&2
  return 1
}

stop_atrium() {
  if [ -n "${CLUSTER_DIR:-}" ]; then
    bash scripts/cluster.sh stop "$CLUSTER_DIR"
    return
  fi
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
