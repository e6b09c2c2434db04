// GitHubRuns against a local stub of the GitHub REST API on 127.0.0.1 (no network).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubRuns } from '../../src/adapters/github.js';
import { parseOwnerToken, type OwnerToken } from '../../src/core/owner.js';

const requests: Array<{ url: string; auth?: string }> = [];
let server: Server;
let baseUrl = '';

// run id → what the stub answers for attempt 1
const ANSWERS: Record<string, { status: number; body: unknown } | 'hang'> = {
  '101': { status: 200, body: { id: 101, run_attempt: 1, status: 'queued', conclusion: null } },
  '102': { status: 200, body: { id: 102, run_attempt: 1, status: 'in_progress', conclusion: null } },
  '103': { status: 200, body: { id: 103, run_attempt: 1, status: 'completed', conclusion: 'cancelled' } },
  '104': { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } },
  '105': { status: 200, body: { id: 105, run_attempt: 1, status: 'waiting', conclusion: null } },
  '106': { status: 200, body: { id: 999, run_attempt: 1, status: 'completed', conclusion: 'success' } },
  '107': { status: 200, body: { id: 107, run_attempt: 3, status: 'completed', conclusion: 'success' } },
  '108': { status: 500, body: { message: 'Server Error' } },
  '109': { status: 200, body: { id: 109, run_attempt: 1, status: 'something_new' } },
  '110': 'hang',
};

function answer(req: IncomingMessage) {
  const m = /^\/repos\/acme\/infra\/actions\/runs\/(\d+)\/attempts\/1$/.exec(req.url ?? '');
  return m ? ANSWERS[m[1]] : { status: 404, body: { message: 'Not Found' } };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', auth: req.headers.authorization });
    const a = answer(req);
    if (a === 'hang') return; // never answers
    res.writeHead(a.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(a.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const token = (runId: string, attempt = '1', repository = 'acme/infra'): OwnerToken =>
  parseOwnerToken(`${repository}/runs/${runId}/attempts/${attempt}/n0nce`)!;
const runs = () => new GitHubRuns('ghs_test', { baseUrl, serverUrl: 'https://github.example', timeoutMs: 1_000 });

describe('GitHubRuns', () => {
  it('maps queued, in_progress and completed, with the run URL and the conclusion', async () => {
    expect(await runs().runAttempt(token('101'))).toEqual({
      state: 'queued',
      url: 'https://github.example/acme/infra/actions/runs/101/attempts/1',
    });
    expect(await runs().runAttempt(token('102'))).toEqual({
      state: 'in_progress',
      url: 'https://github.example/acme/infra/actions/runs/102/attempts/1',
    });
    expect(await runs().runAttempt(token('103'))).toEqual({
      state: 'completed',
      conclusion: 'cancelled',
      url: 'https://github.example/acme/infra/actions/runs/103/attempts/1',
    });
    expect((await runs().runAttempt(token('105'))).state).toBe('queued');
    const r = requests.find((x) => x.url.includes('/runs/103/'))!;
    expect(r.url).toBe('/repos/acme/infra/actions/runs/103/attempts/1');
    expect(r.auth).toBe('token ghs_test');
  });

  it('404 is unknown, with the reason', async () => {
    const r = await runs().runAttempt(token('104'));
    expect(r.state).toBe('unknown');
    expect(r.error).toMatch(/not found \(404/);
  });

  it('a 500, an unknown status, or an answer about another run or attempt is unknown, never completed', async () => {
    for (const [id, pattern] of [
      ['108', /500/],
      ['109', /something_new/],
      ['106', /run 999, not 106/],
      ['107', /attempt 3, not 1/],
    ] as const) {
      const r = await runs().runAttempt(token(id));
      expect(r.state, id).toBe('unknown');
      expect(r.error, id).toMatch(pattern);
    }
  });

  it('a hanging API times out as unknown', async () => {
    const r = await new GitHubRuns('ghs_test', { baseUrl, timeoutMs: 200 }).runAttempt(token('110'));
    expect(r.state).toBe('unknown');
    expect(r.error).toBe('GitHub API did not answer within 200 ms');
  });

  it('no token, or a token that names no GitHub run, is unknown without any request', async () => {
    const before = requests.length;
    const noToken = await new GitHubRuns(undefined, { baseUrl }).runAttempt(token('103'));
    expect(noToken).toMatchObject({ state: 'unknown', error: expect.stringContaining('github-token') });
    expect((await runs().runAttempt(token('0', '1', 'local'))).state).toBe('unknown');
    expect((await runs().runAttempt(token('abc'))).state).toBe('unknown');
    expect(requests.length).toBe(before);
  });

  it('asks the API root it is given (the shell reads GITHUB_API_URL: __tests__/action/inputs.test.ts)', async () => {
    expect((await new GitHubRuns('ghs_test', { baseUrl }).runAttempt(token('102'))).state).toBe('in_progress');
  });
});
