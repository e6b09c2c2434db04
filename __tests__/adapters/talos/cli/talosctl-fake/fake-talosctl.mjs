#!/usr/bin/env node
// A canned talosctl for the adapter tests. FAKE_TALOSCTL_DIR holds scenario.json:
//   { "rules": [ { "match": "<regex on the argv joined by spaces>", "stdout": "", "stderr": "", "exit": 0, "sleepMs": 0 } ] }
// The first matching rule answers. Every call appends { argv, env } to calls.jsonl before answering,
// so a test can assert what the adapter ran even when it killed the process.
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.FAKE_TALOSCTL_DIR;
if (!dir) {
  process.stderr.write('FAKE_TALOSCTL_DIR is not set\n');
  process.exit(2);
}
const argv = process.argv.slice(2);
const env = { TZ: process.env.TZ ?? null, NO_COLOR: process.env.NO_COLOR ?? null };
appendFileSync(join(dir, 'calls.jsonl'), `${JSON.stringify({ argv, env })}\n`);

const { rules } = JSON.parse(readFileSync(join(dir, 'scenario.json'), 'utf8'));
const line = argv.join(' ');
const rule = rules.find((r) => new RegExp(r.match).test(line));
if (!rule) {
  // what cobra prints for a command it does not know, usage included
  process.stderr.write(`unknown command "${argv.join(' ')}" for "talosctl"\n\nUsage:\n  talosctl [command]\n`);
  process.exit(1);
}

const answer = () => {
  if (rule.stdout) process.stdout.write(rule.stdout);
  if (rule.stderr) process.stderr.write(rule.stderr);
  process.exitCode = rule.exit ?? 0;
};
if (rule.sleepMs) setTimeout(answer, rule.sleepMs);
else answer();
