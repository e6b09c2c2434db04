import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Runner } from '../../src/adapters/exec.js';
import { NodeLogs, type LogSink } from '../../src/report/nodeLog.js';

/** Records what would reach the job log, in order, as plain strings. */
function fakeSink(): LogSink & { out: string[] } {
  const out: string[] = [];
  return {
    out,
    info: (l) => out.push(l),
    startGroup: (t) => out.push(`::group::${t}`),
    endGroup: () => out.push('::endgroup::'),
  };
}

/** Every group opens and closes before the next one opens (GitHub does not nest or interleave them). */
function groups(out: string[]): Array<{ title: string; lines: string[] }> {
  const found: Array<{ title: string; lines: string[] }> = [];
  let cur: { title: string; lines: string[] } | undefined;
  for (const l of out) {
    if (l.startsWith('::group::')) {
      expect(cur, `group "${l}" opened inside "${cur?.title}"`).toBeUndefined();
      cur = { title: l.slice('::group::'.length), lines: [] };
    } else if (l === '::endgroup::') {
      expect(cur, 'endgroup without a group').toBeDefined();
      found.push(cur!);
      cur = undefined;
    } else if (cur) cur.lines.push(l);
  }
  expect(cur, 'a group left open').toBeUndefined();
  return found;
}

describe('NodeLogs', () => {
  it('keeps each node contiguous when two run at once, and shows their steps as they happen', async () => {
    const sink = fakeSink();
    const logs = new NodeLogs(sink);
    logs.info('2 node(s) to roll: w1, w2');

    const node = async (name: string, steps: string[], pause: number) => {
      const log = logs.forNode(name);
      const end = log.group(`${name} (worker)`);
      await logs.within(log, async () => {
        for (const s of steps) {
          log.progress(`▶ ${s}`);
          await sleep(pause);
          logs.line(`   0.10s  exit 0   kubectl ${s} ${name}`);
        }
      });
      end(`${name} (worker): rebooted in 4m 05s`);
    };
    await Promise.all([node('w1', ['claim', 'drain', 'reboot'], 15), node('w2', ['claim', 'drain'], 1)]);

    // live lines interleave, prefixed; nothing of a node's detail is written before its group
    const live = sink.out.filter((l) => /^w\d: ▶/.test(l));
    expect(live).toHaveLength(5);
    expect(sink.out.indexOf('w2: ▶ drain')).toBeLessThan(sink.out.indexOf('w1: ▶ reboot'));
    expect(sink.out[0]).toBe('2 node(s) to roll: w1, w2');

    const g = groups(sink.out);
    expect(g.map((x) => x.title)).toEqual(['w2 (worker): rebooted in 4m 05s', 'w1 (worker): rebooted in 4m 05s']);
    expect(g[1].lines).toEqual([
      '▶ claim',
      '   0.10s  exit 0   kubectl claim w1',
      '▶ drain',
      '   0.10s  exit 0   kubectl drain w1',
      '▶ reboot',
      '   0.10s  exit 0   kubectl reboot w1',
    ]);
    expect(g[0].lines.every((l) => !l.includes('w1'))).toBe(true);
    expect(logs.openNodes).toEqual([]);
  });

  it('routes the records of real child processes to the node that started them', async () => {
    const sink = fakeSink();
    const logs = new NodeLogs(sink);
    const runner = new Runner();
    runner.onCommand((r) =>
      logs.line(`ran ${r.command.includes('a-node') ? 'for a' : r.command.includes('b-node') ? 'for b' : 'for the run'}`),
    );
    const spawnFor = (tag: string) => runner.run({ file: process.execPath, args: ['-e', `setTimeout(() => {}, 20) // ${tag}`] });

    const a = logs.forNode('a');
    const b = logs.forNode('b');
    const endA = a.group('a');
    const endB = b.group('b');
    await Promise.all([
      logs.within(a, async () => {
        await spawnFor('a-node');
        await spawnFor('a-node');
      }),
      logs.within(b, () => spawnFor('b-node')),
      spawnFor('run-level'),
    ]);
    endB();
    endA();
    expect(sink.out[0]).toBe('ran for the run');
    expect(groups(sink.out)).toEqual([
      { title: 'b', lines: ['ran for b'] },
      { title: 'a', lines: ['ran for a', 'ran for a'] },
    ]);
  });

  it('a line for a node whose group is written is written at once with its name, never lost', async () => {
    const sink = fakeSink();
    const logs = new NodeLogs(sink);
    const log = logs.forNode('w1');
    const end = log.group('w1 (worker)');
    let later: Promise<void> = Promise.resolve();
    await logs.within(log, async () => {
      log.info('inside');
      later = sleep(5).then(() => logs.line('a late command record'));
    });
    end();
    end('again');
    await later;
    log.info('after the end');
    expect(sink.out).toEqual(['::group::w1 (worker)', 'inside', '::endgroup::', 'w1: a late command record', 'w1: after the end']);
  });

  it('flushAll writes the groups still open, marked unfinished, once', () => {
    const sink = fakeSink();
    const logs = new NodeLogs(sink);
    const w1 = logs.forNode('w1');
    const endW1 = w1.group('w1 (worker)');
    w1.progress('▶ drain');
    const w2 = logs.forNode('w2');
    w2.info('claimed');
    endW1('w1 (worker): failed in 3.0s');
    expect(logs.openNodes).toEqual(['w2']);
    logs.flushAll();
    logs.flushAll();
    expect(groups(sink.out)).toEqual([
      { title: 'w1 (worker): failed in 3.0s', lines: ['▶ drain'] },
      { title: 'w2 (unfinished when the run ended)', lines: ['claimed'] },
    ]);
    expect(sink.out[0]).toBe('w1: ▶ drain');
  });
});
