// A next step as the summary shows it: the prose escaped, a short `command` inline, and a long one (the
// CAS-guarded release patch is about 600 characters) in a code block of its own, which GitHub gives a
// copy button. Commands are the backtick-quoted parts of the text (src/rules/commands.ts writes every
// command a person runs that way), so the text itself is not rewritten.
import { escapeCell, truncateText } from '../escape.js';

/** A command longer than this leaves the sentence for a code block. */
const INLINE_COMMAND_MAX = 80;

/**
 * `text` as HTML: one `<p>` headed by `title`, broken by a `<pre><code>` block per long command. The
 * text is cut to `max` characters first (masking already happened on the whole input: renderSummary).
 */
export function renderProse(title: string, text: string, max: number): string {
  const parts = truncateText(text, max).split('`');
  const out: string[] = [];
  let para = `<p><b>${title}:</b> `;
  parts.forEach((part, i) => {
    const isCode = i % 2 === 1 && i < parts.length - 1; // an unmatched last backtick is prose
    if (!isCode) {
      para += escapeCell(i % 2 === 1 ? `\`${part}` : part);
      return;
    }
    if (part.length <= INLINE_COMMAND_MAX) {
      para += `<code>${escapeCell(part)}</code>`;
      return;
    }
    out.push(`${para}</p>`);
    // escapeCell here too: a blank line inside <pre> would still end GitHub's HTML block
    out.push(`<pre><code>${escapeCell(part)}</code></pre>`);
    para = '<p>';
  });
  if (para !== '<p>') out.push(`${para}</p>`);
  return out.join('\n');
}
