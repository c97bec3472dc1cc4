#!/usr/bin/env bash
# The unit tests on Node 22 LTS, the image's runtime (Dockerfile): the node binary of npm's `node`
# package, installed once into ~/.cache/zonekeeper/node22. Usage: bash scripts/test-node22.sh [TEST FILES]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${XDG_CACHE_HOME:-$HOME/.cache}/zonekeeper/node22"
if [ ! -x "$dir/node_modules/.bin/node" ]; then
  npm install --no-save --no-audit --no-fund --prefix "$dir" node@22 >&2
fi
node22="$(readlink -f "$dir/node_modules/.bin/node")"
version="$("$node22" --version)"
case "$version" in v22.*) ;; *) echo "expected Node 22, got $version from $node22" >&2; exit 1 ;; esac
echo "unit tests on Node $version" >&2
# A few tests run the compiled CLI.
node scripts/dist-current.js 2>/dev/null || npm run build >&2
if [ "$#" -eq 0 ]; then
  set -- src/placement/policies/*.test.ts src/placement/policies/*/*.test.ts test/unit/*.test.ts
fi
exec "$node22" --import tsx --test --test-concurrency=1 "$@"
