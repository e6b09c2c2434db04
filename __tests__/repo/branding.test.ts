// The Marketplace badge: action.yml's branding must be one GitHub renders, or the action cannot be
// published with it. The supported icons and colors are kept in branding-icons.json, copied from GitHub's
// "Metadata syntax for GitHub Actions" page (branding section; its source file and commit are named in
// the JSON's `source`): the exhaustive list of supported icons, the omitted ones (`key` among them), the
// colors. The check reads action.yml as the runner does (YAML), so a typo or an omitted icon fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = join(import.meta.dirname, '..', '..');
const supported = JSON.parse(readFileSync(join(import.meta.dirname, 'branding-icons.json'), 'utf8')) as {
  source: { url: string; file: string };
  icons: string[];
  omitted: string[];
  colors: string[];
};
const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as { branding?: { icon?: unknown; color?: unknown } };

describe("action.yml's branding is one GitHub supports", () => {
  it('the icon is in GitHub’s exhaustive list of supported icons, and not an omitted one', () => {
    const icon = action.branding?.icon;
    expect(typeof icon, 'action.yml has a branding.icon').toBe('string');
    expect(supported.omitted, `branding.icon "${String(icon)}" is one GitHub omits (${supported.source.url})`).not.toContain(icon);
    expect(supported.icons, `branding.icon "${String(icon)}" is not a supported icon (${supported.source.url})`).toContain(icon);
  });

  it('the color is one of GitHub’s badge colors', () => {
    expect(supported.colors, `branding.color (${supported.source.url})`).toContain(action.branding?.color);
  });

  it('the kept lists are as the page gives them: each name once, no omitted icon among the supported ones', () => {
    expect(supported.source.file).toMatch(/^github\/docs \S+metadata-syntax\.md at commit [0-9a-f]{40}$/);
    expect(new Set(supported.icons).size).toBe(supported.icons.length);
    expect(supported.icons.length).toBe(257);
    expect(supported.omitted.filter((i) => supported.icons.includes(i))).toEqual([]);
    expect(supported.omitted).toContain('key');
    expect(supported.colors).toEqual(['white', 'black', 'yellow', 'blue', 'green', 'orange', 'red', 'purple', 'gray-dark']);
  });
});
