// The job summary's timeline and plan mode's machine config changes as the text a reader sees: the
// <pre> block after its heading, with the HTML entities the summary escaped turned back into
// characters (the demo prints them, the e2e tests read them). Dev tooling: the summary itself is built
// by src/report/timeline.ts and src/report/summary.ts (its config preview src/report/summary/configPreview.ts).
import { CONFIG_CHANGE_TITLE } from '../src/report/summary/configPreview.js';
import { TIMELINE_HEADING } from '../src/report/timeline.js';

const NAMED: Record<string, string> = { lt: '<', gt: '>', quot: '"', amp: '&' };

/** The timeline's lines, or undefined when the summary has none (plan mode, nothing started). */
export function timelineOf(summaryHtml: string): string | undefined {
  const at = summaryHtml.indexOf(TIMELINE_HEADING);
  if (at < 0) return undefined;
  const open = summaryHtml.indexOf('<pre>', at);
  const close = summaryHtml.indexOf('</pre>', open);
  if (open < 0 || close < 0) return undefined;
  return unescape(summaryHtml.slice(open + '<pre>'.length, close));
}

function unescape(html: string): string {
  return html.replace(/&(?:(lt|gt|quot|amp)|#(\d+));/g, (_, name: string | undefined, code: string | undefined) =>
    name ? NAMED[name] : String.fromCharCode(Number(code)),
  );
}

/**
 * Plan mode: each node's machine config change as its details show it, the change list's lines (or
 * the one line saying there is none, or why none is shown), in the summary's order.
 */
export function configChangesOf(summaryHtml: string): Array<{ node: string; lines: string[] }> {
  const out: Array<{ node: string; lines: string[] }> = [];
  const title = `<b>${CONFIG_CHANGE_TITLE}</b>`;
  for (const m of summaryHtml.matchAll(/<details><summary>(.*?) — [^<]*<\/summary>([^]*?)<\/details>/g)) {
    const body = m[2];
    const at = body.indexOf(title);
    if (at < 0) continue;
    const after = body.slice(at + title.length);
    const pre = /^<\/p>\n<pre>([^]*?)<\/pre>/.exec(after);
    const lines = pre ? pre[1].replace(/\n$/, '').split('\n') : [after.slice(0, after.indexOf('</p>')).trim()];
    out.push({ node: unescape(m[1]), lines: lines.map(unescape) });
  }
  return out;
}
