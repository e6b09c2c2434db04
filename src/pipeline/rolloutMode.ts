// `mode: apply` and `mode: plan` as one function: the run's ports in, a plain report out. The
// report carries the run's result and the facts its summary names; it renders nothing (the
// action's one publisher, src/action/publish.ts, turns it into outputs, annotations and summary).
import { judgeRevocation, type RevocationVerdict } from '../rules/revocation.js';
import type { RolloutDeps } from './context.js';
import { runRollout, type RolloutResult } from './run.js';

export interface RolloutReport extends Omit<RolloutResult, 'scope'> {
  kind: 'rollout';
  mode: 'apply' | 'plan';
  /** the registry host the credential is for */
  registry: string;
  revision: string;
  topologyKey?: string;
  /** a `partial` run fails the step */
  failOnPartial: boolean;
  /** this run's claim token (repository, run id, attempt, nonce): the run's identity in the report file */
  owner?: string;
  /** may the old credential be revoked now, and has the selection converged (src/rules/revocation.ts), judged on the run's last listing of every node */
  revocation?: RevocationVerdict;
}

/** Never throws: however the run ends, the report says so (`failed` with its error when it threw). */
export async function runRolloutMode(deps: RolloutDeps): Promise<RolloutReport> {
  const { config } = deps;
  let result: RolloutResult;
  try {
    result = await runRollout(deps);
  } catch (e) {
    result = { result: 'failed', records: [], notReached: [], upToDate: [], error: e instanceof Error ? e : new Error(String(e)) };
  }
  const mode = config.mode === 'plan' ? 'plan' : 'apply';
  // the listing itself stays here: the report carries only the verdict on it
  const { scope, ...rest } = result;
  return {
    kind: 'rollout',
    mode,
    registry: deps.desired.map((d) => d.host).join(', '),
    revision: config.revision,
    topologyKey: config.topologyKey,
    failOnPartial: config.failOnPartial,
    owner: deps.owner,
    revocation: judgeRevocation({
      mode,
      revision: config.revision,
      hosts: deps.desired.map((d) => d.host),
      keys: deps.keys,
      listing: scope,
      records: result.records,
      notReached: result.notReached,
    }),
    ...rest,
  };
}
