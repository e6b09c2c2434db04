// The evidence section of a node's details: the verdicts before the patch and after it, their values
// side by side, and the CRI config files each reading saw.
import { formatMagnitude } from '../../core/format.js';
import type { EvidenceValues, EvidenceVerdict } from '../../core/model/verdict.js';
import { e, gapCell, instantCell, MAX_TEXT } from './cells.js';

const MAX_FILES = 20;

function verdictLine(title: string, verdict: string, v: EvidenceVerdict): string {
  return `<p><b>${title}:</b> ${e(verdict)} — ${e(v.reason, MAX_TEXT)}</p>`;
}

const EVIDENCE_TITLE = 'Evidence before the credential patch';
const PROOF_TITLE = { reboot: 'Proof after the reboot', patch: 'Proof after the patch (Talos restarted cri)' } as const;

/**
 * The proof's verdict in its own words: the evidence rule's `skip` read after a reboot means the new
 * containerd is proven to run the new credential, not that a reboot would be skipped.
 */
function proofWord(v: EvidenceVerdict): string {
  if (v.verdict === 'skip') return 'proven: the running containerd started after the config with the new credential was written';
  return v.contradicts ? 'contradicted: the readings show containerd without the new credential' : 'not proven';
}

// Evidence and proof share one table, side by side, so a reader compares before and after at a
// glance and the block stays small enough for many nodes to keep their details.
export function renderEvidence(
  evidence: EvidenceVerdict | undefined,
  proof: EvidenceVerdict | undefined,
  refMs?: number,
  /** what the proof was read after: the node's reboot, or the patch (Talos >= 1.14 restarts cri itself) */
  proofAfter: keyof typeof PROOF_TITLE = 'reboot',
): string {
  const columns = [
    evidence && { head: 'before the patch', values: evidence.values },
    proof && { head: 'proof', values: proof.values },
  ].filter((c): c is { head: string; values: EvidenceValues } => Boolean(c));
  const cells = columns.map((c) => valueCells(c.values, refMs));
  const rows = VALUE_LABELS.map((label, i) => `<tr><td>${label}</td>${cells.map((c) => `<td>${c[i]}</td>`).join('')}</tr>`);
  const out: string[] = [];
  if (evidence) out.push(verdictLine(EVIDENCE_TITLE, evidence.verdict === 'skip' ? 'skip the reboot' : 'reboot', evidence));
  if (proof) out.push(verdictLine(PROOF_TITLE[proofAfter], proofWord(proof), proof));
  out.push(`<table>\n<tr><th>value</th>${columns.map((c) => `<th>${c.head}</th>`).join('')}</tr>\n${rows.join('\n')}\n</table>`);
  for (const c of columns) {
    const files = renderFiles(c.head, c.values);
    if (files) out.push(files);
  }
  return out.join('\n');
}

function withNote(value: string | number | undefined, note: string | undefined): string {
  if (value === undefined || value === '') return '—';
  return note ? `${e(value)} (${e(note)})` : e(value);
}

const VALUE_LABELS = [
  'Talos version',
  'cri service',
  'cri PID',
  'containerd started',
  'config last written',
  'start − write (read via)',
  'margin',
  'node clock',
];

function valueCells(v: EvidenceValues, refMs?: number): string[] {
  const cri = [v.criState, v.criHealth].filter((x) => x !== undefined && x !== '').join(', ');
  const clock =
    v.timeSynced === undefined && v.timeEpoch === undefined
      ? undefined
      : `${v.timeSynced === undefined ? 'sync unknown' : v.timeSynced ? 'synced' : 'not synced'}${v.timeEpoch === undefined ? '' : `, epoch ${v.timeEpoch}`}`;
  return [
    e(v.talosVersion),
    e(cri),
    e(v.criPid),
    withNote(instantCell(v.criStart, v.criStartEarliest, refMs), v.criStartSource),
    withNote(instantCell(v.configWrite, v.configWrittenLatest, refMs), v.configWrittenPath),
    e(gapCell(v)),
    e(formatMagnitude(v.marginMs)),
    e(clock),
  ];
}

function renderFiles(head: string, v: EvidenceValues): string {
  if (!v.files.length) return '';
  const yesNo = (b: boolean | undefined): string => (b === undefined ? '—' : b ? 'yes' : 'no');
  const rows = v.files
    .slice(0, MAX_FILES)
    .map(
      (f) =>
        `<tr><td><code>${e(f.path)}</code></td><td>${yesNo(f.exists)}</td><td>${e(f.lastMod)}</td><td>${e(f.updated)}</td><td>${e(credentialCell(f))}</td></tr>`,
    );
  if (v.files.length > MAX_FILES) rows.push(`<tr><td colspan="5">… ${v.files.length - MAX_FILES} more files</td></tr>`);
  return `<table>\n<tr><th>config file (${head})</th><th>exists</th><th>last modified (ls -l)</th><th>updated (etcfilestatus)</th><th>credential</th></tr>\n${rows.join('\n')}\n</table>`;
}

/** A file's credential: its state, or each host's when the roll was for several (`ghcr.io: desired, mirror.local:5000: old`). */
function credentialCell(f: EvidenceValues['files'][number]): string | undefined {
  if (!f.byHost) return f.credential;
  return Object.entries(f.byHost)
    .map(([host, state]) => `${host}: ${state}`)
    .join(', ');
}
