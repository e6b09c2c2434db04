// Look at a job summary as GitHub shows it, in a real browser (dev tooling, not run by CI):
//
//   npx tsx scripts/preview-summary.ts SUMMARY.html [OUT.html] [--screenshot OUT.png [--height PX]]
//
// wraps the summary (the HTML the action appends to GITHUB_STEP_SUMMARY; `npm run demo` prints its
// path) in a page styled like GitHub's rendered Markdown (the `markdown-body` look: system font,
// tables with borders, <pre> in a monospace font on a grey block), and with --screenshot has a
// headless Chromium (`chromium` on PATH, or CHROMIUM) take a picture of it, 1200 px wide and 900 px
// high (--height: a taller one reaches the timeline below a long table).
// GitHub sanitizes the summary; the tags the action writes (h2, h3, p, b, i, code, pre, table,
// details) all pass, so the page shows what a reader sees, up to GitHub's exact fonts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const STYLE = `
body { margin: 0; background: #f6f8fa; }
.box { max-width: 1012px; margin: 24px auto; background: #fff; border: 1px solid #d1d9e0; border-radius: 6px; padding: 32px; }
.markdown-body { font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
  font-size: 16px; line-height: 1.5; color: #1f2328; word-wrap: break-word; }
.markdown-body h2 { font-size: 1.5em; font-weight: 600; padding-bottom: .3em; border-bottom: 1px solid #d1d9e0; margin: 24px 0 16px; }
.markdown-body h3 { font-size: 1.25em; font-weight: 600; margin: 24px 0 16px; }
.markdown-body p, .markdown-body table, .markdown-body pre, .markdown-body details { margin: 0 0 16px; }
.markdown-body table { border-spacing: 0; border-collapse: collapse; display: block; width: max-content; max-width: 100%; overflow: auto; }
.markdown-body td, .markdown-body th { padding: 6px 13px; border: 1px solid #d1d9e0; }
.markdown-body tr:nth-child(2n) { background: #f6f8fa; }
.markdown-body code, .markdown-body pre { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace; font-size: 85%; }
.markdown-body code { padding: .2em .4em; background: rgba(129,139,152,.12); border-radius: 6px; }
.markdown-body pre { padding: 16px; overflow: auto; line-height: 1.45; background: #f6f8fa; border-radius: 6px; }
`;

export function wrapSummary(summary: string): string {
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>job summary</title><style>${STYLE}</style></head>\n<body><div class="box"><div class="markdown-body">\n${summary}\n</div></div></body></html>\n`;
}

function main(): number {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { screenshot: { type: 'string' }, height: { type: 'string', default: '900' } },
  });
  const [input, output] = positionals;
  if (!input) {
    console.error('usage: npx tsx scripts/preview-summary.ts SUMMARY.html [OUT.html] [--screenshot OUT.png [--height PX]]');
    return 2;
  }
  const page = resolve(output ?? `${input.replace(/\.[^./]*$/, '')}.preview.html`);
  writeFileSync(page, wrapSummary(readFileSync(input, 'utf8')));
  console.log(`page: ${page}`);
  if (!values.screenshot) return 0;
  const profile = mkdtempSync(join(tmpdir(), 'preview-chromium-'));
  try {
    const shot = spawnSync(
      process.env.CHROMIUM ?? 'chromium',
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        `--user-data-dir=${profile}`,
        `--screenshot=${resolve(values.screenshot)}`,
        `--window-size=1200,${Number(values.height) || 900}`,
        `file://${page}`,
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    if (shot.status !== 0) {
      console.error(
        `chromium failed (${shot.error?.message ?? `exit ${shot.status}`}): ${shot.stderr.trim().split('\n').slice(-3).join('\n')}`,
      );
      return 1;
    }
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
  console.log(`screenshot: ${resolve(values.screenshot)}`);
  return 0;
}

process.exitCode = main();
