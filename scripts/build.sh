#!/usr/bin/env bash
# Bundle the main step (dist/index.js) and the post step (dist/cleanup.js) into OUT (default dist).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
# ncc names its chunks by the paths of the modules in them: node_modules behind a symlink (a git worktree
# sharing another checkout's) resolves elsewhere and gives other chunk names than a clone with its own,
# which is what CI builds and check-dist.sh compares against.
if [ -L node_modules ]; then
  echo "warning: node_modules is a symlink; dist/ built here will not match a fresh clone's build (CI's check)" >&2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# --no-cache: ncc's webpack cache (60 to 150 MB under ~/.cache/ncc a checkout and entry) is cold on every
# CI machine, where writing it cost 4 s a build; a warm one saved about 1 s here. The output is the same.
npx ncc build src/index.ts -o "$work/main" --minify --license licenses.txt --no-cache >/dev/null
npx ncc build src/post.ts -o "$work/post" --minify --no-cache >/dev/null
rm -rf "$out"
mkdir -p "$out"
# index.js and the chunks it loads on demand (the GitHub client, used only by the fences modes)
cp "$work/main/"*.js "$work/main/licenses.txt" "$work/main/package.json" "$out/"
# ncc minifies index.js only; its chunks (the Talos API client with grpc-js and protobufjs, the
# GitHub client, the registry client) come out as written. A run parses a chunk each time it loads
# it, and every run on the API path loads the Talos one: minified, it parses in less CPU
# (docs/testing.md, "The bundle's start-up"). Node 20 is the oldest runtime the action supports.
for chunk in "$out"/[0-9]*.index.js; do
  # from stdin: esbuild's minified names depend on the input file's path, and check-dist.sh builds into
  # another directory than dist/; read from stdin, a chunk minifies the same wherever it is built
  npx esbuild --minify --format=esm --target=node20 --log-level=warning <"$chunk" >"$work/chunk.js"
  mv "$work/chunk.js" "$chunk"
done
cp "$work/post/index.js" "$out/cleanup.js"
