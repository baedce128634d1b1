#!/usr/bin/env bash
# Runs every fuzz target for a while (default 3m each; FUZZTIME=10m for longer)
# and keeps what it found interesting as the regression corpus in the package's
# testdata/fuzz/<Target>/, which `go test ./...` then replays every run.
# Usage: scripts/fuzz.sh [TARGET...]   (e.g. FuzzParseIf; default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-3m}
PARALLEL=${PARALLEL:-2}
cache=$(go env GOCACHE)/fuzz
status=0
while IFS=: read -r file target; do
  if [ $# -gt 0 ] && [[ " $* " != *" $target "* ]]; then continue; fi
  pkg=./$(dirname "$file")
  mod=$(go list -f '{{.ImportPath}}' "$pkg")
  echo "== $target ($pkg) for $FUZZTIME"
  if ! go test -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME" -parallel "$PARALLEL" "$pkg" 2>&1 | tail -3; then
    echo "!! $target failed: the failing input is in $pkg/testdata/fuzz/$target/"
    status=1
  fi
  if [ -d "$cache/$mod/$target" ]; then
    mkdir -p "$pkg/testdata/fuzz/$target"
    cp -n "$cache/$mod/$target"/* "$pkg/testdata/fuzz/$target/" 2>/dev/null || true
    echo "   corpus: $(ls "$pkg/testdata/fuzz/$target" | wc -l) inputs in $pkg/testdata/fuzz/$target"
  fi
done < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sed 's/func //; s|^\./||')
exit $status
