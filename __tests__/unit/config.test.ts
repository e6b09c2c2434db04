import { describe, expect, it } from 'vitest';
import { DEFAULT_CRI_CONFIG_PATHS, parseDuration, readConfig } from '../../src/config.js';
import { InputError } from '../../src/errors.js';

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
      evidenceMarginMs: 10,
      claimAttempts: 5,
      drainTimeoutMs: 45 * 60_000,
      readyTimeoutMs: 10 * 60_000,
      criRestartWaitMs: 60_000,
      verifyNamespace: 'kube-system',
      annotationPrefix: 'registry-auth-rollout',
      nodes: [],
    });
    expect(c.criConfigPaths).toEqual(DEFAULT_CRI_CONFIG_PATHS);
    expect(c.verifyImage).toBeUndefined();
  });

  it('splits nodes on commas and newlines', () => {
    expect(readConfig(reader({ nodes: 'a, b\nc\n\n' })).nodes).toEqual(['a', 'b', 'c']);
  });

  it.each([
    ['mode', { mode: 'yolo' }, /input "mode": "yolo" is not one of apply, plan, fences, recover-fences/],
    ['reboot', { reboot: 'never' }, /input "reboot"/],
    ['auth-patch', { 'auth-patch': ' ' }, /input "auth-patch": is required/],
    ['revision', { revision: '' }, /input "revision": is required/],
    ['drain-timeout', { 'drain-timeout': '45 minutes' }, /input "drain-timeout": "45 minutes" is not a duration/],
    ['ready-timeout', { 'ready-timeout': '10' }, /input "ready-timeout"/],
    ['claim-attempts', { 'claim-attempts': '0' }, /input "claim-attempts"/],
    ['annotation-prefix', { 'annotation-prefix': 'Bad_Prefix' }, /input "annotation-prefix"/],
    ['cri-config-paths', { 'cri-config-paths': 'etc/cri.toml' }, /input "cri-config-paths"/],
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
