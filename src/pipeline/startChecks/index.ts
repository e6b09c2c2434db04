// The start checks, in the order the scheduler asks them (src/core/model/startCheck.ts, docs/start-checks.md):
// one line per check.
import type { StartCheck } from '../../core/model/startCheck.js';
import type { RunContext } from '../context.js';
import { unsatisfiableDrainCheck } from './unsatisfiableDrain.js';

/** This run's start checks, in order. */
export function startChecks(ctx: RunContext): StartCheck[] {
  return [
    unsatisfiableDrainCheck(ctx), // a drain that can never finish: the node refused before its claim (docs/refused-drains.md)
  ];
}
