// Which test files each tier runs. Read by vitest.config.ts (RAR_TEST_TIER); the reasons and what each
// tier costs on this project's 2-core machine are in docs/testing.md ("The tiers").
//
// - core (`npm test`): planned for at most 150 s on a fresh clone of the 2-core machine every developer
//   and CI has. Every unit, adapter, pipeline, rule, report, action and repository test, and the
//   end-to-end files that see each rule and each runtime path of the action through the bundle once: the
//   claim and its retries, the reboot evidence, the drain and the kubelet's taints, the cancellation and
//   the post step, the Talos API and talosctl, the registry and Alertmanager clients, the kubeconfig's
//   auth forms, the Talos API's server identity, the merge queue's converged run, the refused drain, the
//   gates, quarantine and quorum.
// - all (`npm run test:all`, a plain `npx vitest run`, and CI on Node 24, the runtime action.yml
//   declares): every file, adding EXTENDED below.
// - compat (CI on Node 20, which the action must also run on): the files whose outcome can depend on the
//   Node version the action runs on (COMPAT below).

/**
 * End-to-end files that are variants of a case the core tier sees through the bundle: other phases of a
 * cancellation or a recovery, other timings and read paths of the evidence, other forms of a finding,
 * the start checks beside the gates (settle, windows, the time budget). Each is a case an issue asked to
 * see through the bundle, so CI runs every one of them on every change.
 */
export const EXTENDED_E2E = [
  'api-evidence',
  'api-evidence-cli',
  'api-evidence-seeds',
  'boot-files',
  'boot-files-cli',
  'config-edit',
  'cri-window',
  'drain-claim',
  'evidence-cli-timings',
  'gate-values',
  'parallel-failure',
  'parallel-topology',
  'plan-forecast',
  'preflight',
  'quarantine-lift',
  'quorum-disagree',
  'rails-lease',
  'rails-phase',
  'rails-unknown',
  'recovery-after-claim',
  'recovery-after-patch',
  'recovery-before-release',
  'recovery-during-drain',
  'recovery-waiting-ready',
  'report-file',
  'settle',
  'settle-baseline',
  'several-registries',
  'time-budget',
  'windows',
].map((name) => `__tests__/e2e/${name}.test.ts`);

/**
 * The twin's own tests: that it answers as a cluster, kubectl, talosctl, the Talos API and Alertmanager
 * do. They matter when the twin changes (`npm run test:all`, or their folder), not for a change to the
 * action.
 */
export const TWIN_TESTS = ['__tests__/sim-kube/**', '__tests__/sim-talos/**', '__tests__/sim-alertmanager/**'];

/** What `npm test` leaves to the whole suite. */
export const EXTENDED = [...TWIN_TESTS, ...EXTENDED_E2E];

/**
 * The Node 20 pass: the action's code where Node's own APIs answer (HTTP, TLS, gRPC, child processes,
 * signals, timers, Intl's time zones), as unit tests and through the bundle on each runtime path once.
 * The twin, the demo and the repository's document checks do not run the action on that Node.
 */
export const COMPAT = [
  '__tests__/action/**',
  '__tests__/adapters/**',
  '__tests__/pipeline/**',
  '__tests__/rules/**',
  '__tests__/runner/**',
  ...[
    'alert-silence', // the Alertmanager client (undici)
    'api-reboot', // the Talos API over gRPC and TLS: apply, reboot, the boot id
    'ci-job', // the merge queue's job: main, the saved state, the post step
    'kube-auth', // the kubeconfig's auth forms through kubectl proxy
    'rails', // cancellation and kill: signals, the post step's release, fences over the GitHub API
    'roll', // the whole roll: claim, evidence, drain, reboot, proof, release
    'talosctl-fallback', // talosctl as a child process
  ].map((name) => `__tests__/e2e/${name}.test.ts`),
];
