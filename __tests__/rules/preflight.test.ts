import { describe, expect, it } from 'vitest';
import type { RegistryCheck, RegistryExchange } from '../../src/core/model/preflight.js';
import { judgePreflight } from '../../src/rules/preflight.js';

const ping401: RegistryExchange = { step: 'ping', asked: 'GET https://ghcr.io/v2/', status: 401, statusText: 'Unauthorized' };
const token = (status: number, extra: Partial<RegistryExchange> = {}): RegistryExchange => ({
  step: 'token',
  asked: 'GET https://ghcr.io/token?service=ghcr.io&scope=repository:org/app:pull with the new credential',
  status,
  statusText: status === 200 ? 'OK' : 'Unauthorized',
  ...extra,
});
const head = (status: number, statusText: string): RegistryExchange => ({
  step: 'manifest',
  asked: 'HEAD https://ghcr.io/v2/org/app/manifests/v1',
  status,
  statusText,
});
const check = (exchanges: RegistryExchange[], over: Partial<RegistryCheck> = {}): RegistryCheck => ({
  host: 'ghcr.io',
  image: 'org/app:v1',
  auth: 'bearer',
  exchanges,
  ...over,
});

describe('judgePreflight', () => {
  it('a request the credential rule kept from going (a plain-http realm): withheld, with why and the fix, nothing answered', () => {
    const withheld = {
      step: 'token' as const,
      asked: 'GET http://ghcr.io/token?service=ghcr.io with the new credential',
      withheld: { reason: 'the token realm http://ghcr.io/token is plain http: the credential would travel in clear text', fix: 'X' },
    };
    expect(judgePreflight(check([ping401, withheld]))).toEqual({
      verdict: 'withheld',
      host: 'ghcr.io',
      asked: withheld.asked,
      answered: 'not sent: the token realm http://ghcr.io/token is plain http: the credential would travel in clear text',
      fix: 'X',
    });
  });

  it('a manifest HEAD through the token flow proves a pull', () => {
    expect(judgePreflight(check([ping401, token(200), head(200, 'OK')]))).toEqual({
      verdict: 'ok',
      host: 'ghcr.io',
      proves: 'pull',
      what: 'token flow + manifest HEAD of org/app:v1',
    });
  });
  it('a token alone proves a login', () => {
    expect(judgePreflight(check([ping401, token(200)], { image: undefined }))).toMatchObject({ verdict: 'ok', proves: 'login' });
  });
  it('a token endpoint that rejects the credential: refused, with what was asked and answered', () => {
    expect(judgePreflight(check([ping401, token(401, { registryError: 'UNAUTHORIZED authentication required' })]))).toEqual({
      verdict: 'refused',
      host: 'ghcr.io',
      asked: token(401).asked,
      answered: '401 Unauthorized: UNAUTHORIZED authentication required',
    });
  });
  it.each([
    [400, 'Bad Request'],
    [404, 'Not Found'],
    [405, 'Method Not Allowed'],
  ])(
    'a token endpoint answering %i does not serve the request (containerd would fail the same): unsupported, not refused',
    (status, text) => {
      expect(judgePreflight(check([ping401, token(status, { statusText: text })]))).toMatchObject({
        verdict: 'unsupported',
        answered: `${status} ${text}`,
      });
      expect(judgePreflight(check([ping401, token(403, { statusText: 'Forbidden' })]))).toMatchObject({ verdict: 'refused' });
    },
  );
  it.each([
    [401, 'Unauthorized'],
    [403, 'Forbidden'],
    [404, 'Not Found'],
  ])('a manifest HEAD answered %i: refused', (status, text) => {
    expect(judgePreflight(check([ping401, token(200), head(status, text)]))).toMatchObject({
      verdict: 'refused',
      answered: `${status} ${text}`,
    });
  });
  it('no answer, a 5xx, a 429, a tokenless 200, a /v2/ that is no registry: unreachable', () => {
    expect(
      judgePreflight(check([{ step: 'ping', asked: 'GET https://x/v2/', failure: 'connect ECONNREFUSED 127.0.0.1:1 (ECONNREFUSED)' }])),
    ).toMatchObject({
      verdict: 'unreachable',
      answered: 'connect ECONNREFUSED 127.0.0.1:1 (ECONNREFUSED)',
    });
    expect(judgePreflight(check([ping401, token(503)]))).toMatchObject({ verdict: 'unreachable' });
    expect(judgePreflight(check([ping401, token(200), head(429, 'Too Many Requests')]))).toMatchObject({ verdict: 'unreachable' });
    expect(judgePreflight(check([ping401, token(200, { unusable: true })]))).toMatchObject({ verdict: 'unreachable' });
    expect(judgePreflight(check([{ ...ping401, status: 404, statusText: 'Not Found' }], { auth: 'unknown' }))).toMatchObject({
      verdict: 'unreachable',
    });
  });
  it('basic auth and a registry that asks for nothing', () => {
    expect(
      judgePreflight(
        check([ping401, { step: 'login', asked: 'GET /v2/ with basic auth', status: 200 }], { auth: 'basic', image: undefined }),
      ),
    ).toMatchObject({
      verdict: 'ok',
      proves: 'login',
    });
    expect(judgePreflight(check([{ ...ping401, status: 200 }], { auth: 'none', image: undefined }))).toMatchObject({
      verdict: 'ok',
      proves: 'none',
    });
    expect(
      judgePreflight(check([ping401, { step: 'login', asked: 'basic auth', registryError: 'no basic credential', unusable: true }])),
    ).toMatchObject({
      verdict: 'refused',
    });
  });
});
