// The state of the workflow run attempt that owns a fence or holds the Lease, from the GitHub API.
// recover-fences releases a fence only when this says `completed`, so every doubt (no token, an
// error, a 404, an answer that does not match the question) maps to `unknown`, never to `completed`.
import { getOctokit } from '@actions/github';
import { errorMessage } from '../core/errors.js';
import { formatDuration } from '../core/format.js';
import type { RunAttemptInfo, RunState } from '../core/model/workflowRun.js';
import { GITHUB_SERVER_URL, runUrl, type OwnerToken } from '../core/owner.js';

// The run data the fences rule judges lives in core/model/workflowRun.ts; re-exported for this adapter's callers.
export type { RunAttemptInfo, RunState } from '../core/model/workflowRun.js';

export interface RunLookup {
  runAttempt(owner: OwnerToken): Promise<RunAttemptInfo>;
}

// GitHub's workflow run `status` values. `waiting` (an environment approval), `requested` and
// `pending` (concurrency group) have not started or are paused before a job runs: the run can
// still start, so they count as queued.
const STATUS: Record<string, RunState> = {
  queued: 'queued',
  waiting: 'queued',
  requested: 'queued',
  pending: 'queued',
  in_progress: 'in_progress',
  completed: 'completed',
};

export interface GitHubRunsOptions {
  /** REST API root; default GITHUB_API_URL or https://api.github.com (GHES sets its own) */
  baseUrl?: string;
  /** web root for run URLs (the shell passes the runner's GITHUB_SERVER_URL); default https://github.com */
  serverUrl?: string;
  /** per request; a hanging API must not hang the action */
  timeoutMs?: number;
}

export class GitHubRuns implements RunLookup {
  private readonly octokit?: ReturnType<typeof getOctokit>;
  private readonly serverUrl: string;
  private readonly timeoutMs: number;

  constructor(token: string | undefined, opts: GitHubRunsOptions = {}) {
    this.serverUrl = opts.serverUrl ?? GITHUB_SERVER_URL;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    if (token) this.octokit = getOctokit(token, { baseUrl: opts.baseUrl ?? 'https://api.github.com' });
  }

  async runAttempt(owner: OwnerToken): Promise<RunAttemptInfo> {
    const url = runUrl(owner, this.serverUrl);
    const unknown = (error: string): RunAttemptInfo => ({ state: 'unknown', url, error });
    if (!this.octokit) return unknown('no github-token was given, so the run cannot be looked up');
    const parts = owner.repository.split('/');
    if (parts.length !== 2 || !parts[0] || !parts[1]) return unknown(`"${owner.repository}" is not an owner/repo GitHub repository`);
    if (!/^\d+$/.test(owner.runId) || !/^\d+$/.test(owner.runAttempt)) {
      return unknown(`run id "${owner.runId}" / attempt "${owner.runAttempt}" are not numbers`);
    }
    let data: Record<string, unknown>;
    try {
      const res = await this.octokit.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}', {
        owner: parts[0],
        repo: parts[1],
        run_id: Number(owner.runId),
        attempt_number: Number(owner.runAttempt),
        request: { signal: AbortSignal.timeout(this.timeoutMs) },
      });
      data = res.data ?? {};
    } catch (e) {
      const status = (e as { status?: unknown }).status;
      const msg = errorMessage(e);
      // Octokit reports a failed fetch (here: our abort) as a RequestError with status 500.
      const cause = (e as { cause?: { name?: string } }).cause?.name;
      if (cause === 'TimeoutError' || cause === 'AbortError')
        return unknown(`GitHub API did not answer within ${formatDuration(this.timeoutMs)}`);
      if (status === 404) {
        return unknown(
          `GitHub API: run attempt not found (404; a deleted run, or a github-token without actions:read on ${owner.repository})`,
        );
      }
      return unknown(`GitHub API${typeof status === 'number' ? ` ${status}` : ''}: ${msg}`);
    }
    // An answer about another run or attempt would be trusted for the wrong fence.
    const id = scalarText(data.id);
    const attempt = scalarText(data.run_attempt);
    if (data.id !== undefined && id !== owner.runId) return unknown(`GitHub API answered for run ${id}, not ${owner.runId}`);
    if (data.run_attempt !== undefined && attempt !== owner.runAttempt) {
      return unknown(`GitHub API answered for attempt ${attempt}, not ${owner.runAttempt}`);
    }
    const status = typeof data.status === 'string' ? data.status : '';
    const state = STATUS[status];
    if (!state) return unknown(`GitHub API reported status "${status || '(none)'}", which this action does not know`);
    const info: RunAttemptInfo = { state, url };
    if (state === 'completed' && typeof data.conclusion === 'string') info.conclusion = data.conclusion;
    return info;
  }
}

/** An id from the API as text; anything but a string or number reads as '(not a scalar)'. */
function scalarText(v: unknown): string {
  return typeof v === 'string' || typeof v === 'number' ? String(v) : '(not a scalar)';
}
