// The unsatisfiable-drain start check (docs/refused-drains.md): before a node is claimed, whether its
// drain can ever finish. A node whose drain provably cannot (src/rules/unsatisfiableDrain.ts, the rule
// plan's drain forecast asks too) is refused: never claimed, cordoned or changed; the roll goes on with the
// next. Anything the rule cannot prove, and any read that fails, answers `start`: the roll goes ahead as
// before this check existed. Reads only: the budgets (every start), the pods (only when a budget may
// hold a drain for good), the node's evidence (only when the rule found one, under `reboot: evidence`).
import { errorMessage } from '../../core/errors.js';
import type { NodeState } from '../../core/model/node.js';
import type { StartAnswer, StartCheck, StartQuestion } from '../../core/model/startCheck.js';
import type { UnsatisfiableDrain } from '../../core/model/unsatisfiableDrain.js';
import { filterDrainPods } from '../../core/drainFilter.js';
import { ACTION_DRAIN_FLAGS } from '../../core/workloads.js';
import { drainIsCertain, mayBeUnsatisfiable, unsatisfiableDrain } from '../../rules/unsatisfiableDrain.js';
import { unsatisfiableMessage, unsatisfiableNextStep } from '../../report/unsatisfiableDrain.js';
import type { RunContext } from '../context.js';
import { evidenceBeforeClaim } from '../plan.js';
import { readEvidence } from '../readEvidence.js';

/** The check's name: the result, the summary and the report name it so. */
export const UNSATISFIABLE_DRAIN = 'unsatisfiable-drain';

const START = { kind: 'start' } as const;

/** The check over this run's cluster. */
export function unsatisfiableDrainCheck(ctx: RunContext): StartCheck<UnsatisfiableDrain> {
  const look = async (q: StartQuestion): Promise<StartAnswer<UnsatisfiableDrain>> => {
    const node = q.node;
    let found: UnsatisfiableDrain | undefined;
    try {
      const pdbs = await ctx.kube.listPdbs();
      if (!mayBeUnsatisfiable(pdbs)) return START;
      const inputs = await ctx.kube.listDrainInputs();
      const filter = filterDrainPods(inputs.pods, node.name, new Set(inputs.daemonSets), ACTION_DRAIN_FLAGS);
      found = unsatisfiableDrain(node.name, filter, inputs.pods, inputs.pdbs);
      if (!found) return START;
      if (!(await drainCertain(ctx, node))) {
        q.log.info(
          `${node.name}: its drain could never finish, but its roll may skip the drain: it goes ahead (${unsatisfiableMessage(found)})`,
        );
        return START;
      }
    } catch (e) {
      q.log.info(`${node.name}: whether its drain can finish could not be read (${errorMessage(e)}): it goes ahead`);
      return START;
    }
    return {
      kind: 'refuse',
      check: UNSATISFIABLE_DRAIN,
      value: found,
      message: unsatisfiableMessage(found),
      nextStep: unsatisfiableNextStep(found),
    };
  };
  // no `forecast`: plan's drain forecast (src/pipeline/forecast.ts) already asks the same rule for every
  // node from one read of the pods and budgets, and the record carries it (`drainForecast.unsatisfiable`)
  return { name: UNSATISFIABLE_DRAIN, ask: look };
}

/** Whether the node's roll certainly drains it: `reboot: always`, or the evidence read now says reboot (the verdict plan shows). */
async function drainCertain(ctx: RunContext, node: NodeState): Promise<boolean> {
  if (ctx.config.reboot === 'always') return true;
  const address = node.internalIPs[0] ?? '';
  const readings = await readEvidence(ctx.talos, [{ name: node.name, address }], ctx.config.criConfigPaths);
  return drainIsCertain(ctx.config.reboot, evidenceBeforeClaim(ctx, node, readings.get(node.name)).evidence);
}
