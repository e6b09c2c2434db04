#!/usr/bin/env bash
# Start the cluster twin in the background (scripts/twin-up.ts) and wait until it is up; then write its
# kubeconfig, talosconfig, auth-patch, url and pid as step outputs, to $GITHUB_OUTPUT in a workflow
# (.github/workflows/ci.yml, job `action`) or to stdout in a shell. The twin runs until SIGTERM
# (`kill <pid>`); in a workflow the runner ends it with the job's other processes, after the post steps.
# Its files and log go under $RUNNER_TEMP/twin (a new temporary directory outside a runner).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${RUNNER_TEMP:-$(mktemp -d)}/twin"
mkdir -p "$dir"
rm -f "$dir/ready"
nohup node --import tsx scripts/twin-up.ts "$dir" >"$dir/log" 2>&1 &
pid=$!
# up in a few seconds; 60 s is a hang, not a slow machine
for _ in $(seq 1 240); do
  if [ -f "$dir/ready" ]; then
    cat "$dir/ready" >>"${GITHUB_OUTPUT:-/dev/stdout}"
    echo "cluster twin up (pid $pid), log: $dir/log"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "::error::the cluster twin exited before it was up; its log:"
    cat "$dir/log"
    exit 1
  fi
  sleep 0.25
done
echo "::error::the cluster twin was not up within 60 s; its log:"
cat "$dir/log"
kill "$pid" 2>/dev/null || true
exit 1
