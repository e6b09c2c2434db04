// Errors travel as a chain: each layer that adds to a failure wraps it (`cause`) and builds its own
// message once, instead of editing the message of the error it caught. The texts a user reads stay
// as they were; what changes is that every layer's error is still there to read.
import { describe, expect, it } from 'vitest';
import { RolloutError, ToolError } from '../../src/core/errors.js';
import { NodeStop, ReleaseFailedStop } from '../../src/pipeline/stop.js';
import { EndedEarlyError, NodesFailedError } from '../../src/pipeline/errors.js';
import { makeCluster, roll } from './harness.js';

/** `e` and every error below it through `cause`. */
function chain(e: unknown): unknown[] {
  const out: unknown[] = [];
  for (let c = e; c !== undefined && out.length < 10; c = c instanceof Error ? c.cause : undefined) out.push(c);
  return out;
}

const toolError = (command: string, kind: ToolError['kind'], stderr: string) =>
  new ToolError({ tool: 'kubectl', command, kind, exitCode: 1, stderr });

describe('errors wrap with cause (fakes)', () => {
  it('two nodes fail in flight: the first one is the message, both stops are kept, each down to the drain error', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    const drainErrors = new Map<string, ToolError>();
    c.kube.drain = async (name: string) => {
      const e = toolError(`kubectl drain ${name}`, 'timeout', 'global timeout reached');
      drainErrors.set(name, e);
      throw e;
    };
    const res = await roll(c, { maxUnavailable: { count: 2 } });
    expect(res.result).toBe('failed');
    expect(res.error).toBeInstanceOf(NodesFailedError);
    expect(res.error).toBeInstanceOf(RolloutError);
    const error = res.error as NodesFailedError;
    const [first] = error.failures;
    expect(error.message).toBe(
      `${first.node}: drain failed: kubectl drain ${first.node} failed (timeout, exit 1): global timeout reached (2 nodes failed: ${error.failures.map((f) => f.node).join(', ')}; see each below)`,
    );
    expect(error.failures.map((f) => f.node).sort()).toEqual(['w1', 'w2']);
    expect(error.nextStep).toBe(first.nextStep);
    expect(error.cause).toBe(first.cause);
    for (const f of error.failures) {
      expect(f.cause).toBeInstanceOf(NodeStop);
      expect(chain(f.cause)).toContain(drainErrors.get(f.node));
      // the record says what the stop said, without the other nodes
      expect(res.records.find((r) => r.node === f.node)?.reason).toBe(f.message);
    }
  });

  it('a release that fails after a failed drain: the stop and the release error are both in the chain', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const drainError = toolError('kubectl drain w1', 'timeout', 'global timeout reached');
    const releaseError = toolError('kubectl patch node w1', 'forbidden', 'Error from server (Forbidden): nodes "w1" is forbidden');
    let drained = false;
    c.kube.drain = async () => {
      drained = true;
      throw drainError;
    };
    c.kube.beforePatch = () => {
      if (drained) throw releaseError;
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    const reason = `drain failed: ${drainError.message}; releasing the claim failed too: ${releaseError.message}`;
    expect(res.records[0].reason).toBe(reason);
    expect(res.error?.message).toBe(`w1: ${reason}`);
    const stop = res.error?.cause;
    expect(stop).toBeInstanceOf(ReleaseFailedStop);
    expect((stop as ReleaseFailedStop).releaseError).toBe(releaseError);
    expect(((stop as ReleaseFailedStop).cause as NodeStop).message).toBe(`drain failed: ${drainError.message}`);
    expect(chain(stop)).toContain(drainError);
  });

  it('a listing that fails between passes: the message says how far the run got, the listing error is its cause', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const listError = toolError('kubectl get nodes', 'transport', 'Unable to connect to the server: EOF');
    const list = c.kube.listNodes.bind(c.kube);
    let lists = 0;
    c.kube.listNodes = async () => {
      if (++lists > 1) throw listError;
      return list();
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(res.records.map((r) => r.outcome)).toEqual(['rebooted']);
    expect(res.error).toBeInstanceOf(EndedEarlyError);
    expect(res.error?.message).toBe(
      `${listError.message}; 1 node(s) were already processed (listed below) and no further node was started`,
    );
    expect(res.error?.cause).toBe(listError);
    // the listing's own error is left as it was thrown
    expect(listError.message).toBe('kubectl get nodes failed (transport, exit 1): Unable to connect to the server: EOF');
  });
});
