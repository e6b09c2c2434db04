#!/usr/bin/env bash
# The test suite (or the files given) beside one CPU burner per core: a shared, noisy CI machine, on
# purpose. A test that passes on an idle machine and fails here depends on the machine's speed, which
# no test may (docs/testing.md, "A loaded runner must not fail a test").
#   npm run test:load                                   the whole suite, as CI runs it on Node 24
#   RAR_TEST_TIER=core npm run test:load                `npm test`'s files (__tests__/tiers.ts)
#   npm run test:load -- __tests__/e2e/settle.test.ts   some files (any `vitest run` arguments)
#   BURNERS=4 npm run test:load -- …                    another number of burners (default: the cores)
# The burners are stopped however the run ends: vitest's own exit, a failure, Ctrl-C or a kill.
set -uo pipefail
cd "$(dirname "$0")/.."

cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
n="${BURNERS:-$cores}"
case "$n" in '' | *[!0-9]*)
  echo "test-under-load: BURNERS must be a whole number, got '$n'" >&2
  exit 2
  ;;
esac

burners=()
vitest=''
stop() {
  trap - EXIT INT TERM
  if [ -n "$vitest" ]; then kill -TERM "$vitest" 2>/dev/null; fi
  if [ "${#burners[@]}" -gt 0 ]; then kill "${burners[@]}" 2>/dev/null; fi
  wait 2>/dev/null
}
trap stop EXIT
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM

for ((i = 0; i < n; i++)); do
  node -e 'for (;;) {}' &
  burners+=("$!")
done
echo "test-under-load: $n CPU burner(s) on $cores core(s) beside vitest" >&2

# in the background so a signal to this script is handled at once (npm exec forwards it to vitest)
npx vitest run "$@" &
vitest=$!
wait "$vitest"
rc=$?
vitest=''
exit "$rc"
