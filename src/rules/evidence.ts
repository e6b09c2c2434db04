// Evidence rule: may the action skip the drain and reboot of a node?
//
// The second bug of the old script: it skipped the reboot when a desired-revision marker was present,
// which says nothing about what the running containerd loaded. containerd reads registry auth only
// when it starts (docs/talos-facts.md#t11-registry-auth-loaded-at-start), so the invariant to prove is:
//
//   the running containerd was started AFTER the CRI config it reads was last written,
//   and that config carries EXACTLY the desired credential.
//
// Asymmetric costs decide every ambiguity: a wasted reboot costs ~90 s, a wrongly skipped one cost a day
// of ImagePullBackOff. So the verdict is `skip` only when every rule below holds; anything missing,
// failed, ambiguous or unparseable is `reboot`, with the first failed rule as the reason.
//
// Every instant arrives as an Instant: the bounds of the reading that produced it (nanosecond-exact
// over the Talos API, second-rounded through talosctl; docs/talos-evidence-timing.md). The rule
// compares bounds only, so one rule judges both read paths and a coarse reading can never pass for a
// precise one. Besides the verdict it classifies a `reboot` as CONTRADICTED (the readings prove the
// running containerd lacks the desired credential) or merely UNPROVEN (undecidable / unknown): after
// a reboot only the first is a failed roll.
// Pure: all instants arrive as arguments; nothing here reads a clock.
//
// One function per evidence condition, each in src/rules/evidence/, all feeding one collector
// (evidence/collector.ts); this file runs them in order and turns what they collected into the verdict:
//   rule 1  the cri service is Running and healthy        evidence/runningContainerd.ts (checkCriService)
//   rule 2  when the running containerd was launched       evidence/runningContainerd.ts (containerdStart)
//   rule 2b after the patch, a launch later than before it evidence/launchAfterPatch.ts
//   rule 3  when its CRI config was last written           evidence/configWrite.ts
//   rule 4  the config carries exactly the desired value   evidence/credential.ts
//   rule 5  the node clock gives no reason for doubt       evidence/clock.ts
//   rule 6  the launch provably after the write            evidence/ordering.ts
import { formatGap } from '../core/instants.js';
import type { DesiredCredential } from '../core/model/credential.js';
import type { ConfigFileReadings, EvidenceReadings } from '../core/model/readings.js';
import type { CriLaunch, EvidenceValues, EvidenceVerdict } from '../core/model/verdict.js';
import { iso } from './evidence/bounds.js';
import { checkClock } from './evidence/clock.js';
import { newCollector } from './evidence/collector.js';
import { configLastWrite } from './evidence/configWrite.js';
import { checkCredential } from './evidence/credential.js';
import { launchedAfterPatch } from './evidence/launchAfterPatch.js';
import { orderStartAfterWrite } from './evidence/ordering.js';
import { checkCriService, containerdStart } from './evidence/runningContainerd.js';

/**
 * The verdict. `skip` iff rules 1–5 (and 2b for a reading after the credential patch) hold AND start.earliest − write.latest > margin (strictly): a
 * pair within the margin, a tie, or overlapping bounds cannot be ordered and means `reboot`. The gap
 * is reported as the whole range the bounds allow, [start.earliest − write.latest, start.latest −
 * write.earliest], with the path that read it. `ordering` and `contradicts` say, for a `reboot`,
 * whether the readings disprove the credential being loaded or merely fail to prove it.
 * `values` carries everything read and compared, whatever the verdict.
 */
export function rebootEvidence(
  r: EvidenceReadings,
  desired: readonly DesiredCredential[],
  opts: {
    marginMs: number;
    /** set on a reading after the credential patch: the launch the reading before the patch placed (rule 2b) */
    afterPatch?: { before: CriLaunch | undefined };
  },
): EvidenceVerdict {
  const marginMs = opts.marginMs;
  const values: EvidenceValues = { marginMs, files: [] };
  const { c, collected, checking } = newCollector();
  if (r.talosVersion.ok) values.talosVersion = r.talosVersion.value;
  checking('margin');
  if (!Number.isFinite(marginMs) || marginMs < 0) c.fail(`the evidence margin (${marginMs} ms) is not a non-negative duration`);

  const fileValues = new Map<ConfigFileReadings, EvidenceValues['files'][number]>();
  checking('cri-service');
  checkCriService(r, values, c);
  checking('containerd-start');
  const start = containerdStart(r, values, c);
  if (start) {
    values.criStartEarliest = iso(start.earliestMs);
    values.criStartLatest = iso(start.latestMs);
    values.criStartSource = start.source;
    values.criStart = { earliestMs: start.earliestMs, latestMs: start.latestMs };
  }
  checking('launch-after-patch');
  if (opts.afterPatch) launchedAfterPatch(start, opts.afterPatch.before, values, c);
  checking('config-write');
  const { latest: write, perFile } = configLastWrite(r, values, c, fileValues);
  checking('credential');
  checkCredential(r, desired, c, fileValues);
  checking('clock');
  checkClock(r, start, perFile, values, c);

  checking('ordering');
  const ordering = orderStartAfterWrite(start, write, { marginMs, clockDoubted: collected.clockDoubted }, values, c);

  if (collected.failures.length === 0 && start && write && ordering === 'after') {
    return {
      verdict: 'skip',
      reason:
        `containerd PID ${start.pid} started ${formatGap(values.gap!.lowMs, values.gap!.highMs)} after the last config write ` +
        `(${write.path}, read via ${values.readPath}) and the config carries the desired credential for ${desired.map((d) => d.tomlHost).join(', ')}`,
      values,
      ordering,
      contradicts: false,
    };
  }
  const verdict: EvidenceVerdict = {
    verdict: 'reboot',
    reason: collected.failures[0] ?? 'the evidence is incomplete',
    values,
    ordering,
    contradicts: collected.contradicts,
  };
  if (collected.incomplete !== undefined) verdict.incomplete = collected.incomplete;
  if (collected.firstRule !== undefined) verdict.failedRule = collected.firstRule;
  return verdict;
}
