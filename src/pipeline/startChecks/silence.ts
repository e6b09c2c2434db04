// The roll's Alertmanager silence as a start check (docs/alert-silence.md): created before the first
// claim (`begin`), extended on the run's clock while the roll runs, expired at its end (`end`); `ask`
// always answers `start` (alerts are not safety: nothing here holds or stops a node). Every failure
// of Alertmanager (unreachable, refused, a CA file that cannot be read) is a warning in the log and
// the report, never a failure of the roll.
//
// Why the silence never outlives the roll by more than `alertmanager-silence-tail` (the tail), even
// when the run is killed without its post step: each write sets `endsAt = now + tail`, and the writes
// come every tail/3 while the roll runs (however long a reboot wait is), so at any moment `endsAt` is
// at most one tail after the last moment the run was alive; a run killed stops extending it, and
// Alertmanager ends it by itself at that `endsAt`. A run that ends expires it at once (DELETE).
//
// An extension is Alertmanager's update (silence.go `Set`, `canUpdate`): POST with the silence's id,
// the same matchers and the same startsAt as the server holds them (read back with GET: the server moves
// a startsAt in the past to its own now) extends an active silence in place; otherwise Alertmanager
// expires it and answers a new id, which the check takes as the silence's from then on.
// A silence found expired before its endsAt was expired by someone (an operator): it is theirs, not
// created again. One found expired at its endsAt lapsed (an extension came too late): created again.
import { errorMessage } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import type { StartAnswer, StartCheck, StartCheckReports } from '../../core/model/startCheck.js';
import { matchersText, type SilenceMatcher, type SilenceReport } from '../../core/model/silence.js';
import type { SilencesClient } from '../../adapters/alertmanager/silences.js';
import type { NodeState } from '../../core/model/node.js';
import { DEFAULT_SILENCE_TAIL_MS, silenceMatchers } from '../../core/silence.js';
import type { RunContext } from '../context.js';

export const SILENCE_CHECK = 'alertmanager-silence';

export interface SilenceCheckDeps {
  /** opens the client (reads the CA file and the proxies: may throw, a warning then) */
  open: () => SilencesClient;
  clock: Clock;
  log: (message: string) => void;
  /** `alertmanager-url` */
  url: string;
  /** one silence per set, `$NODES` already expanded (core/silence.ts `silenceMatchers`) */
  sets: SilenceMatcher[][];
  tailMs: number;
  createdBy: string;
  comment: string;
}

interface Held {
  matchers: SilenceMatcher[];
  id?: string;
  /** the endsAt last written */
  endsAtMs?: number;
  state: SilenceReport['silences'][number]['state'];
  /** someone else expired it: not extended, not expired again */
  theirs?: boolean;
}

/** The longest single sleep of the extension loop, so `end` never waits long for it. */
const SLICE_MS = 1000;

export class SilenceCheck implements StartCheck<never> {
  readonly name = SILENCE_CHECK;
  private client?: SilencesClient;
  private readonly held: Held[];
  private readonly warnings: string[] = [];
  private ended = false;
  private loop?: Promise<void>;
  /** resolves when `end` is called: the extension loop's sleep ends with it */
  private readonly stopped: Promise<void>;
  private stop!: () => void;

  constructor(private readonly d: SilenceCheckDeps) {
    this.held = d.sets.map((matchers) => ({ matchers, state: 'not-created' }));
    this.stopped = new Promise((resolve) => (this.stop = resolve));
  }

  /** How often the silence is extended: three times a tail, so two missed writes still leave it covered. */
  get extendEveryMs(): number {
    return Math.max(1, Math.floor(this.d.tailMs / 3));
  }

  async begin(): Promise<void> {
    try {
      this.client = this.d.open();
    } catch (e) {
      this.warn(`the silence was not created: ${errorMessage(e)}`);
      return;
    }
    for (const h of this.held) await this.create(h);
    if (this.held.some((h) => h.id)) this.loop = this.extendWhileRolling();
  }

  ask(): Promise<StartAnswer<never>> {
    return Promise.resolve({ kind: 'start' });
  }

  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.stop();
    await this.loop;
    if (!this.client) return;
    for (const h of this.held) {
      if (!h.id || h.theirs) continue;
      try {
        await this.client.expire(h.id);
        h.state = 'expired';
        this.d.log(`Alertmanager silence ${h.id} expired (the roll ended)`);
      } catch (e) {
        this.warn(
          `silence ${h.id} could not be expired, it lapses by itself at ${new Date(h.endsAtMs ?? 0).toISOString()}: ${errorMessage(e)}`,
        );
      }
    }
    await this.client.close().catch(() => undefined);
  }

  /** The run's result carries the silences under `silence`. */
  result(): StartCheckReports {
    return { silence: this.report() };
  }

  /** What the summary, the annotations and the report file say; undefined before `begin`. */
  report(): SilenceReport {
    return {
      alertmanager: this.d.url,
      silences: this.held.map((h) => ({ ...(h.id ? { id: h.id } : {}), matchers: matchersText(h.matchers), state: h.state })),
      warnings: [...this.warnings],
    };
  }

  private async create(h: Held): Promise<void> {
    const now = this.d.clock.now();
    const endsAtMs = now + this.d.tailMs;
    try {
      const id = await this.client!.post({
        matchers: h.matchers,
        startsAt: new Date(now).toISOString(),
        endsAt: new Date(endsAtMs).toISOString(),
        createdBy: this.d.createdBy,
        comment: this.d.comment,
      });
      Object.assign(h, { id, endsAtMs, state: 'left' });
      this.d.log(
        `Alertmanager silence ${id} created (${matchersText(h.matchers)}), until ${new Date(endsAtMs).toISOString()}, extended while the roll runs`,
      );
    } catch (e) {
      this.warn(`the silence ${matchersText(h.matchers)} was not created: ${errorMessage(e)}`);
      return;
    }
  }

  private async extendWhileRolling(): Promise<void> {
    for (let next = this.d.clock.now() + this.extendEveryMs; ; next += this.extendEveryMs) {
      while (!this.ended && this.d.clock.now() < next) {
        await Promise.race([this.d.clock.sleep(Math.min(SLICE_MS, next - this.d.clock.now())), this.stopped]);
      }
      if (this.ended) return;
      for (const h of this.held) if (h.id && !h.theirs) await this.extend(h);
      // a write that took longer than the interval: the next comes one interval after it, not at once
      next = Math.max(next, this.d.clock.now() - this.extendEveryMs);
    }
  }

  private async extend(h: Held): Promise<void> {
    const client = this.client!;
    try {
      const got = await client.get(h.id!);
      if (!got || got.status.state === 'expired') {
        if (got && h.endsAtMs !== undefined && Date.parse(got.endsAt) < h.endsAtMs - 1000) {
          h.theirs = true;
          h.state = 'expired';
          this.warn(`silence ${h.id} was expired by someone else at ${got.endsAt}: it is not created again`);
          return;
        }
        this.d.log(`Alertmanager silence ${h.id} ${got ? 'lapsed' : 'is gone'}: created again`);
        await this.create(h);
        return;
      }
      const endsAtMs = this.d.clock.now() + this.d.tailMs;
      const id = await client.post({
        id: got.id,
        matchers: got.matchers,
        startsAt: got.startsAt,
        endsAt: new Date(endsAtMs).toISOString(),
        createdBy: got.createdBy,
        comment: got.comment,
      });
      if (id !== h.id) this.d.log(`Alertmanager silence ${h.id} was replaced by ${id} (Alertmanager could not extend it in place)`);
      h.id = id;
      h.endsAtMs = endsAtMs;
    } catch (e) {
      this.warn(
        `silence ${h.id} could not be extended (it lapses at ${new Date(h.endsAtMs ?? 0).toISOString()} unless a later extension reaches Alertmanager): ${errorMessage(e)}`,
      );
    }
  }

  /** A warning, said once: the log at once, the report and the annotation at the end. */
  private warn(message: string): void {
    const text = `Alertmanager silence: ${message}`;
    if (this.warnings.includes(text)) return;
    this.warnings.push(text);
    this.d.log(`warning: ${text}`);
  }
}

/** The roll's silence check: none without `alertmanager-url`, else one, its matchers expanded for the nodes the roll selected. */
export function silenceCheck(ctx: RunContext, selected: readonly NodeState[]): SilenceCheck[] {
  const { config } = ctx;
  if (!config.alertmanagerUrl || !config.alertmanagerMatchers || !ctx.openSilences) return [];
  return [
    new SilenceCheck({
      open: ctx.openSilences,
      clock: ctx.clock,
      log: (m) => ctx.log.info(m),
      url: config.alertmanagerUrl,
      sets: silenceMatchers(config.alertmanagerMatchers, selected),
      tailMs: config.silenceTailMs ?? DEFAULT_SILENCE_TAIL_MS,
      createdBy: 'talos-registry-auth-rollout',
      comment: `registry credential roll, revision ${config.revision}, run ${ctx.owner}: node(s) ${selected.map((n) => n.name).join(', ')}`,
    }),
  ];
}
