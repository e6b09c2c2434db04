// Rule 2b (src/rules/evidence/launchAfterPatch.ts), judged through the verdict.
import { describe, expect, it } from 'vitest';
import { rebootEvidence } from '../../../src/rules/evidence.js';
import { placedLaunch } from '../../../src/rules/evidence/launchAfterPatch.js';
import { apiNode, base, cliNode, cri, ghcr, H, OLD, S, T0, type Timeline, W } from './fixtures.js';

// Rule 2b: after the credential patch a skip rests on a containerd launched after the one the reading
// before the patch placed. The hazard it closes: Talos writes cri.toml after ApplyConfiguration has
// returned, so a reading after the patch can pair the containerd that ran before it (and the write time
// it was ordered after) with the new content; the plain rule skips that.
describe('rebootEvidence after the credential patch (rule 2b: a launch after the patch)', () => {
  const PATCH = T0 - 10 * S; // the patch, on the node clock
  const prePatch = rebootEvidence(apiNode({ ...base, pid: 1893 }), [{ ...ghcr, fields: OLD }], { marginMs: 10 });
  const before = placedLaunch(prePatch)!;
  /** the old containerd, the old write time, the new content: one reading straddling the write */
  const straddled = () => apiNode({ ...base, pid: 1893 });

  it('the reading before the patch places its launch: PID and the launch bounds, node clock', () => {
    expect(before).toEqual({ pid: 1893, earliestMs: W + 98.5, latestMs: W + 100.2 });
  });

  it('the containerd that ran before the patch is never a skip, though the plain rule would skip the straddled reading', () => {
    expect(rebootEvidence(straddled(), [ghcr], { marginMs: 10 }).verdict).toBe('skip');
    const v = rebootEvidence(straddled(), [ghcr], { marginMs: 10, afterPatch: { before } });
    expect(v.verdict).toBe('reboot');
    expect(v.reason).toBe('containerd PID 1893 is the one that ran before the patch: Talos has not restarted cri since');
    expect(v.contradicts).toBe(false);
    expect(v.values.launchBeforePatch).toEqual({ pid: 1893, latest: new Date(W + 100.2).toISOString() });
  });

  it('a new containerd launched after the write that carries the credential is a skip (API)', () => {
    const tl: Timeline = { W: PATCH + 120, L: PATCH + 120 + 300, pid: 2377, before: T0, after: T0 + 50 };
    const v = rebootEvidence(apiNode(tl), [ghcr], { marginMs: 10, afterPatch: { before } });
    expect(v.verdict, v.reason).toBe('skip');
    expect(v.reason).toMatch(/^containerd PID 2377 started \+\d+ ms ± \d+ ms after the last config write/);
  });

  it('a new containerd read through talosctl: a skip when the second-rounded bounds order both', () => {
    const cliBefore = placedLaunch(rebootEvidence(cliNode({ ...base, pid: 1893 }), [ghcr], { marginMs: 10 }))!;
    const tl: Timeline = { W: PATCH + 120, L: PATCH + 120 + 5000, pid: 2377, before: T0, after: T0 + 400 };
    expect(rebootEvidence(cliNode(tl), [ghcr], { marginMs: 10, afterPatch: { before: cliBefore } }).verdict).toBe('skip');
  });

  it('another PID whose launch is not provably later than the one before the patch is not a skip', () => {
    // the same instants as before the patch under another PID: a reading that contradicts itself
    const v = rebootEvidence(apiNode({ ...base, pid: 2377 }), [ghcr], { marginMs: 10, afterPatch: { before } });
    expect(v.verdict).toBe('reboot');
    expect(v.reason).toMatch(
      /^containerd PID 2377 \(launched from .*\) is not provably launched after PID 1893, which ran before the patch/,
    );
  });

  it('compares node instants only: a runner clock far off the node changes nothing', () => {
    // the new launch and write 10 s in the node's past, the runner window an hour ahead of the node
    const tl: Timeline = { W: PATCH + 120, L: PATCH + 120 + 300, pid: 2377, before: T0 + H, after: T0 + H + 50 };
    expect(rebootEvidence(apiNode(tl), [ghcr], { marginMs: 10, afterPatch: { before } }).verdict).toBe('skip');
  });

  it('a reading before the patch that placed no launch gives no anchor: reboot, and it says so', () => {
    const unplaced = apiNode(base);
    // no start event left in the history (pushed out of the 64 events)
    cri(unplaced).events = cri(unplaced).events.filter((e) => !/started with PID/.test(e.message));
    const pre = rebootEvidence(unplaced, [ghcr], { marginMs: 10 });
    expect(placedLaunch(pre)).toBeUndefined();
    const tl: Timeline = { W: PATCH + 120, L: PATCH + 120 + 300, pid: 2377, before: T0, after: T0 + 50 };
    const v = rebootEvidence(apiNode(tl), [ghcr], { marginMs: 10, afterPatch: { before: undefined } });
    expect(v.verdict).toBe('reboot');
    expect(v.reason).toBe('the reading before the patch placed no containerd launch, so no launch can be proven to follow the patch');
  });
});
