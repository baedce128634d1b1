#!/usr/bin/env bash
# The desktop sync client against Atrium (issue 52), in one run, with the same
# trees sent by rclone to the WebDAV mount beside it:
#   1. nextcloudcmd's initial upload of 1,000 and of 10,000 files of 1 KiB
#      (in folders of 100), and `rclone sync` of the same trees;
#   2. a re-sync with nothing changed of the 10,000 files (goal: under 2 s),
#      nextcloudcmd's and rclone's (nextcloudcmd's after the run that follows
#      the upload, which reads the folders it made once);
#   3. a 1 GiB file uploaded in chunks by nextcloudcmd, in MB/s.
# Times are wall-clock seconds of one run each (the clients' own start-up
# included). Prints one figure per line; exits non-zero only when the
# measurement cannot be set up.
#
#   bash bench/sync-clients.sh
# Environment: SMALL (default 1000), LARGE (default 10000), BIG_MB (default 1024).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0

SMALL="${SMALL:-1000}"
LARGE="${LARGE:-10000}"
BIG_MB="${BIG_MB:-1024}"

TMP="$(mktemp -d /tmp/atrium-sync-bench.XXXXXX)"
PID=""
cleanup() {
  [ -z "$PID" ] || { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "SETUP FAILURE: $*" >&2; exit 2; }
fig() { printf '%-64s %12s  %s\n' "$1" "$2" "${3:-}"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
now() { date +%s.%N; }
since() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$(now)"; }

for tool in curl jq python3 rclone nextcloudcmd; do command -v "$tool" >/dev/null || die "$tool is not installed"; done

echo "== build"
go build -trimpath -o "$TMP/atrium" ./cmd/atrium || die "build"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
mkdir -p "$TMP/data"
"$TMP/atrium" serve --data "$TMP/data" --listen "127.0.0.1:$PORT" >"$TMP/atrium.log" 2>&1 &
PID=$!
for _ in $(seq 100); do curl -fsS "$URL/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$URL/readyz" >/dev/null || die "atrium did not start"

user() { # user NAME: a user of their own for each measurement (an empty drive)
  local c; c=$("$TMP/atrium" bootstrap --data "$TMP/data" --json --admin-email "$1@example.test" --role member)
  U=$(jq -r .email <<<"$c") P=$(jq -r .app_password <<<"$c")
}
tree() { # tree DIR N: N files of 1 KiB in folders of 100
  python3 - "$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.txt" % i), "wb") as f:
        f.write(os.urandom(1024))
PY
}
nc() { nextcloudcmd --non-interactive -u "$U" -p "$P" "$1" "$URL" >"$TMP/nc.log" 2>&1 || { tail -20 "$TMP/nc.log"; die "nextcloudcmd failed"; }; }
rc() { # rc ARGS...: rclone with the mount as remote atr:
  RCLONE_CONFIG=/dev/null RCLONE_CONFIG_ATR_TYPE=webdav RCLONE_CONFIG_ATR_URL="$URL/api/v1/webdav/" RCLONE_CONFIG_ATR_VENDOR=owncloud \
    RCLONE_CONFIG_ATR_USER="$U" RCLONE_CONFIG_ATR_PASS="$(rclone obscure "$P")" rclone "$@" >"$TMP/rclone.log" 2>&1 ||
    { tail -20 "$TMP/rclone.log"; die "rclone failed"; }
}

echo "== figures (seconds; one run each)"
for n in "$SMALL" "$LARGE"; do
  tree "$TMP/nc-$n" "$n" && cp -r "$TMP/nc-$n" "$TMP/rc-$n"
  user "nc$n"; t=$(now); nc "$TMP/nc-$n"; fig "nextcloudcmd: initial upload of $n files of 1 KiB" "$(since "$t") s"
  user "rc$n"; t=$(now); rc sync --transfers 8 --checkers 8 "$TMP/rc-$n" atr:tree; fig "rclone sync: initial upload of the same $n files" "$(since "$t") s"
done
user "nc$LARGE" # the same user again (a fresh app password)
# The run after an upload reads the folders the client made again: it keeps
# no tag for a folder it created (nextcloudcmd 3.7 does not read it back after
# MKCOL), so that run lists each once; the run after it is the no-change sync.
t=$(now); nc "$TMP/nc-$LARGE"; fig "nextcloudcmd: the run after the upload (reads its new folders once)" "$(since "$t") s"
t=$(now); nc "$TMP/nc-$LARGE"; s=$(since "$t")
fig "nextcloudcmd: re-sync of $LARGE files, nothing changed (goal < 2 s)" "$s s" "$(python3 -c "print('PASS' if $s < 2 else 'MISS')")"
transfers=$(grep -cE 'accessmanager \]:\s+([235] ""|6 "(MOVE|MKCOL|DELETE)") "[^"]*/remote\.php/' "$TMP/nc.log" || true)
fig "  requests that moved content or changed the server" "$transfers"
fig "  PROPFIND requests" "$(grep -cE 'accessmanager \]:\s+6 "PROPFIND"' "$TMP/nc.log" || true)"
user "rc$LARGE"
t=$(now); rc sync --transfers 8 --checkers 8 "$TMP/rc-$LARGE" atr:tree; fig "rclone sync: re-sync of the same $LARGE files, nothing changed" "$(since "$t") s"

mkdir -p "$TMP/big" && head -c $((BIG_MB << 20)) /dev/urandom >"$TMP/big/big.bin"
user big; t=$(now); nc "$TMP/big"; s=$(since "$t")
grep -qE '6 "MOVE" "[^"]*/remote\.php/dav/uploads/' "$TMP/nc.log" || die "the big file did not go up in chunks"
fig "nextcloudcmd: $BIG_MB MiB file uploaded in chunks" "$(python3 -c "print('%.0f' % ($BIG_MB * 1.048576 / $s))") MB/s" "($s s)"
[ "$(curl -fsS -u "$U:$P" "$URL/api/v1/webdav/big.bin" | sha256sum | cut -d' ' -f1)" = "$(sha256sum <"$TMP/big/big.bin" | cut -d' ' -f1)" ] ||
  die "the big file's SHA-256 differs"
