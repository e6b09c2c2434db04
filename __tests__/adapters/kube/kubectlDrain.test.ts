// Kubectl.drain classifies its own failure: a timeout (kubectl's --timeout, or our deadline past it)
// is a DrainTimeoutError naming the pods the drain's output says kept it from finishing, so the
// pipeline reads the pods from the error and never parses kubectl's text.
import { describe, expect, it } from 'vitest';
import { Runner, type RunResult, type RunSpec } from '../../../src/adapters/exec.js';
import { Kubectl } from '../../../src/adapters/kube/kubectl.js';
import { DrainTimeoutError, ToolError } from '../../../src/core/errors.js';
import { drainTimeoutStderr, pdbRefusal } from '../../fakes/drainText.js';

/** A Runner whose every run answers `result` (no process is started). */
function answering(result: Partial<RunResult>): Runner {
  const runner = new Runner();
  runner.run = async (_spec: RunSpec): Promise<RunResult> => ({
    stdout: '',
    stderr: '',
    exitCode: 0,
    signal: null,
    timedOut: false,
    aborted: false,
    durationMs: 1,
    startedAtMs: 0,
    endedAtMs: 1,
    ...result,
  });
  return runner;
}

describe('Kubectl.drain failures', () => {
  it("kubectl's own timeout: a DrainTimeoutError carrying the pods still pending", async () => {
    const stderr = drainTimeoutStderr({ node: 'w2', pending: 'shop/web-1', timeout: '1m0s' });
    const kube = new Kubectl({ runner: answering({ exitCode: 1, stderr }) });
    const err = await kube.drain('w2', 60_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DrainTimeoutError);
    expect(err).toMatchObject({ tool: 'kubectl', kind: 'timeout', node: 'w2', exitCode: 1, stderr, blockedPods: ['shop/web-1'] });
  });

  it('our deadline past it: a DrainTimeoutError naming the pods a PDB refused', async () => {
    const stderr = [pdbRefusal('shop/web-1'), pdbRefusal('shop/web-1')].join('\n');
    const kube = new Kubectl({ runner: answering({ exitCode: null, signal: 'SIGKILL', timedOut: true, stderr }) });
    const err = await kube.drain('w2', 1_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DrainTimeoutError);
    expect((err as DrainTimeoutError).blockedPods).toEqual(['shop/web-1']);
  });

  it('any other failure stays a plain ToolError', async () => {
    const stderr =
      'error: unable to drain node "w1" due to error: [cannot delete Pods that declare no controller (use --force to override): default/bare], continuing command...';
    const kube = new Kubectl({ runner: answering({ exitCode: 1, stderr }) });
    const err = await kube.drain('w1', 60_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect(err).not.toBeInstanceOf(DrainTimeoutError);
  });
});
