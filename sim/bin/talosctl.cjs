#!/usr/bin/env node
'use strict';
// The fake talosctl as its own Node process: the fallback of the bash `talosctl` when the twin's front
// door is not in the environment (or cannot take the call), e.g. when it is run by hand. Every behaviour
// is runClient()'s (talosctl-client.cjs); this file is only the process around it: argv, environment,
// directory, stdout/stderr, exit code, and SIGINT/SIGTERM as talosctl handles them.

const { runClient } = require('./talosctl-client.cjs');

const ac = new AbortController();
let signals = 0;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    signals++;
    if (signals > 1) process.exit(1);
    process.stderr.write('Signal received, aborting, press Ctrl+C once again to abort immediately...\n');
    process.exitCode = 1;
    ac.abort();
  });
}

runClient({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  signal: ac.signal,
}).then((code) => {
  // process.exit() could cut off piped output, so let the event loop drain instead.
  if (!ac.signal.aborted) process.exitCode = code;
});
