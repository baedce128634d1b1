# Crash safety: a mixed workload (presigned and TUS uploads, WebDAV PUTs,
# contact and event writes, webhook events to a receiver that is down) against
# an Atrium of its own that is killed with SIGKILL at random points, 20 times.
# After each kill, with the server down: PRAGMA integrity_check and every
# referenced blob on disk. After each restart: TUS uploads resume from the
# server's offset and finish with the right hash; every acknowledged write is
# there with the acknowledged content (or a later one that was tried), nothing
# unacknowledged is half-applied; every file downloads with its hash through
# REST and WebDAV; search finds what SQLite holds. At the end the receiver comes
# up and every event arrives at least once, signed.
#
# The driver and verifier are interop/crash (Go). Random choices follow
# CRASH_SEED (printed; set it to replay a run); CRASH_ROUNDS (default 20);
# CRASH_KEEP=1 keeps the data dir, journal and logs.
# shellcheck shell=bash

crash_suite() {
  local seed=${CRASH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
  local rounds=${CRASH_ROUNDS:-20}
  echo "crash: seed $seed, $rounds kills (replay with CRASH_SEED=$seed)"
  RANDOM=$seed
  CRASH_TMP=$(mktemp -d)
  local data=$CRASH_TMP/data work=$CRASH_TMP/work drv=$CRASH_TMP/crash
  mkdir -p "$data" "$work"
  # Few versions per file, so WebDAV overwrites also prune (and orphan blobs).
  printf '[drive]\nversion_max_count = 3\n' >"$CRASH_TMP/atrium.toml"
  CRASH_SERVER_PID='' CRASH_DRIVER_PID=''
  local port hook_port
  port=$(free_port)
  hook_port=$(free_port)
  local url=http://127.0.0.1:$port

  check "the crash driver builds (interop/crash)" go build -o "$drv" ./interop/crash || return

  crash_serve() { # exec: the background job's pid is the server's
    ATRIUM_WEBHOOK_RETRY_SCHEDULE=0s,1s,1s,2s,2s,20s ATRIUM_WEBHOOK_TIMEOUT=1s ATRIUM_WEBHOOK_ALLOW_PRIVATE=true \
      exec "$BIN" serve --config "$CRASH_TMP/atrium.toml" --data "$data" --listen "127.0.0.1:$port" >>"$CRASH_TMP/server.log" 2>&1
  }
  crash_start() { # start and wait until ready
    crash_serve &
    CRASH_SERVER_PID=$!
    for _ in $(seq 1 300); do
      kill -0 "$CRASH_SERVER_PID" 2>/dev/null || break
      curl -fsS "$url/readyz" >/dev/null 2>&1 && return 0
      sleep 0.1
    done
    echo "atrium did not become ready; log tail:"; tail -30 "$CRASH_TMP/server.log"
    kill -KILL "$CRASH_SERVER_PID" 2>/dev/null; wait "$CRASH_SERVER_PID" 2>/dev/null
    CRASH_SERVER_PID=''
    return 1
  }
  crash_kill() {
    kill -KILL "$CRASH_SERVER_PID" 2>/dev/null
    wait "$CRASH_SERVER_PID" 2>/dev/null
    CRASH_SERVER_PID=''
  }

  # Not through check: that runs its command in a subshell, and the server's
  # pid must be known here to kill it.
  crash_start >"$work/start.log"
  check "the crash server starts on its own data dir" bash -c "[ -n '$CRASH_SERVER_PID' ] || { cat '$work/start.log'; false; }"
  [ -n "$CRASH_SERVER_PID" ] || return
  local creds
  creds=$("$BIN" bootstrap --data "$data" --json --admin-email crash@example.test)
  export CRASH_URL=$url CRASH_DIR=$work CRASH_SEED=$seed CRASH_HOOK_PORT=$hook_port
  CRASH_TOKEN=$(jq -r .token <<<"$creds") CRASH_EMAIL=$(jq -r .email <<<"$creds") CRASH_APP_PASSWORD=$(jq -r .app_password <<<"$creds")
  export CRASH_TOKEN CRASH_EMAIL CRASH_APP_PASSWORD
  check "the driver subscribes a webhook to a port where nothing listens" env CRASH_ROUND=0 "$drv" setup || return

  local r delay restarted=0 t0=$SECONDS
  : >"$work/kills"
  for r in $(seq 1 "$rounds"); do
    if [ "$r" -gt 1 ]; then
      if [ $((RANDOM % 5)) -eq 0 ]; then # now and then, also during start-up (recovery, index catch-up)
        delay=0.$(printf %03d $((RANDOM % 400)))
        crash_serve &
        CRASH_SERVER_PID=$!
        sleep "$delay"
        crash_kill
        echo "round $r: kill -9 during start-up after ${delay}s" >>"$work/kills"
        CRASH_ROUND=$r "$drv" integrity -data "$data" >>"$work/driver.log" 2>&1 || echo "round $r: integrity exited $?" >>"$work/fail/errors"
      fi
      crash_start >>"$work/restart.fail" || break
      restarted=$((restarted + 1))
      CRASH_ROUND=$r "$drv" verify >>"$work/driver.log" 2>&1 || echo "round $r: verify exited $?" >>"$work/fail/errors"
    fi
    CRASH_ROUND=$r "$drv" work >>"$work/driver.log" 2>&1 &
    CRASH_DRIVER_PID=$!
    # Mostly somewhere in the first 3.5 s of writing; now and then at once.
    if [ $((RANDOM % 8)) -eq 0 ]; then delay=0.0$((RANDOM % 10)); else delay=$((RANDOM % 3500 / 1000)).$(printf %03d $((RANDOM % 1000))); fi
    sleep "$delay"
    crash_kill
    echo "round $r: kill -9 after ${delay}s" >>"$work/kills"
    kill -TERM "$CRASH_DRIVER_PID" 2>/dev/null
    wait "$CRASH_DRIVER_PID" 2>/dev/null
    CRASH_DRIVER_PID=''
    CRASH_ROUND=$r "$drv" integrity -data "$data" >>"$work/driver.log" 2>&1 || echo "round $r: integrity exited $?" >>"$work/fail/errors"
  done
  check "the server was killed $rounds times and restarted each time ($((SECONDS - t0)) s)" \
    bash -c "[ $restarted -eq $((rounds - 1)) ] || { cat '$work/restart.fail'; false; }"

  if crash_start >>"$work/restart.fail"; then
    CRASH_ROUND=$((rounds + 1)) "$drv" verify -full >>"$work/driver.log" 2>&1 || echo "final verify exited $?" >>"$work/fail/errors"
    CRASH_ROUND=$((rounds + 1)) "$drv" hooks >>"$work/driver.log" 2>&1 || echo "hooks exited $?" >>"$work/fail/errors"
    kill -TERM "$CRASH_SERVER_PID"; wait "$CRASH_SERVER_PID"; echo "SIGTERM: exit $?" >>"$work/driver.log"
    CRASH_SERVER_PID=''
    CRASH_ROUND=$((rounds + 1)) "$drv" integrity -data "$data" >>"$work/driver.log" 2>&1 || echo "final integrity exited $?" >>"$work/fail/errors"
  fi

  crash_prop() { # crash_prop PROP: no failure recorded (and something was checked)
    local n; n=$(cat "$work/count/$1" 2>/dev/null || echo 0)
    if [ -s "$work/fail/$1" ]; then
      echo "$(wc -l <"$work/fail/$1") failures of $n checks (seed $seed):"; head -15 "$work/fail/$1"; return 1
    fi
    [ "$n" -gt 0 ] || [ "$1" = errors ] || { echo "nothing was checked"; return 1; }
  }
  check "PRAGMA integrity_check ok and no foreign key broken after every kill" crash_prop integrity
  check "every blob a file, version or upload references is on disk, whole, after every kill" crash_prop blobs
  check "file versions, stored bytes and usage counters agree after every kill" crash_prop counters
  check "TUS uploads resume from the server's offset (never behind the acknowledged one) and finish" crash_prop tus
  check "every acknowledged file is listed with its hash; none half-applied; REST downloads match" crash_prop files
  check "WebDAV GET serves every checked file with its hash" crash_prop webdav
  check "every acknowledged contact is there with its content (ETag, If-Match updates); none duplicated or torn" crash_prop contacts
  check "every acknowledged event is there with its content; none duplicated or torn" crash_prop events
  check "search finds every checked file by name and as many crash files as the drive lists" crash_prop search
  check "every webhook event arrives (signed) once the receiver is up, including every acknowledged creation" crash_prop webhooks
  check "no unexpected answer while the server was up" crash_prop errors
  check "the server stops cleanly on SIGTERM after the crashes" grep -q '^SIGTERM: exit 0$' "$work/driver.log"
  echo "crash: $(grep -c . "$work/kills") kills ($(grep -c start-up "$work/kills") during start-up); driver log: $(grep -c . "$work/driver.log") lines; counts: $(cd "$work/count" && grep -H . * | tr '\n' ' ')"
}

crash_cleanup() {
  [ -n "${CRASH_DRIVER_PID:-}" ] && kill -TERM "$CRASH_DRIVER_PID" 2>/dev/null && wait "$CRASH_DRIVER_PID" 2>/dev/null
  [ -n "${CRASH_SERVER_PID:-}" ] && kill -KILL "$CRASH_SERVER_PID" 2>/dev/null && wait "$CRASH_SERVER_PID" 2>/dev/null
  CRASH_DRIVER_PID='' CRASH_SERVER_PID=''
  if [ -n "${CRASH_KEEP:-}" ] && [ -n "${CRASH_TMP:-}" ]; then echo "crash: kept $CRASH_TMP"
  elif [ -n "${CRASH_TMP:-}" ]; then rm -rf "$CRASH_TMP"; fi
  CRASH_TMP=''
}

trap 'crash_cleanup; stop_atrium' EXIT
trap 'exit 130' INT TERM
crash_suite
crash_cleanup
trap stop_atrium EXIT
trap - INT TERM
