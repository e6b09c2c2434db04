import { describe, expect, it } from 'vitest';
import { DEFAULT_CRI_CONFIG_PATHS, parseDuration, parseMaxUnavailable, readConfig, resolveMaxUnavailable } from '../../src/core/config.js';
import { InputError } from '../../src/core/errors.js';

const base: Record<string, string> = { 'auth-patch': '/tmp/p.yaml', revision: 'r1' };
const reader =
  (extra: Record<string, string> = {}) =>
  (name: string) =>
    ({ ...base, ...extra })[name] ?? '';

describe('readConfig', () => {
  it('applies the documented defaults', () => {
    const c = readConfig(reader());
    expect(c).toMatchObject({
      mode: 'apply',
      reboot: 'evidence',
      evidenceMarginMs: 0,
      claimAttempts: 5,
      drainTimeoutMs: 45 * 60_000,
      undrainable: 'stop',
      readyTimeoutMs: 10 * 60_000,
      criRestartWaitMs: 60_000,
      verifyNamespace: 'kube-system',
      annotationPrefix: 'registry-auth-rollout',
      nodes: [],
    });
    expect(c.criConfigPaths).toEqual(DEFAULT_CRI_CONFIG_PATHS);
    expect(c.verifyImage).toBeUndefined();
  });

  it('talos-server-name: a host name or an IP address; unset, the endpoint host is checked', () => {
    expect(readConfig(reader()).talosServerName).toBeUndefined();
    expect(readConfig(reader({ 'talos-server-name': ' apid.example.com ' })).talosServerName).toBe('apid.example.com');
    expect(readConfig(reader({ 'talos-server-name': 'fd00::1' })).talosServerName).toBe('fd00::1');
  });

  it('undrainable: stop by default, or quarantine', () => {
    expect(readConfig(reader({ undrainable: ' quarantine ' })).undrainable).toBe('quarantine');
    expect(readConfig(reader({ undrainable: 'stop' })).undrainable).toBe('stop');
  });

  it('registry: a list of hosts on commas and newlines, each once; empty means every host of the patch', () => {
    expect(readConfig(reader()).registry).toEqual([]);
    expect(readConfig(reader({ registry: 'ghcr.io, mirror.local:5000\nghcr.io\n' })).registry).toEqual(['ghcr.io', 'mirror.local:5000']);
  });

  it('splits nodes on commas and newlines', () => {
    expect(readConfig(reader({ nodes: 'a, b\nc\n\n' })).nodes).toEqual(['a', 'b', 'c']);
  });

  it.each([
    ['mode', { mode: 'yolo' }, /input "mode": "yolo" is not one of apply, plan, fences, recover-fences/],
    ['reboot', { reboot: 'never' }, /input "reboot"/],
    ['undrainable', { undrainable: 'skip' }, /input "undrainable": "skip" is not one of stop, quarantine/],
    ['undrainable', { undrainable: 'Quarantine' }, /input "undrainable": "Quarantine" is not one of stop, quarantine/],
    ['auth-patch', { 'auth-patch': ' ' }, /input "auth-patch": is required/],
    ['revision', { revision: '' }, /input "revision": is required/],
    ['drain-timeout', { 'drain-timeout': '45 minutes' }, /input "drain-timeout": "45 minutes" is not a duration/],
    ['ready-timeout', { 'ready-timeout': '10' }, /input "ready-timeout"/],
    ['claim-attempts', { 'claim-attempts': '0' }, /input "claim-attempts"/],
    ['annotation-prefix', { 'annotation-prefix': 'Bad_Prefix' }, /input "annotation-prefix"/],
    ['cri-config-paths', { 'cri-config-paths': 'etc/cri.toml' }, /input "cri-config-paths"/],
    ['talos-server-name', { 'talos-server-name': 'https://apid.example.com' }, /input "talos-server-name": .* no scheme, no port/],
    ['talos-server-name', { 'talos-server-name': 'apid.example.com:50000' }, /input "talos-server-name"/],
    [
      'node-selector',
      { 'node-selector': 'pool in blue' },
      /input "node-selector": "pool in blue" is not a label selector: .*expected: '\('/,
    ],
    ['node-selector', { 'node-selector': 'pool=blue green' }, /input "node-selector": .*found 'green', expected: ',' or 'end of string'/],
  ])('rejects a bad %s with an error naming it', (input, extra, message) => {
    let err: unknown;
    try {
      readConfig(reader(extra));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).input).toBe(input);
    expect((err as Error).message).toMatch(message);
  });
});

describe('readConfig: durations where zero means "forever" or nothing', () => {
  // kubectl drain reads --timeout=0 as "wait forever"; a zero ready-timeout or cri-restart-wait would
  // give up before the node or cri could possibly answer. Each is refused before anything runs.
  it.each([
    ['drain-timeout', '0m'],
    ['drain-timeout', '0s'],
    ['drain-timeout', '0ms'],
    ['drain-timeout', '0h0m'],
    ['ready-timeout', '0s'],
    ['ready-timeout', '0.0m'],
    ['cri-restart-wait', '0s'],
    ['drain-timeout', '-5m'],
    ['ready-timeout', '-1s'],
    ['cri-restart-wait', '-30s'],
  ])('rejects %s: %s with an InputError naming it', (input, value) => {
    let err: unknown;
    try {
      readConfig(reader({ [input]: value }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).input).toBe(input);
    expect((err as Error).message).toContain(`input "${input}"`);
  });

  it('settle-timeout: 10m by default, a duration, 0 (or any zero duration) turns the gate off', () => {
    expect(readConfig(reader()).settleTimeoutMs).toBe(10 * 60_000);
    expect(readConfig(reader({ 'settle-timeout': '90s' })).settleTimeoutMs).toBe(90_000);
    expect(readConfig(reader({ 'settle-timeout': '0' })).settleTimeoutMs).toBe(0);
    expect(readConfig(reader({ 'settle-timeout': '0s' })).settleTimeoutMs).toBe(0);
  });

  it.each(['-5m', '-1', '10', 'ten minutes', '5d'])('rejects settle-timeout %j with an InputError naming it', (value) => {
    let err: unknown;
    try {
      readConfig(reader({ 'settle-timeout': value }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).input).toBe('settle-timeout');
    expect((err as Error).message).toContain(`"${value}" is not a duration`);
  });

  it('names why zero is refused', () => {
    expect(() => readConfig(reader({ 'drain-timeout': '0m' }))).toThrow(/input "drain-timeout": "0m" must be longer than zero/);
  });

  it('accepts the smallest positive values', () => {
    const c = readConfig(reader({ 'drain-timeout': '1s', 'ready-timeout': '500ms', 'cri-restart-wait': '1s' }));
    expect(c).toMatchObject({ drainTimeoutMs: 1000, readyTimeoutMs: 500, criRestartWaitMs: 1000 });
  });

  it('keeps evidence-margin 0 (the comparison is strict, so zero margin is meaningful)', () => {
    expect(readConfig(reader({ 'evidence-margin': '0s' })).evidenceMarginMs).toBe(0);
  });
});

describe('parseDuration', () => {
  it.each([
    ['90s', 90_000],
    ['45m', 2_700_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1.5s', 1500],
  ])('%s → %d ms', (text, ms) => expect(parseDuration('x', text)).toBe(ms));

  it.each(['', 's', '10', '-5s', '5 s', '5d'])('rejects %j', (text) => {
    expect(() => parseDuration('drain-timeout', text)).toThrow(/input "drain-timeout"/);
  });
});

describe('parallel inputs: max-unavailable, topology-key, time-budget, fail-on-partial', () => {
  const inputError = (extra: Record<string, string>): InputError => {
    try {
      readConfig(reader(extra));
    } catch (e) {
      if (e instanceof InputError) return e;
      throw e;
    }
    throw new Error(`no error for ${JSON.stringify(extra)}`);
  };

  it('defaults: one worker at a time, no topology key, no budget, a partial run succeeds', () => {
    const c = readConfig(reader());
    expect(c.maxUnavailable).toEqual({ count: 1 });
    expect(c.topologyKey).toBeUndefined();
    expect(c.timeBudgetMs).toBeUndefined();
    expect(c.failOnPartial).toBe(false);
  });

  it('reads each input', () => {
    const c = readConfig(
      reader({
        'max-unavailable': '25%',
        'topology-key': 'topology.kubernetes.io/zone',
        'time-budget': '5h30m',
        'fail-on-partial': 'true',
      }),
    );
    expect(c).toMatchObject({
      maxUnavailable: { percent: 25 },
      topologyKey: 'topology.kubernetes.io/zone',
      timeBudgetMs: 19_800_000,
      failOnPartial: true,
    });
    expect(readConfig(reader({ 'max-unavailable': ' 3 ', 'topology-key': 'rack', 'fail-on-partial': 'False' }))).toMatchObject({
      maxUnavailable: { count: 3 },
      topologyKey: 'rack',
      failOnPartial: false,
    });
  });

  it.each([
    ['max-unavailable', '0'],
    ['max-unavailable', '-1'],
    ['max-unavailable', '0%'],
    ['max-unavailable', '101%'],
    ['max-unavailable', '12.5%'],
    ['max-unavailable', '1.5'],
    ['max-unavailable', 'abc'],
    ['max-unavailable', '%'],
    ['max-unavailable', '5 %'],
    ['topology-key', 'zone name'],
    ['topology-key', 'Bad_Prefix/zone'],
    ['topology-key', 'example.com/'],
    ['topology-key', `${'a'.repeat(64)}`],
    ['time-budget', '0s'],
    ['time-budget', '0h0m'],
    ['time-budget', '-1h'],
    ['time-budget', '5 hours'],
    ['fail-on-partial', 'yes'],
    ['fail-on-partial', '1'],
    ['fail-on-partial', 'constructor'],
  ])('rejects %s %j with an error naming it', (input, value) => {
    const e = inputError({ [input]: value });
    expect(e.input).toBe(input);
    expect(e.message).toContain(`input "${input}"`);
  });
});

describe('resolveMaxUnavailable', () => {
  it.each([
    ['25%', 60, 15],
    ['1%', 10, 1],
    ['10%', 19, 1],
    ['10%', 20, 2],
    ['33%', 10, 3],
    ['100%', 7, 7],
    ['50%', 0, 1],
    ['5', 60, 5],
    ['5', 2, 5],
  ])('%s of %d workers → %d', (text, workers, want) => {
    expect(resolveMaxUnavailable(parseMaxUnavailable(text), workers)).toBe(want);
  });
});
