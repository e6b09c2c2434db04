// A kube-context the kubeconfig lacks is an input error naming `kube-context` (or the kubeconfig, whose
// current-context names no context), read from kubectl's own failure of the run's first command: no
// extra kubectl process checks the context beforehand. The texts are kubectl v1.32.4's
// (docs/kubernetes-facts.md#k8-kubectl-errors): `get` says client-go's validation.go text, `patch`,
// `drain` and `create` its client_config.go one.
import { describe, expect, it } from 'vitest';
import { Runner, type RunResult, type RunSpec } from '../../../src/adapters/exec.js';
import { Kubectl } from '../../../src/adapters/kube/kubectl.js';
import { missingContext } from '../../../src/adapters/kube/parse/kubectlErrors.js';
import { InputError, ToolError } from '../../../src/core/errors.js';

const GET = 'Error in configuration: context was not found for specified context: admin@prod\n';
const PATCH = 'error: context "admin@prod" does not exist\n';

/** A Runner whose every run fails with `stderr` (no process is started), counting the runs. */
function failing(stderr: string): { runner: Runner; runs: RunSpec[] } {
  const runs: RunSpec[] = [];
  const runner = new Runner();
  runner.run = async (spec: RunSpec): Promise<RunResult> => {
    runs.push(spec);
    return { stdout: '', stderr, exitCode: 1, signal: null, timedOut: false, aborted: false, durationMs: 1, startedAtMs: 0, endedAtMs: 1 };
  };
  return { runner, runs };
}

describe('missingContext', () => {
  it.each([
    ['get (validation.go)', GET, 'admin@prod'],
    ['patch (client_config.go)', PATCH, 'admin@prod'],
    ['another failure', 'Error from server (NotFound): nodes "x" not found\n', undefined],
    ['a node named like the text is no match', 'Error from server (NotFound): nodes "context was not found" not found\n', undefined],
  ])('%s', (_what, stderr, want) => {
    expect(missingContext(stderr)).toBe(want);
  });
});

describe('Kubectl: a context the kubeconfig lacks', () => {
  it('the first read fails with an InputError naming kube-context, in one kubectl process', async () => {
    const { runner, runs } = failing(GET);
    const kube = new Kubectl({ runner, kubeconfig: '/tmp/kubeconfig', context: 'admin@prod' });
    const err = await kube.getLease('kube-system', 'registry-auth-rollout').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).input).toBe('kube-context');
    expect((err as Error).message).toBe(
      'input "kube-context": the kubeconfig has no context "admin@prod" (kubectl: Error in configuration: context was not found for specified context: admin@prod)',
    );
    expect(runs).toHaveLength(1);
  });

  it("a patch's wording too", async () => {
    const { runner } = failing(PATCH);
    const kube = new Kubectl({ runner, context: 'admin@prod' });
    await expect(kube.patchNode('w1', [])).rejects.toMatchObject({ input: 'kube-context' });
  });

  it("no kube-context: the kubeconfig's own current-context is named, as the kubeconfig input's fault", async () => {
    const { runner } = failing('Error in configuration: context was not found for specified context: gone\n');
    const kube = new Kubectl({ runner });
    const err = await kube.listNodes().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).input).toBe('kubeconfig');
    expect((err as Error).message).toContain('its current-context "gone" names no context of the kubeconfig');
  });

  it('any other failure stays a classified ToolError', async () => {
    const { runner } = failing('Error from server (NotFound): nodes "w1" not found\n');
    const kube = new Kubectl({ runner, context: 'admin@prod' });
    const err = await kube.getNode('w1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).kind).toBe('not-found');
  });
});
