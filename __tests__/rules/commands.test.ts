// The commands a person is told to run (src/rules/commands.ts): what a node left as another actor set
// it tells a person, said from the node as read now. Whether it keeps the run Lease is release.test.ts's.
import { describe, expect, it } from 'vitest';
import { leftAsSetReport } from '../../src/rules/commands.js';
import { captureClaim } from '../../src/rules/claim.js';
import { keys, node, OTHER_OWNER, OWNER } from './fixtures.js';

const capture = captureClaim(node({ name: 'w1' }), OWNER);
const claimed = (over: Parameters<typeof node>[0]) =>
  node({ unschedulable: true, hasAnnotationsMap: true, annotations: { [keys.owner]: OWNER, [keys.phase]: 'claimed' }, ...over });
const report = (now: ReturnType<typeof node> | undefined, talosChanged = false) =>
  leftAsSetReport({ capture, now, keys, config: { kubeContext: 'prod' }, talosChanged, leaseKept: talosChanged });
const testsToken = (t: string) => `"op":"test","path":"/metadata/annotations/registry-auth-rollout~1owner","value":"${t}"`;

describe('leftAsSetReport: said from the node as read now', () => {
  it('another owner holds it: names them, says our cordon stands, prints no release command testing our token', () => {
    const text = report(claimed({ name: 'w1', annotations: { [keys.owner]: OTHER_OWNER, [keys.phase]: 'claimed' } }));
    expect(text).toContain(`now held by ${JSON.stringify(OTHER_OWNER)}`);
    expect(text).toContain("This run's cordon still stands");
    expect(text).toContain('Nothing on Talos was changed by this run.');
    expect(text).not.toContain(testsToken(OWNER));
    expect(text).toContain("give back this run's cordon if they did not: `kubectl --context='prod' uncordon w1`");
    expect(text).not.toMatch(/still carries this run's claim|Lease is kept/);
  });

  it('our token still on it: the release command tests our token', () => {
    const text = report(claimed({ name: 'w1' }), true);
    expect(text).toContain("still carries this run's claim");
    expect(text).toContain(testsToken(OWNER));
    expect(text).toContain('The credential patch was sent to Talos');
    expect(text).toContain('The run Lease is kept');
  });

  it('the owner removed, the node uncordoned, re-created, or unreadable: each said as it is', () => {
    expect(report(node({ name: 'w1', annotations: { [keys.phase]: 'claimed' } }))).toMatch(
      /annotation was removed: nobody holds it.*not cordoned any more/,
    );
    expect(report(claimed({ name: 'w1', uid: 'uid-new' }))).toMatch(
      /re-created \(uid uid-w1 → uid-new\): nothing of this run is on the new object/,
    );
    expect(report(undefined)).toMatch(/could not be read again/);
    for (const t of [report(undefined), report(claimed({ name: 'w1', uid: 'uid-new' }))]) expect(t).not.toContain(testsToken(OWNER));
  });
});
