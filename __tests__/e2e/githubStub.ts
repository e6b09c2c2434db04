// A local stand-in for the GitHub REST API, enough for the fences modes: it answers
// `GET /repos/{owner}/{repo}/actions/runs/{id}/attempts/{n}` from a table the test fills, 404 for any
// run it does not know, and records every request (so a test can check the token was sent).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubRun {
  status: 'queued' | 'in_progress' | 'completed' | 'waiting' | 'requested' | 'pending';
  conclusion?: string | null;
}

export interface StubRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export interface GitHubStub {
  /** the API root, for GITHUB_API_URL */
  url: string;
  requests: StubRequest[];
  /** add or change a run attempt: key `owner/repo/runs/<id>/attempts/<n>` */
  set(key: string, run: StubRun): void;
  stop(): Promise<void>;
}

const ATTEMPT = /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)\/attempts\/(\d+)$/;

export async function startGitHubStub(runs: Record<string, StubRun> = {}, opts: { serverUrl?: string } = {}): Promise<GitHubStub> {
  const table = new Map(Object.entries(runs));
  const serverUrl = opts.serverUrl ?? 'https://github.com';
  const requests: StubRequest[] = [];
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers });
    const send = (code: number, body: unknown) => {
      const s = JSON.stringify(body);
      res.writeHead(code, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(s) });
      res.end(s);
    };
    const m = ATTEMPT.exec(path);
    if (req.method !== 'GET' || !m) return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    const [, owner, repo, id, attempt] = m;
    const run = table.get(`${owner}/${repo}/runs/${id}/attempts/${attempt}`);
    if (!run) return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest/actions/workflow-runs' });
    send(200, {
      id: Number(id),
      run_attempt: Number(attempt),
      status: run.status,
      conclusion: run.conclusion ?? null,
      html_url: `${serverUrl}/${owner}/${repo}/actions/runs/${id}/attempts/${attempt}`,
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    set: (key, run) => void table.set(key, run),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
