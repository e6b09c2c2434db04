import { describe, expect, it } from 'vitest';
import { Runner } from '../../src/adapters/exec.js';

const SECRET = 'hunter2-registry-token';
const echo = (text: string) => ({
  file: process.execPath,
  args: ['-e', `process.stdout.write(${JSON.stringify(text)}); process.stderr.write(${JSON.stringify(text)}); process.exit(3)`],
});

describe("Runner: a child's output is returned as it printed it", () => {
  // The adapters parse it: a masked byte would be a wrong reading. Masking is the sinks' job (src/action/masked.ts).
  it('stdout, stderr and the command record are kept byte for byte, whatever they hold', async () => {
    const runner = new Runner();
    const seen: string[] = [];
    runner.onCommand((r) => seen.push(r.command));
    const text = `{"metadata":{"name":"worker-1"},"spec":{"unschedulable":true}} password ${SECRET}\n`;
    const res = await runner.run({ ...echo(text), args: [...echo(text).args, 'worker-1'] });
    expect(res.exitCode).toBe(3);
    expect(res.stdout).toBe(text);
    expect(res.stderr).toBe(text);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/ worker-1$/);
  });
});

describe('Runner: one child ended through its own signal, its output streamed', () => {
  it('onStdout gets the output as it is written; aborting the signal kills that child and the result says aborted', async () => {
    const runner = new Runner();
    const stop = new AbortController();
    const chunks: string[] = [];
    const script = `process.stdout.write('line 1\\n'); setInterval(() => {}, 1000);`;
    const res = await runner.run({
      file: process.execPath,
      args: ['-e', script],
      signal: stop.signal,
      onStdout: (c) => {
        chunks.push(c);
        stop.abort();
      },
    });
    expect(chunks.join('')).toBe('line 1\n');
    expect(res.aborted).toBe(true);
    expect(res.signal).toBe('SIGTERM');
    expect(res.stdout).toBe('');
    // the runner itself goes on: its next command runs
    expect((await runner.run({ file: process.execPath, args: ['-e', ''] })).aborted).toBe(false);
  });

  it('a signal already aborted starts nothing', async () => {
    const runner = new Runner();
    const stop = new AbortController();
    stop.abort();
    const res = await runner.run({ file: process.execPath, args: ['-e', ''], signal: stop.signal });
    expect(res.aborted).toBe(true);
    expect(runner.processCount).toBe(0);
  });
});
