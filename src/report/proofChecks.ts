// The nodes a run with nothing to roll tried to prove (src/pipeline/prove.ts) as the step shows them: one
// list in the job summary and one annotation per node (a notice when proven, a warning naming the node
// that keeps `old-credential-revocable` false, with why and what would prove it). Pure: checks in, text out.
import type { ProofCheck } from '../core/model/proofCheck.js';
import type { Redactor } from '../core/redact.js';
import type { Annotation } from './annotations.js';
import { escapeCell, oneLine, truncateText } from './escape.js';

const MAX_LISTED = 50;
const MAX_TEXT = 1000;
const MAX_MESSAGE = 4000;
/** annotations of one kind before the rest are counted in one (the roll's own annotations share GitHub's 10 per kind) */
const MAX_PER_KIND = 3;

const e = (s: string, max = MAX_TEXT): string => escapeCell(truncateText(s, max));

function hostsLine(c: ProofCheck): string {
  return c.hosts.map((h) => h.why).join('; ');
}

/** The summary's list: each node to prove, whether this run proved it and how, or why not and the next step. */
export function renderProofChecks(checks: readonly ProofCheck[]): string {
  const items = checks.slice(0, MAX_LISTED).map((c) => {
    const head = `<code>${e(c.node, 253)}</code> (${e(hostsLine(c))}): `;
    return c.proven
      ? `<li>${head}✅ ${e(c.detail)}; its marker now says how</li>`
      : `<li>${head}⚠️ not proven: ${e(c.detail)}${c.nextStep ? `. ${e(c.nextStep)}` : ''}</li>`;
  });
  const more = checks.length - items.length;
  if (more > 0) items.push(`<li>… ${more} more (the report file lists every one)</li>`);
  return `<p><b>Nodes to prove</b> (their verified marker carries this revision but not a proof of it; no claim, drain or reboot):</p>\n<ul>${items.join('')}</ul>`;
}

/** One annotation per node to prove: a notice when this run proved it, a warning when it could not. */
export function proofCheckAnnotations(checks: readonly ProofCheck[], options: { redactor?: Redactor } = {}): Annotation[] {
  const list = options.redactor ? options.redactor.redactData([...checks]) : checks;
  const each = list.map((c): Annotation => {
    const node = oneLine(c.node);
    return c.proven
      ? { kind: 'notice', title: `${node}: proven, nothing rolled`, message: truncateText(`${hostsLine(c)}; ${c.detail}`, MAX_MESSAGE) }
      : {
          kind: 'warning',
          title: `${node}: not proven, old-credential-revocable stays false`,
          message: truncateText(
            `${hostsLine(c)}. Could not prove: ${c.detail}${c.nextStep ? `\nNext step: ${c.nextStep}` : ''}`,
            MAX_MESSAGE,
          ),
        };
  });
  // GitHub drops annotations of a kind past its limit: a few per kind, then one that counts the rest
  const out: Annotation[] = [];
  for (const kind of ['notice', 'warning'] as const) {
    const of = each.filter((a) => a.kind === kind);
    out.push(...of.slice(0, MAX_PER_KIND));
    if (of.length > MAX_PER_KIND) {
      const rest = of.slice(MAX_PER_KIND).map((a) => a.title.split(':')[0]);
      out.push({
        kind,
        title: `${rest.length} more node(s) to prove ${kind === 'notice' ? 'proven' : 'not proven'}`,
        message: truncateText(rest.join(', '), MAX_MESSAGE),
      });
    }
  }
  return out;
}
