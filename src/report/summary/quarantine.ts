// The quarantine section of a node's details: what blocked its drain and how to lift the quarantine.
import type { QuarantineNote } from '../../core/model/record.js';
import { e, MAX_NAME, MAX_TEXT } from './cells.js';
import { renderProse } from './prose.js';

// What blocked the drain of a quarantined node, one item per PDB, and how to lift it.
export function renderQuarantine(q: QuarantineNote): string {
  const items = q.blockers.map((b) => {
    const s = b.status;
    const what = b.pdb
      ? `PodDisruptionBudget <code>${e(b.pdb, MAX_NAME)}</code>${s ? ` (allows ${e(s.disruptionsAllowed)} disruptions, ${e(s.currentHealthy)}/${e(s.desiredHealthy)} healthy)` : ''}`
      : 'no PodDisruptionBudget (still terminating, or gone since)';
    return `<li>${what}: ${e(b.pods.join(', '), MAX_TEXT)}</li>`;
  });
  const list = items.length ? `<ul>${items.join('')}</ul>` : '<p>kubectl drain named no pod it was waiting for.</p>';
  const byHand = renderProse('Or by hand', `(the node keeps the old credential in containerd until it is rebooted): ${q.byHand}`, MAX_TEXT);
  return `<p><b>Drain blocked by:</b></p>\n${list}\n<p><b>Lift the quarantine:</b> ${e(q.lift, MAX_TEXT)}</p>\n${byHand}`;
}
