// The health gates in a run (docs/gates.md): the kinds they read, learnt once from discovery before
// anything is changed, and one check before each node starts, held (and recorded as a hold) while a
// gate is false, until `gate-timeout`. Which objects pass is src/rules/gates.ts's; the reads are
// the KubeClient's (parsed by src/adapters/kube/parse/gateReads.ts); the words of a value are src/report/gates.ts's.
import type { KubeClient } from '../adapters/types.js';
import type { Clock } from '../core/clock.js';
import { InputError, ToolError } from '../core/errors.js';
import { formatDuration } from '../core/format.js';
import type { GateSpec, GateValue, ServedKind } from '../core/model/gates.js';
import { gateTest, judgeGate, STORAGE_GATES, unreadGates, type ObjectTest } from '../rules/gates.js';
import { failingLine } from '../report/gates.js';
import type { HoldRecorder, OpenHold } from './holds.js';

export interface GatesLog {
  info(message: string): void;
}

/** What one start's check decided: start now, wait a poll interval, or stop new starts (the gate timed out); with every gate's value. */
export type GateDecision =
  { kind: 'start' | 'wait'; values: GateValue[]; line?: string } | { kind: 'stop'; message: string; values: GateValue[] };

interface Resolved {
  gates: Array<{ spec: GateSpec; test: ObjectTest }>;
  /** every kind the gates read, once each: one `kubectl get` lists them all */
  kinds: ServedKind[];
}

export class HealthGates {
  #resolved?: Resolved;
  #hold?: { startMs: number; hold: OpenHold };

  constructor(
    private readonly deps: {
      kube: KubeClient;
      clock: Clock;
      holds: HoldRecorder;
      timeoutMs: number;
      /** the `health-gates` input */
      user: readonly GateSpec[];
      /** `storage-gate` */
      storage: boolean;
    },
  ) {}

  /**
   * Discovery, once per run, before anything is changed: a gate of `health-gates` whose kind the
   * cluster does not serve is an input error; a built-in storage gate over a kind it does not serve
   * (no Longhorn) is skipped, and said once.
   */
  async resolve(log: GatesLog): Promise<void> {
    if (this.#resolved) return;
    const served = await this.deps.kube.servedKinds();
    // the CEL library, loaded only when a gate has an expression (src/core/cel.ts says why)
    const cel = this.deps.user.length > 0 ? await import('../core/cel.js') : undefined;
    const find = (s: GateSpec): ServedKind | undefined => {
      const k = served.find((x) => x.group === s.group && x.kind === s.kind);
      return k && s.version && s.version !== k.version ? { ...k, version: s.version } : k;
    };
    const gates: Resolved['gates'] = [];
    const kinds = new Map<string, ServedKind>();
    const skipped: string[] = [];
    for (const spec of [...(this.deps.storage ? STORAGE_GATES : []), ...this.deps.user]) {
      const kind = find(spec);
      if (!kind) {
        if (spec.expression === undefined) {
          skipped.push(spec.name);
          continue;
        }
        const named = spec.group ? `${spec.kind}.${spec.group}` : `${spec.kind} (core group)`;
        throw new InputError(
          'health-gates',
          `gate "${spec.name}": the cluster serves no kind ${named} (kubectl api-resources); nothing was changed`,
        );
      }
      gates.push({ spec, test: gateTest(spec, cel?.compileCel) });
      kinds.set(`${kind.resource}.${kind.version}.${kind.group}`, kind);
    }
    if (skipped.length > 0)
      log.info(
        `health gates: ${skipped.join(', ')} skipped: the cluster does not serve ${skipped.length === 1 ? 'its kind' : 'their kinds'}`,
      );
    this.#resolved = { gates, kinds: [...kinds.values()] };
  }

  /** Every gate's value now, from one listing of every kind they read (an unreadable listing: none holds). */
  async check(): Promise<GateValue[]> {
    const r = this.#resolved;
    if (!r) throw new Error('health gates checked before they were resolved (a bug in the run order)');
    if (r.gates.length === 0) return [];
    let objects;
    try {
      objects = await this.deps.kube.listGateObjects(r.kinds);
    } catch (e) {
      if (e instanceof InputError) throw e;
      // the classified cause, never the tool's words: a listing's error may quote what it read
      return unreadGates(
        r.gates.map((g) => g.spec),
        e instanceof ToolError ? e.kind : 'unknown',
      );
    }
    return r.gates.map((g) => judgeGate(g.spec, g.test, objects));
  }

  /**
   * Before `next` starts: start when every gate holds; else wait (the hold is recorded and logged once,
   * then on change), and stop new starts once a gate stayed false for gate-timeout.
   */
  async mayStart(log: GatesLog, next: string): Promise<GateDecision> {
    const values = await this.check();
    const now = this.deps.clock.now();
    if (values.every((v) => v.holds)) {
      if (this.#hold) {
        this.#hold.hold.end(now);
        log.info(`health gates: all hold again after ${formatDuration(now - this.#hold.startMs)}; starts go on`);
      }
      this.#hold = undefined;
      return { kind: 'start', values };
    }
    const line = failingLine(values);
    if (!this.#hold) {
      this.#hold = { startMs: now, hold: this.deps.holds.start('gate', now, line, next) };
      log.info(`health gates: new starts (next: ${next}) wait for ${line}`);
    } else if (this.#hold.hold.says(line)) {
      log.info(`health gates: new starts (next: ${next}) wait for ${line}`);
    }
    if (now - this.#hold.startMs >= this.deps.timeoutMs) {
      this.#hold.hold.end(now);
      const names = values.filter((v) => !v.holds).map((v) => v.name);
      return {
        kind: 'stop',
        message: `health gate ${names.join(', ')} stayed false for ${formatDuration(this.deps.timeoutMs)} (gate-timeout): ${line}; no further node was started`,
        values,
      };
    }
    return { kind: 'wait', values, line };
  }
}
