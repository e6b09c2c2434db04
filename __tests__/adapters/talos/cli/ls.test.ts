import { describe, expect, it } from 'vitest';
import { interpretLastMod, parseLsLong } from '../../../../src/adapters/talos/cli/parse/ls.js';
import { ParseError } from '../../../../src/adapters/parseError.js';
import { lsOutput, renderLastMod } from './talosOutput.js';

// docs/talos-facts.md#t6-ls-output, byte for byte: a public user log of a v1.1x client
const SAMPLE =
  'NODE            MODE         UID   GID   SIZE(B)   LASTMOD           LABEL                              NAME\n' +
  '192.168.77.73   -rw-r--r--   0     0     341930    Jun 14 04:54:05   system_u:object_r:unlabeled_t:s0   hailo_pci.ko\n';
// docs/talos-facts.md#t6-ls-output: what a ≤1.13 client prints on stdout when the path is missing
const HEADER_ONLY = 'NODE   MODE   UID   GID   SIZE(B)   LASTMOD   LABEL   NAME\n';

const DAY = 86_400_000;
const at = (iso: string): number => Date.parse(iso);

describe('parseLsLong', () => {
  it('parses the reference row', () => {
    expect(parseLsLong(SAMPLE)).toEqual([
      {
        node: '192.168.77.73',
        mode: '-rw-r--r--',
        uid: 0,
        gid: 0,
        size: 341930,
        lastMod: 'Jun 14 04:54:05',
        label: 'system_u:object_r:unlabeled_t:s0',
        name: 'hailo_pci.ko',
        linkTarget: undefined,
      },
    ]);
  });

  it('the builder reproduces the reference row', () => {
    expect(
      lsOutput([
        {
          node: '192.168.77.73',
          mode: '-rw-r--r--',
          size: 341930,
          lastMod: 'Jun 14 04:54:05',
          label: 'system_u:object_r:unlabeled_t:s0',
          name: 'hailo_pci.ko',
        },
      ]),
    ).toBe(SAMPLE);
  });

  it('a failed listing prints the header only: no rows', () => {
    expect(lsOutput([])).toBe(HEADER_ONLY);
    expect(parseLsLong(HEADER_ONLY)).toEqual([]);
    // a 1.14 client prints nothing at all
    expect(parseLsLong('')).toEqual([]);
  });

  it('cuts cells at the header offsets: a LASTMOD with two spaces, an empty LABEL, a symlink, a name with spaces', () => {
    const text = lsOutput([
      { node: '10.0.0.11', mode: 'drwxr-xr-x', size: 160, lastMod: 'Aug  4 09:03:27', label: 'system_u:object_r:etc_t:s0', name: '.' },
      {
        node: '10.0.0.11',
        mode: '-rw-------',
        size: 2514,
        lastMod: 'Aug  4 09:03:27',
        label: 'system_u:object_r:etc_t:s0',
        name: 'cri.toml',
      },
      { node: '10.0.0.11', mode: '-rw-------', size: 0, lastMod: 'Jan  1 1970 00:00', name: '20-customization.part' },
      { node: '10.0.0.11', mode: 'Lrwxrwxrwx', size: 12, lastMod: 'Aug 14 10:00:00', name: 'link -> /etc/cri/x y' },
      { node: '10.0.0.11', mode: '-rw-r--r--', size: 7, lastMod: 'Aug 14 10:00:00', name: 'a  file' },
    ]);
    // the empty LABEL cell is padded like any other
    expect(text.split('\n')[3]).toBe(
      '10.0.0.11   -rw-------   0     0     0         Jan  1 1970 00:00                                20-customization.part',
    );
    const rows = parseLsLong(text);
    expect(rows.map((r) => [r.name, r.lastMod, r.label, r.size])).toEqual([
      ['.', 'Aug  4 09:03:27', 'system_u:object_r:etc_t:s0', 160],
      ['cri.toml', 'Aug  4 09:03:27', 'system_u:object_r:etc_t:s0', 2514],
      ['20-customization.part', 'Jan  1 1970 00:00', '', 0],
      ['link', 'Aug 14 10:00:00', '', 12],
      ['a  file', 'Aug 14 10:00:00', '', 7],
    ]);
    expect(rows[3].linkTarget).toBe('/etc/cri/x y');
  });

  it('attributes rows of several nodes by the NODE column', () => {
    const text = lsOutput([
      { node: '10.0.0.11', mode: '-rw-------', size: 2514, lastMod: 'Aug  4 09:03:27', name: 'cri.toml' },
      { node: 'worker-long-hostname-1', mode: '-rw-------', size: 2514, lastMod: 'Aug 20 10:11:12', name: 'cri.toml' },
    ]);
    expect(parseLsLong(text).map((r) => [r.node, r.lastMod])).toEqual([
      ['10.0.0.11', 'Aug  4 09:03:27'],
      ['worker-long-hostname-1', 'Aug 20 10:11:12'],
    ]);
  });

  it.each([
    ['a different header', 'NODE   NAME\n10.0.0.11   cri.toml\n'],
    ['a header split on single spaces', 'NODE MODE UID GID SIZE(B) LASTMOD LABEL NAME\n'],
    ['a row not aligned with the header', HEADER_ONLY + '10.0.0.11 -rw------- 0 0 1 Aug  4 09:03:27  x\n'],
    [
      'a humanized size',
      lsOutput([{ node: 'n', mode: '-rw-------', size: 1, lastMod: 'Aug  4 09:03:27', name: 'x' }]).replace('   1   ', '   1k  '),
    ],
    ['a humanized time', lsOutput([{ node: 'n', mode: '-rw-------', size: 1, lastMod: '3 days ago', name: 'x' }])],
    ['a GNU-style mode', lsOutput([{ node: 'n', mode: 'lrwxrwxrwx.', size: 1, lastMod: 'Aug  4 09:03:27', name: 'x' }])],
    ['a short row', HEADER_ONLY + '10.0.0.11\n'],
  ])('rejects %s', (_what, text) => {
    expect(() => parseLsLong(text)).toThrow(ParseError);
  });
});

describe('interpretLastMod (TZ=UTC)', () => {
  it('a file younger than 180 days: this year, second precision', () => {
    const now = at('2026-08-21T12:00:00Z');
    const mtime = at('2026-08-04T09:03:27Z');
    expect(renderLastMod(mtime, now)).toBe('Aug  4 09:03:27');
    expect(interpretLastMod('Aug  4 09:03:27', now)).toEqual({ mtimeMs: mtime, precisionMs: 1000 });
  });

  it('a file older than 180 days: the long form, minute precision', () => {
    const now = at('2026-08-21T12:00:00Z');
    const mtime = at('2025-12-01T08:30:59Z');
    expect(renderLastMod(mtime, now)).toBe('Dec  1 2025 08:30');
    expect(interpretLastMod('Dec  1 2025 08:30', now)).toEqual({ mtimeMs: at('2025-12-01T08:30:00Z'), precisionMs: 60_000 });
    expect(interpretLastMod('Jan  1 1970 00:00', now)).toEqual({ mtimeMs: 0, precisionMs: 60_000 });
  });

  it('across New Year: a December date seen in January is last year', () => {
    const now = at('2027-01-02T00:00:10Z');
    const mtime = at('2026-12-31T23:59:59Z');
    expect(renderLastMod(mtime, now)).toBe('Dec 31 23:59:59');
    expect(interpretLastMod('Dec 31 23:59:59', now).mtimeMs).toBe(mtime);
  });

  it('a node clock ahead: a January date seen in late December is next year', () => {
    const now = at('2026-12-30T10:00:00Z');
    expect(interpretLastMod('Jan  3 00:00:00', now).mtimeMs).toBe(at('2027-01-03T00:00:00Z'));
    // and a few seconds in the future stays this year
    expect(interpretLastMod('Dec 30 10:00:04', now).mtimeMs).toBe(at('2026-12-30T10:00:04Z'));
  });

  it('just inside and outside the 180-day window', () => {
    const now = at('2026-08-21T12:00:00Z');
    const inside = now - 180 * DAY + 1000;
    expect(interpretLastMod(renderLastMod(inside, now), now).mtimeMs).toBe(inside);
    // 185 days ahead is the furthest future a year-less date is placed in
    expect(interpretLastMod('Feb 22 12:00:00', now).mtimeMs).toBe(at('2027-02-22T12:00:00Z'));
    expect(interpretLastMod('Feb 23 12:00:00', now).mtimeMs).toBe(at('2026-02-23T12:00:00Z'));
  });

  it('Feb 29 resolves to the leap year in the window, and is refused when there is none', () => {
    expect(interpretLastMod('Feb 29 12:00:00', at('2028-03-10T00:00:00Z')).mtimeMs).toBe(at('2028-02-29T12:00:00Z'));
    expect(interpretLastMod('Feb 29 12:00:00', at('2027-12-01T00:00:00Z')).mtimeMs).toBe(at('2028-02-29T12:00:00Z'));
    expect(() => interpretLastMod('Feb 29 12:00:00', at('2027-03-10T00:00:00Z'))).toThrow(ParseError);
    expect(interpretLastMod('Feb 29 2024 23:59', at('2026-08-21T00:00:00Z')).mtimeMs).toBe(at('2024-02-29T23:59:00Z'));
    expect(() => interpretLastMod('Feb 29 2025 23:59', at('2026-08-21T00:00:00Z'))).toThrow(ParseError);
  });

  it.each([
    'Aug 4 09:03:27',
    'Aug  4 9:03:27',
    'Aug 04 09:03:27',
    'Sept  4 09:03:27',
    'Aug  4 24:00:00',
    'Apr 31 10:00:00',
    'Aug  4 2026 09:03:27',
    '',
    '2026-08-04T09:03:27Z',
  ])('rejects %j', (text) => {
    expect(() => interpretLastMod(text, at('2026-08-21T12:00:00Z'))).toThrow(ParseError);
  });
});
