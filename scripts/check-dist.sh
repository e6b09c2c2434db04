#!/usr/bin/env bash
# Fail when the committed dist/ is not what the sources build to: users run dist/, not src/.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash scripts/build.sh "$tmp/dist"
if ! diff -r "$tmp/dist" dist >/dev/null; then
  echo "dist/ differs from a fresh build of src/: run 'npm run build' and commit dist/." >&2
  diff -r "$tmp/dist" dist | head -20 >&2 || true
  exit 1
fi
echo "dist/ matches the sources"
