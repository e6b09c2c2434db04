// Writes __tests__/durations.json (seconds per test file) from a vitest JSON report, for the test
// sequencer (__tests__/sequencer.ts), which starts the longest files first on a fresh clone:
//   npx vitest run --reporter=json --outputFile=/tmp/vitest.json && node scripts/test-durations.mjs /tmp/vitest.json
import { readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const report = process.argv[2];
if (!report) {
  console.error('usage: node scripts/test-durations.mjs <vitest JSON report>');
  process.exit(2);
}
const root = resolve(import.meta.dirname, '..');
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
const seconds = Object.fromEntries(
  testResults.map((f) => [relative(root, f.name), Math.round((f.endTime - f.startTime) / 100) / 10]).sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(resolve(root, '__tests__', 'durations.json'), `${JSON.stringify(seconds, null, 2)}\n`);
console.log(`${Object.keys(seconds).length} files written to __tests__/durations.json`);
