#!/usr/bin/env bash
# Refreshes the browser libraries the web app embeds: installs the versions
# pinned by web/ui/vendor/package-lock.json and copies their browser builds,
# with their licences, into web/ui/assets/vendor/ (committed, so that `go build`
# alone builds the app). To upgrade: change the version in
# web/ui/vendor/package.json, run `npm install --package-lock-only` there, then
# this script, and commit the three.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vendor=$root/web/ui/vendor
out=$root/web/ui/assets/vendor
# Optional dependencies are for Node (pdfjs-dist's native canvas): not needed.
(cd "$vendor" && npm ci --no-audit --no-fund --loglevel=error --omit=optional)
mkdir -p "$out"
tus=$vendor/node_modules/tus-js-client
# The source map is not shipped: drop its reference so no browser asks for it.
sed '/^\/\/# sourceMappingURL=/d' "$tus/dist/tus.min.js" >"$out/tus.min.js"
cp "$tus/LICENSE" "$out/tus-js-client.LICENSE"
echo "tus-js-client $(node -p "require('$tus/package.json').version") → web/ui/assets/vendor/tus.min.js"
pdfjs=$vendor/node_modules/pdfjs-dist
# pdf.js, the drive's PDF viewer: ES modules the viewer imports only when it
# opens a PDF, its worker (started from 'self' under the page's CSP; pdf.js 5+
# has no eval), without WebAssembly decoders, CMaps or standard font data (it
# falls back to its JavaScript decoders and to system fonts).
for f in pdf.min.mjs pdf.worker.min.mjs; do
  sed '/^\/\/# sourceMappingURL=/d' "$pdfjs/build/$f" >"$out/$f"
done
cp "$pdfjs/LICENSE" "$out/pdfjs-dist.LICENSE"
echo "pdfjs-dist $(node -p "require('$pdfjs/package.json').version") → web/ui/assets/vendor/pdf.min.mjs, pdf.worker.min.mjs"
