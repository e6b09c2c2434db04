import { describe, expect, it } from 'vitest';
import { Runner } from '../../src/adapters/exec.js';

const SECRET = 'hunter2-registry-token';
const echo = (text: string) => ({
  file: process.execPath,
  args: ['-e', `process.stdout.write(${JSON.stringify(text)}); process.stderr.write(${JSON.stringify(text)}); process.exit(3)`],
});

describe('Runner: tool output is redacted before it is stored', () => {
  it('stdout, stderr and the command record never carry a registered secret', async () => {
    const runner = new Runner();
    runner.addSecret(SECRET);
    const seen: string[] = [];
    runner.onCommand((r) => seen.push(r.command));
    const res = await runner.run({ ...echo(`error: password ${SECRET}\n`), args: [...echo(`error: password ${SECRET}\n`).args, SECRET] });
    expect(res.exitCode).toBe(3);
    expect(res.stdout).toBe('error: password ***\n');
    expect(res.stderr).toBe('error: password ***\n');
    expect(seen.join('\n')).not.toContain(SECRET);
  });

  it('rawStdout keeps stdout as written (a file compared with the credential) and still redacts stderr', async () => {
    const runner = new Runner();
    runner.addSecret(SECRET);
    const res = await runner.run({ ...echo(`password = '${SECRET}'`), rawStdout: true });
    expect(res.stdout).toBe(`password = '${SECRET}'`);
    expect(res.stderr).toBe(`password = '***'`);
  });

  it('a secret registered after a run does not change what was stored, and mask() redacts text on demand', async () => {
    const runner = new Runner();
    const res = await runner.run(echo(SECRET));
    runner.addSecret(SECRET);
    expect(res.stdout).toBe(SECRET);
    expect(runner.mask(`x ${SECRET} y`)).toBe('x *** y');
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
