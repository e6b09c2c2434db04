// The settle gate as a start check (docs/settle.md): with several workers, a start waits until what the
// drains of the nodes that finished evicted is available again; past settle-timeout the run fails. The
// gate itself (what was evicted, the waits, their holds) is src/pipeline/settle.ts's, shared with the
// wait before each drain; the rule src/rules/settle.ts's; the words src/report/settle.ts's.
import { errorMessage } from '../../core/errors.js';
import type { StartCheck } from '../../core/model/startCheck.js';
import type { PodOwnerReading } from '../../core/workloads.js';
import type { Unsettled } from '../../rules/settle.js';
import { describeUnsettled, settleForecastLine } from '../../report/settle.js';
import { SettleTimeoutError } from '../errors.js';
import type { SettleGate } from '../settle.js';

export const SETTLE = 'settle';

/** What the gate waits for (apply), or the workloads the drains would wait for (plan's forecast). */
export type SettleValue = { waitingFor: readonly Unsettled[] } | { wouldWaitFor: string[] };

/** Plan: the nodes the roll would drain, and the pods already listed for the drain forecast. */
export interface PlannedDrains {
  nodes: readonly string[];
  pods?: readonly PodOwnerReading[];
}

export function settleCheck(gate: SettleGate, maxUnavailable: () => number, planned?: PlannedDrains): StartCheck<SettleValue> {
  /** the run's clock when it last answered start: a second start at that instant is not checked again */
  let startAt: number | undefined;
  return {
    name: SETTLE,
    async ask(q) {
      // with one worker the wait before each drain is the gate (src/pipeline/node.ts)
      if (maxUnavailable() <= 1 || !gate.waiting || startAt === q.nowMs) return { kind: 'start' };
      let left: readonly Unsettled[];
      try {
        left = await gate.mayStart(q.log, q.node.name);
      } catch (e) {
        const error = e instanceof Error ? e : new Error(String(e));
        const waitingFor = e instanceof SettleTimeoutError ? e.unsettled : [];
        return { kind: 'stop', ends: 'failed', error, check: SETTLE, value: { waitingFor }, message: errorMessage(error) };
      }
      if (left.length === 0) {
        startAt = q.nowMs;
        return { kind: 'start' };
      }
      return { kind: 'hold', check: SETTLE, value: { waitingFor: left }, message: describeUnsettled(left) };
    },
    async forecast(q) {
      if (!gate.enabled || !planned) return undefined;
      try {
        const waits = await gate.predictWaits(planned.nodes, planned.pods);
        const message = settleForecastLine(waits);
        q.log.info(message);
        const found = { check: SETTLE, value: { wouldWaitFor: waits }, message };
        return waits.length > 0 ? { kind: 'hold', ...found } : { kind: 'start', ...found };
      } catch (e) {
        // a prediction only: the plan stands without it
        q.log.info(`settle gate: could not predict which workloads the roll would wait for: ${errorMessage(e)}`);
        return undefined;
      }
    },
  };
}
