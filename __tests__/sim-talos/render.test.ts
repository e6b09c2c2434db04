// The pieces the executable and the sim share, checked against Go's behaviour directly.
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { agoText, goDurationSeconds, lsTimeText, tabwrite } from '../../sim/talos/format.js';
import { renderCriFiles, renderRegistriesPart } from '../../sim/talos/render.js';

describe('text/tabwriter (minwidth 0, tabwidth 0, padding 3)', () => {
  it('pads tab-terminated cells to the widest cell of their column block plus 3', () => {
    expect(tabwrite('NODE\t10.0.0.11\nEVENTS\t[Running]: x\n\t[Running]: y\n')).toBe(
      'NODE     10.0.0.11\nEVENTS   [Running]: x\n         [Running]: y\n',
    );
  });

  it('pads an empty last tab-terminated cell (trailing spaces after STORAGE)', () => {
    expect(tabwrite('A\tSTORAGE\tERRORS\nx\t3.6.0\t\n')).toBe('A   STORAGE   ERRORS\nx   3.6.0     \n');
  });

  it('restarts column blocks after a line without tabs, as Go flushes there', () => {
    expect(tabwrite('a\tb\nsingle\nlonger\tc\n')).toBe('a   b\nsingle\nlonger   c\n');
  });

  it('starts a new column block where lines stop having a cell in that column', () => {
    expect(tabwrite('a\tb\tc\nxx\tyyyy\nz\tw\tv\n')).toBe('a    b   c\nxx   yyyy\nz    w   v\n');
  });
});

describe('Go durations and ls time layouts', () => {
  it('formats like Duration.Round(time.Second).String()', () => {
    expect([0, 499, 500, 59_499, 59_500, 3_600_000, 929_551_000, -4_000, -4_500].map((ms) => agoText(0, ms))).toEqual([
      '0s',
      '0s',
      '1s',
      '59s',
      '1m0s',
      '1h0m0s',
      '258h12m31s',
      '-4s',
      '-5s',
    ]);
    expect(goDurationSeconds(205)).toBe('3m25s');
  });

  it('switches to the year layout at 180 days, including for instants in the future', () => {
    const now = Date.UTC(2026, 7, 20, 12);
    expect(lsTimeText(Date.UTC(2026, 7, 4, 9, 3, 27) / 1000, now, 'UTC')).toBe('Aug  4 09:03:27');
    expect(lsTimeText(Date.UTC(2026, 8, 4, 9, 3, 27) / 1000, now, 'UTC')).toBe('Sep  4 09:03:27');
    expect(lsTimeText(0, now, 'UTC')).toBe('Jan  1 1970 00:00');
    expect(lsTimeText((now - 180 * 86_400_000) / 1000, now, 'UTC')).toBe('Feb 21 2026 12:00');
  });
});

describe('CRI files', () => {
  const auth = { 'ghcr.io': { username: 'ci-bot', password: 'example-token' }, 'docker.io': { auth: 'dXNlcjpwYXNz' } };

  it('renders 01-registries.part exactly as GenerateCRIConfig does', () => {
    expect(renderRegistriesPart({ 'ghcr.io': auth['ghcr.io'] })).toBe(
      "[plugins]\n  [plugins.'io.containerd.cri.v1.images']\n    [plugins.'io.containerd.cri.v1.images'.registry]\n" +
        "      config_path = '/etc/cri/conf.d/hosts'\n\n" +
        "      [plugins.'io.containerd.cri.v1.images'.registry.configs]\n" +
        "        [plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io']\n" +
        "          [plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io'.auth]\n" +
        "            username = 'ci-bot'\n            password = 'example-token'\n            auth = ''\n            identitytoken = ''\n",
    );
  });

  it('renders TOML that parses to the auth where containerd looks (docker.io → registry-1.docker.io)', () => {
    for (const version of ['1.13', '1.14'] as const) {
      const files = renderCriFiles(version, auth);
      expect([...files.keys()]).toEqual(
        version === '1.13' ? ['/etc/cri/conf.d/01-registries.part', '/etc/cri/conf.d/cri.toml'] : ['/etc/cri/conf.d/cri.toml'],
      );
      const toml = parse(files.get('/etc/cri/conf.d/cri.toml') ?? '') as any;
      const configs = toml.plugins['io.containerd.cri.v1.images'].registry.configs;
      expect(Object.keys(configs)).toEqual(['ghcr.io', 'registry-1.docker.io']);
      expect(configs['registry-1.docker.io'].auth).toEqual({ auth: 'dXNlcjpwYXNz', identitytoken: '', password: '', username: '' });
      expect(toml.version).toBe(3);
    }
  });
});
