// The start checks of a roll, in the order the scheduler asks them (the port: core/model/startCheck.ts).
// One line per check; each check is one file of this folder.
import type { StartCheck } from '../../core/model/startCheck.js';
import type { NodeState } from '../../core/model/node.js';
import type { RunContext } from '../context.js';
import { silenceCheck } from './silence.js';

/** The checks of this roll; `selected`: the nodes the first listing selected to roll. */
export function startChecks(ctx: RunContext, roll: { selected: readonly NodeState[] }): StartCheck[] {
  return [...silenceCheck(ctx, roll.selected)];
}
