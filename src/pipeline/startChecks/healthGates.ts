// The storage and user health gates as a start check (docs/gates.md): every start waits while a gate is
// false; one false past gate-timeout ends the roll `partial`. The reads and the hold are
// src/pipeline/gates.ts's, which objects pass src/rules/gates.ts's, the words src/report/gates.ts's.
import type { GateValue } from '../../core/model/gates.js';
import type { StartCheck } from '../../core/model/startCheck.js';
import { failingLine, gateLines } from '../../report/gates.js';
import type { HealthGates } from '../gates.js';

export const GATE = 'gate';

export function healthGatesCheck(gates: HealthGates): StartCheck<GateValue[]> {
  /** the run's clock when it last answered start: a second start at that instant is not checked again */
  let startAt: number | undefined;
  return {
    name: GATE,
    async ask(q) {
      if (startAt === q.nowMs) return { kind: 'start' };
      const d = await gates.mayStart(q.log, q.node.name);
      if (d.kind === 'start') {
        startAt = q.nowMs;
        return { kind: 'start' };
      }
      if (d.kind === 'stop') return { kind: 'stop', ends: 'partial', check: GATE, value: d.values, message: d.message };
      return { kind: 'hold', check: GATE, value: d.values, message: d.line ?? failingLine(d.values) };
    },
    /** plan: every gate's value now, each said in the log */
    async forecast(q) {
      const values = await gates.check();
      for (const line of gateLines(values)) q.log.info(line);
      const found = { check: GATE, value: values, message: failingLine(values) };
      return values.every((v) => v.holds) ? { kind: 'start', ...found } : { kind: 'hold', ...found };
    },
  };
}
