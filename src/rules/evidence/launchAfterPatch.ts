// Evidence rule 2b: on a reading after the credential patch, the containerd judged is another, later
// launch than the one the reading before the patch placed.
import type { CriLaunch, EvidenceValues, EvidenceVerdict } from '../../core/model/verdict.js';
import { iso, type StartInstant } from './bounds.js';
import type { Collector } from './collector.js';

/**
 * Rule 2b (readings after the credential patch only) — the containerd judged was launched after the
 * patch. Talos's ApplyConfiguration returns before its controllers write cri.toml, and 1.14 restarts
 * cri only after that write: until then the containerd that ran before the patch still runs, holding
 * the old credential. The readings are taken so that a write between them errs toward reboot
 * (src/pipeline/readEvidence.ts), but a skip after the patch must not rest on that alone: the launch must be
 * another process than the one the reading before the patch placed (another PID) and provably later
 * (its earliest bound after that launch's latest bound). Both instants are the node's clock, never the
 * runner's, which may be skewed. Rules 3–6 then order this launch after the write that carries the
 * desired credential. A reading before the patch that placed no launch gives no anchor: no launch
 * after the patch can be proven new, so the answer is reboot.
 */
export function launchedAfterPatch(
  start: StartInstant | undefined,
  before: CriLaunch | undefined,
  values: EvidenceValues,
  c: Collector,
): void {
  if (!before) {
    c.fail('the reading before the patch placed no containerd launch, so no launch can be proven to follow the patch');
    return;
  }
  values.launchBeforePatch = { pid: before.pid, latest: iso(before.latestMs) ?? String(before.latestMs) };
  if (!start) return; // rule 2 said why
  if (start.pid === before.pid) {
    c.fail(`containerd PID ${start.pid} is the one that ran before the patch: Talos has not restarted cri since`);
  } else if (!(start.earliestMs > before.latestMs)) {
    c.fail(
      `containerd PID ${start.pid} (launched from ${iso(start.earliestMs)}) is not provably launched after PID ${before.pid}, ` +
        `which ran before the patch (launched by ${iso(before.latestMs)})`,
    );
  }
}

/** The launch a verdict's reading placed, for `afterPatch` of a later reading; undefined when it placed none. */
export function placedLaunch(v: EvidenceVerdict): CriLaunch | undefined {
  const { criPid, criStart } = v.values;
  if (criPid === undefined || !criStart) return undefined;
  return { pid: criPid, earliestMs: criStart.earliestMs, latestMs: criStart.latestMs };
}
