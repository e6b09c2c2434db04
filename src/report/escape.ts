// core.summary.addRaw writes its argument verbatim, and node names, reasons and step details come
// from kubectl/talosctl output or from whoever named the nodes. Every such string reaches the
// summary through one of these functions, so a `<script>` in a reason stays text.

const HTML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes the five characters that can open markup or leave an attribute value. */
export function escapeHtml(s: string): string {
  return String(s).replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]);
}

// C0 controls other than tab/newline would be invisible in the summary yet can confuse a reader
// (a carriage return can make a line look like something else), so they are dropped.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/**
 * Escapes text for a table cell or any other place inside an HTML block of the summary.
 * `|` would split a Markdown table cell, and a blank line ends a GFM HTML block (the rest would
 * be parsed as Markdown), so pipes become an entity and line breaks become `<br>`.
 */
export function escapeCell(s: string): string {
  return escapeHtml(String(s).replace(/\r\n?/g, '\n').replace(CONTROL, '')).replace(/\|/g, '&#124;').replace(/\n/g, '<br>');
}

/** Cuts text longer than `max` characters, without splitting a surrogate pair, and says so. */
export function truncateText(s: string, max: number): string {
  const text = String(s);
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** Folds any line break into a single space, for places that must stay on one line (titles). */
export function oneLine(s: string): string {
  return String(s)
    .replace(/\r\n?|\n/g, ' ')
    .replace(CONTROL, '')
    .replace(/ {2,}/g, ' ')
    .trim();
}
