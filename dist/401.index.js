export const id = 401;
export const ids = [401];
export const modules = {

/***/ 2401:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   GitHubRuns: () => (/* binding */ GitHubRuns)
/* harmony export */ });
/* harmony import */ var _actions_github__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(2413);
/* harmony import */ var _core_errors_js__WEBPACK_IMPORTED_MODULE_1__ = __webpack_require__(4296);
/* harmony import */ var _core_format_js__WEBPACK_IMPORTED_MODULE_3__ = __webpack_require__(6228);
/* harmony import */ var _core_owner_js__WEBPACK_IMPORTED_MODULE_2__ = __webpack_require__(2920);
// The state of the workflow run attempt that owns a fence or holds the Lease, from the GitHub API.
// recover-fences releases a fence only when this says `completed`, so every doubt (no token, an
// error, a 404, an answer that does not match the question) maps to `unknown`, never to `completed`.




// GitHub's workflow run `status` values. `waiting` (an environment approval), `requested` and
// `pending` (concurrency group) have not started or are paused before a job runs: the run can
// still start, so they count as queued.
const STATUS = {
    queued: 'queued',
    waiting: 'queued',
    requested: 'queued',
    pending: 'queued',
    in_progress: 'in_progress',
    completed: 'completed',
};
class GitHubRuns {
    octokit;
    serverUrl;
    timeoutMs;
    constructor(token, opts = {}) {
        this.serverUrl = opts.serverUrl ?? _core_owner_js__WEBPACK_IMPORTED_MODULE_2__/* .GITHUB_SERVER_URL */ .m7;
        this.timeoutMs = opts.timeoutMs ?? 30_000;
        if (token)
            this.octokit = (0,_actions_github__WEBPACK_IMPORTED_MODULE_0__/* .getOctokit */ .Q)(token, { baseUrl: opts.baseUrl ?? 'https://api.github.com' });
    }
    async runAttempt(owner) {
        const url = (0,_core_owner_js__WEBPACK_IMPORTED_MODULE_2__/* .runUrl */ .Vp)(owner, this.serverUrl);
        const unknown = (error) => ({ state: 'unknown', url, error });
        if (!this.octokit)
            return unknown('no github-token was given, so the run cannot be looked up');
        const parts = owner.repository.split('/');
        if (parts.length !== 2 || !parts[0] || !parts[1])
            return unknown(`"${owner.repository}" is not an owner/repo GitHub repository`);
        if (!/^\d+$/.test(owner.runId) || !/^\d+$/.test(owner.runAttempt)) {
            return unknown(`run id "${owner.runId}" / attempt "${owner.runAttempt}" are not numbers`);
        }
        let data;
        try {
            const res = await this.octokit.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}', {
                owner: parts[0],
                repo: parts[1],
                run_id: Number(owner.runId),
                attempt_number: Number(owner.runAttempt),
                request: { signal: AbortSignal.timeout(this.timeoutMs) },
            });
            data = res.data ?? {};
        }
        catch (e) {
            const status = e.status;
            const msg = (0,_core_errors_js__WEBPACK_IMPORTED_MODULE_1__/* .errorMessage */ .gJ)(e);
            // Octokit reports a failed fetch (here: our abort) as a RequestError with status 500.
            const cause = e.cause?.name;
            if (cause === 'TimeoutError' || cause === 'AbortError')
                return unknown(`GitHub API did not answer within ${(0,_core_format_js__WEBPACK_IMPORTED_MODULE_3__/* .formatDuration */ .a3)(this.timeoutMs)}`);
            if (status === 404) {
                return unknown(`GitHub API: run attempt not found (404; a deleted run, or a github-token without actions:read on ${owner.repository})`);
            }
            return unknown(`GitHub API${typeof status === 'number' ? ` ${status}` : ''}: ${msg}`);
        }
        // An answer about another run or attempt would be trusted for the wrong fence.
        const id = scalarText(data.id);
        const attempt = scalarText(data.run_attempt);
        if (data.id !== undefined && id !== owner.runId)
            return unknown(`GitHub API answered for run ${id}, not ${owner.runId}`);
        if (data.run_attempt !== undefined && attempt !== owner.runAttempt) {
            return unknown(`GitHub API answered for attempt ${attempt}, not ${owner.runAttempt}`);
        }
        const status = typeof data.status === 'string' ? data.status : '';
        const state = STATUS[status];
        if (!state)
            return unknown(`GitHub API reported status "${status || '(none)'}", which this action does not know`);
        const info = { state, url };
        if (state === 'completed' && typeof data.conclusion === 'string')
            info.conclusion = data.conclusion;
        return info;
    }
}
/** An id from the API as text; anything but a string or number reads as '(not a scalar)'. */
function scalarText(v) {
    return typeof v === 'string' || typeof v === 'number' ? String(v) : '(not a scalar)';
}


/***/ })

};
