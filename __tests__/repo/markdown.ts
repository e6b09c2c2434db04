// How GitHub reads a Markdown file, as far as the repository tests need it: the anchors its headings
// get, and the relative links a reader can follow. Shared by references.test.ts and readme.test.ts.

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/\bid="([\w-]+)"/g)) anchors.add(m[1]);
  return anchors;
}

export interface Link {
  /** 1-based line of the link in its file. */
  line: number;
  /** The path part, relative to the file's folder; empty for a link to an anchor of the same file. */
  path: string;
  anchor: string | undefined;
}

/**
 * Every relative link `[text](target)` a reader can click: not in a code block or a code span (those are
 * shown, not followed), not to another site or a mail address.
 */
export function relativeLinks(markdown: string): Link[] {
  const links: Link[] = [];
  // Blank out code blocks line for line, so the line numbers stay right.
  const text = markdown.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ' '));
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/`[^`]*`/g, 'code');
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      links.push({
        line: i + 1,
        path: decodeURI(hash < 0 ? target : target.slice(0, hash)),
        anchor: hash < 0 ? undefined : target.slice(hash + 1),
      });
    }
  });
  return links;
}
