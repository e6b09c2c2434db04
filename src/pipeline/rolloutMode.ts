// `mode: apply` and `mode: plan` as one function: the run's ports in, a plain report out. The
// report carries the run's result and the facts its summary names; it renders nothing (the
// action's one publisher, src/action/publish.ts, turns it into outputs, annotations and summary).
import type { RolloutResult } from '../core/model/rolloutResult.js';
import { judgeRevocation } from '../rules/revocation.js';
import type { RolloutDeps } from './context.js';
import { runRollout, type ScopedFindings } from './run.js';

/** The run's result (core/model/rolloutResult.ts), as the mode hands it to the publisher. */
export interface RolloutReport extends RolloutResult {
  kind: 'rollout';
}

/** Never throws: however the run ends, the report says so (`failed` with its error when it threw). */
export async function runRolloutMode(deps: RolloutDeps): Promise<RolloutReport> {
  const { config } = deps;
  let result: ScopedFindings;
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
    registry: deps.desired.map((d) => d.host),
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
      proofChecks: result.proofChecks,
    }),
    ...rest,
  };
}
