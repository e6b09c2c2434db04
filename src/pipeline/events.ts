// Writing the Kubernetes Events of the run (src/report/events.ts builds them): one command per node
// at its end, and one for the run's Lease. An Event is a courtesy to whoever reads the cluster, never
// part of the roll: a write that fails (RBAC without `create` on events, an admission webhook) is
// warned about once per run, then the run stays quiet about it and rolls on.
import type { KubeClient } from '../adapters/types.js';
import { errorMessage } from '../core/errors.js';
import type { RolloutEvent } from '../core/events.js';
import type { DecisionRecord } from '../core/model/record.js';
import { eventMessage, nodeEvents } from '../report/events.js';

export class EventWriter {
  #warning?: string;

  constructor(
    private readonly kube: KubeClient,
    /** the run's masking of its secrets, applied to every message whole (messages never carry one, but any reader of Events sees them) */
    private readonly redact: (text: string) => string = (t) => t,
    /** the run's owner token, written as each Event's reportingInstance */
    private readonly run?: string,
  ) {}

  /** the one warning of the run, once a write failed */
  get warning(): string | undefined {
    return this.#warning;
  }

  /** A node's run ended: its Events, built from its record. */
  node(record: Readonly<DecisionRecord>, log: (message: string) => void): Promise<void> {
    return this.write(nodeEvents(record), log);
  }

  /**
   * The one place an Event's text leaves the action. Each message is masked whole first, and only then
   * folded onto one line and cut to the note limit: a secret straddling the cut would otherwise be cut
   * before the masking could recognise it, and its prefix would stay in the Event. Never throws: the
   * first failure is logged and kept as the run's warning, later ones are not said again.
   */
  async write(events: RolloutEvent[], log: (message: string) => void): Promise<void> {
    if (events.length === 0) return;
    try {
      await this.kube.createEvents(
        events.map((e) => ({ ...e, message: eventMessage(this.redact(e.message)), ...(this.run ? { run: this.run } : {}) })),
      );
    } catch (e) {
      if (this.#warning) return;
      this.#warning =
        `could not write the run's Kubernetes Events (does the action's RBAC allow \`create\` on \`events\`?): ${errorMessage(e).split('\n')[0]}; ` +
        'the roll does not depend on them and went on; no further Event failure is reported in this run';
      log(`⚠ ${this.#warning}`);
    }
  }
}
