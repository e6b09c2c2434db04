// The run's holds (the summary's timeline): each moment the settle gate, a health gate, the time budget or the maintenance windows held
// starts back, recorded here and nowhere else, in the order they began.
import type { RollHold } from '../core/model/record.js';

/** One hold as it goes on: what it waits for (logged by its owner when it changes), and its end. */
export interface OpenHold {
  /** the line it waits for now; true when that line differs from the last one (worth logging) */
  says(detail: string): boolean;
  /** it ended at `atMs` */
  end(atMs: number): void;
}

export class HoldRecorder {
  readonly #all: RollHold[] = [];

  /** every hold so far, in order (a hold still going on has no endedAt) */
  get all(): RollHold[] {
    return this.#all;
  }

  /** A hold starts at `atMs` on `node`'s start or drain; a budget stop is one that never ends. */
  start(kind: RollHold['kind'], atMs: number, detail: string, node: string): OpenHold {
    const hold: RollHold = { kind, startedAt: new Date(atMs).toISOString(), detail, node };
    this.#all.push(hold);
    let said = detail;
    return {
      says: (line) => {
        if (line === said) return false;
        said = hold.detail = line;
        return true;
      },
      end: (at) => {
        hold.endedAt = new Date(at).toISOString();
      },
    };
  }
}
