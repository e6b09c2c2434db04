// The claim token written into the owner annotation: enough to find the run that holds a node
// (repository, run id, attempt) plus a random nonce so two attempts of one run never share it.
import { randomBytes } from 'node:crypto';

export interface OwnerToken {
  repository: string;
  runId: string;
  runAttempt: string;
  nonce: string;
}

export function newOwnerToken(env: NodeJS.ProcessEnv, random: () => Buffer = () => randomBytes(6)): OwnerToken {
  return {
    repository: env.GITHUB_REPOSITORY || 'local',
    runId: env.GITHUB_RUN_ID || '0',
    runAttempt: env.GITHUB_RUN_ATTEMPT || '1',
    nonce: random().toString('hex'),
  };
}

/** `owner/repo/runs/123/attempts/1/nonce` — readable, and parseable back by parseOwnerToken. */
export function formatOwnerToken(t: OwnerToken): string {
  return `${t.repository}/runs/${t.runId}/attempts/${t.runAttempt}/${t.nonce}`;
}

export function parseOwnerToken(s: string): OwnerToken | undefined {
  const m = /^(.+)\/runs\/([^/]+)\/attempts\/([^/]+)\/([^/]+)$/.exec(s);
  return m ? { repository: m[1], runId: m[2], runAttempt: m[3], nonce: m[4] } : undefined;
}

/** The web root of github.com, for run URLs when the runner names none (a GHES runner sets its own). */
export const GITHUB_SERVER_URL = 'https://github.com';

/** The web root of the runner's GitHub: GITHUB_SERVER_URL as the runner sets it, else github.com. */
export function githubServerUrl(env: NodeJS.ProcessEnv): string {
  return env.GITHUB_SERVER_URL || GITHUB_SERVER_URL;
}

export function runUrl(t: OwnerToken, serverUrl = GITHUB_SERVER_URL): string {
  return `${serverUrl}/${t.repository}/actions/runs/${t.runId}/attempts/${t.runAttempt}`;
}
