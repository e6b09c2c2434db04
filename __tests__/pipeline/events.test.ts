// The EventWriter, the one place an Event's text leaves the action: every message is masked before
// it is folded onto one line and cut to the note limit, so a secret straddling the cut leaves no
// prefix in a cluster Event (readable by anyone with `get events`).
import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../../src/adapters/types.js';
import type { RolloutEvent } from '../../src/core/events.js';
import { Redactor } from '../../src/core/redact.js';
import { EventWriter } from '../../src/pipeline/events.js';
import { EVENT_MESSAGE_MAX, runEvent } from '../../src/report/events.js';
import { record } from '../report/fixtures.js';

const SECRET = 'ghp_S3cr3tStraddlingTheCut0123456789abcdef';
/** long enough that nothing of the secret would survive a cut that falls inside it */
const PREFIX = SECRET.slice(0, 6);

function writer() {
  const written: RolloutEvent[] = [];
  const kube = { createEvents: (events: readonly RolloutEvent[]) => Promise.resolve(void written.push(...events)) };
  const redactor = new Redactor([SECRET]);
  return { written, events: new EventWriter(kube as unknown as KubeClient, (t) => redactor.redact(t), 'acme/infra/runs/1/attempts/1/n') };
}

/** A text whose secret starts a few characters before the note limit, so the cut falls inside it. */
const straddling = (lead: string) => `${'x'.repeat(EVENT_MESSAGE_MAX - 10 - lead.length)}${SECRET} and more after it`;

describe('EventWriter: masked before the cut', () => {
  it("a node's Event whose secret straddles char 1,024 carries no prefix of it", async () => {
    const w = writer();
    const r = record('worker-1', 'failed', { reason: straddling(''), nextStep: undefined });
    await w.events.node(r, () => {});
    const failed = w.written.find((e) => e.reason === 'RolloutFailed')!;
    expect(failed.message.length).toBeLessThanOrEqual(EVENT_MESSAGE_MAX);
    expect(failed.message).not.toContain(PREFIX);
    expect(failed.message.endsWith('…')).toBe(true);
  });

  it("the run's Event on its Lease is masked before the cut too", async () => {
    const w = writer();
    const lease = { namespace: 'kube-system', name: 'registry-auth-rollout' };
    await w.events.write(
      [
        runEvent(lease, {
          result: 'failed',
          records: [],
          notReached: 0,
          at: new Date(0).toISOString(),
          error: straddling('the run ended failed: '),
        }),
      ],
      () => {},
    );
    expect(w.written).toHaveLength(1);
    expect(w.written[0].message.length).toBeLessThanOrEqual(EVENT_MESSAGE_MAX);
    expect(w.written[0].message).not.toContain(PREFIX);
  });

  it('messages are one line within the note limit, whatever the record says', async () => {
    const w = writer();
    const r = record('worker-2', 'failed', { reason: `line one\nline two ${SECRET}\n${'y'.repeat(3000)}` });
    await w.events.node(r, () => {});
    for (const e of w.written) {
      expect(e.message).not.toMatch(/\n/);
      expect(e.message.length).toBeLessThanOrEqual(EVENT_MESSAGE_MAX);
      expect(e.message).not.toContain(PREFIX);
    }
    expect(w.written.find((e) => e.reason === 'RolloutFailed')!.message).toContain('line one line two ***');
  });
});
