#!/usr/bin/env bash
# Bundle the main step (dist/index.js) and the post step (dist/cleanup.js) into OUT (default dist).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
npx ncc build src/index.ts -o "$work/main" --minify --license licenses.txt >/dev/null
npx ncc build src/post.ts -o "$work/post" --minify >/dev/null
rm -rf "$out"
mkdir -p "$out"
# index.js and the chunks it loads on demand (the GitHub client, used only by the fences modes)
cp "$work/main/"*.js "$work/main/licenses.txt" "$work/main/package.json" "$out/"
cp "$work/post/index.js" "$out/cleanup.js"
