#!/usr/bin/env bash
# A throwaway S3-compatible store for tests: versitygw (pinned below), its
# posix backend in a directory of its own (a bucket is a directory; the file
# system must keep user extended attributes, as ext4 does), listening on
# 127.0.0.1 at a free port with throwaway root credentials, and one bucket.
# versitygw is installed from the Go module proxy when absent (CGO-free, into
# a cache directory shared by checkouts: $ATRIUM_TOOLS or
# $(go env GOPATH)/pkg/atrium-tools).
#
#   eval "$(bash scripts/s3-server.sh start DIR)"   # sets ATRIUM_TEST_S3_*, S3_SERVER_DIR
#   go test ./storage/... ./web/... ./cmd/...        # the byte paths on the store as well
#   bash scripts/s3-server.sh stop DIR              # stops the server by its PID, removes DIR
#
# start prints shell assignments (ATRIUM_TEST_S3_ENDPOINT, _ACCESS_KEY,
# _SECRET_KEY, _BUCKET, S3_SERVER_DIR) and nothing else on stdout; the
# server's log is DIR/log, its PID in DIR/pid. Tests make a bucket of their own
# each; ATRIUM_TEST_S3_BUCKET is for a server started by hand or by interop.
set -euo pipefail

version=v1.8.0
cmd="${1:-}"
dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

case "$cmd" in
start)
  tools="${ATRIUM_TOOLS:-$(go env GOPATH)/pkg/atrium-tools}/versitygw-$version"
  bin="$tools/versitygw"
  if [ ! -x "$bin" ]; then
    mkdir -p "$tools"
    echo "installing versitygw $version into $tools" >&2
    (cd "$tools" && GOBIN="$tools" CGO_ENABLED=0 go install "github.com/versity/versitygw/cmd/versitygw@$version") >&2
  fi
  mkdir -p "$dir/root"
  dir=$(cd "$dir" && pwd)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  access="atrium-test-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
  secret="$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
  bucket=atrium-test
  # Keep-alive on: tests make many small requests.
  ROOT_ACCESS_KEY="$access" ROOT_SECRET_KEY="$secret" VGW_KEEP_ALIVE=true \
    setsid "$bin" --port "127.0.0.1:$port" --quiet posix "$dir/root" >"$dir/log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  up=""
  for _ in $(seq 1 100); do
    if curl -s -o /dev/null "http://127.0.0.1:$port/"; then up=1; break; fi
    kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$up" ] || { cat "$dir/log" >&2; echo "versitygw did not start" >&2; exit 1; }
  # The bucket, made through the S3 API (signed with the root credentials).
  code=$(curl -s -o "$dir/create-bucket.out" -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" \
    -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" --user "$access:$secret" "http://127.0.0.1:$port/$bucket")
  [ "$code" = 200 ] || { cat "$dir/create-bucket.out" >&2; echo "create bucket $bucket: HTTP $code" >&2; exit 1; }
  echo "ATRIUM_TEST_S3_ENDPOINT='http://127.0.0.1:$port'; export ATRIUM_TEST_S3_ENDPOINT"
  echo "ATRIUM_TEST_S3_ACCESS_KEY='$access'; export ATRIUM_TEST_S3_ACCESS_KEY"
  echo "ATRIUM_TEST_S3_SECRET_KEY='$secret'; export ATRIUM_TEST_S3_SECRET_KEY"
  echo "ATRIUM_TEST_S3_BUCKET='$bucket'; export ATRIUM_TEST_S3_BUCKET"
  echo "S3_SERVER_DIR='$dir'; export S3_SERVER_DIR"
  ;;
stop)
  if [ -f "$dir/pid" ]; then
    pid=$(cat "$dir/pid")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac
