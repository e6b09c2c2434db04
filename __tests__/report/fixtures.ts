// Hand-built decision records shaped like the rollout's, so the report tests need no pipeline.
import type { DecisionRecord, Outcome, StepRecord } from '../../src/core/model/record.js';
import type { EvidenceVerdict } from '../../src/core/model/verdict.js';

export function verdict(kind: 'skip' | 'reboot', reason: string, overrides: Partial<EvidenceVerdict['values']> = {}): EvidenceVerdict {
  return {
    verdict: kind,
    reason,
    // a reboot verdict as the rule gives it for a config still holding the old credential
    ...(kind === 'reboot' ? { failedRule: 'credential' as const, contradicts: true } : {}),
    values: {
      criState: 'Running',
      criHealth: 'OK',
      criPid: 1234,
      criStartEarliest: '2026-03-01T10:00:05.000Z',
      criStartSource: 'talosctl service cri',
      configWrittenLatest: '2026-03-01T09:59:00.000Z',
      configWrittenPath: '/etc/cri/conf.d/cri.toml',
      marginMs: 2000,
      gapMs: 65000,
      timeSynced: true,
      timeEpoch: 0,
      talosVersion: 'v1.13.8',
      files: [
        {
          path: '/etc/cri/conf.d/cri.toml',
          exists: true,
          lastMod: 'Mar  1 09:59:00',
          updated: '2026-03-01T09:59:00Z',
          credential: 'desired',
        },
        { path: '/etc/cri/conf.d/01-registries.part', exists: false, credential: 'absent' },
      ],
      ...overrides,
    },
  };
}

const STEP_NAMES = [
  'fresh read',
  'claim',
  'read evidence',
  'phase mutating',
  'patch machineconfig',
  'decide',
  'guard',
  'drain',
  'guard',
  'reboot',
  'wait ready',
  'prove',
  'release',
];

export function steps(n = STEP_NAMES.length, failLast = false): StepRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    name: STEP_NAMES[i % STEP_NAMES.length],
    startedAt: new Date(Date.UTC(2026, 2, 1, 10, 0, i)).toISOString(),
    durationMs: 100 + i * 37,
    ok: !(failLast && i === n - 1),
    detail: i % 3 === 0 ? `kubectl exit 0 after ${i} ms` : undefined,
  }));
}

export function record(node: string, outcome: Outcome, overrides: Partial<DecisionRecord> = {}): DecisionRecord {
  const base: DecisionRecord = {
    node,
    uid: `uid-${node}`,
    role: node.startsWith('cp') ? 'control-plane' : 'worker',
    internalIP: '10.0.0.10',
    outcome,
    reason: defaultReason(outcome),
    evidence: verdict(outcome.endsWith('skip') || outcome === 'reboot-skipped' ? 'skip' : 'reboot', defaultReason(outcome)),
    claim: outcome.startsWith('planned') ? undefined : { attempts: 1, conflicts: [] },
    steps: steps(outcome === 'rebooted' ? 13 : 6, outcome === 'failed'),
    durationMs: outcome === 'rebooted' ? 245_000 : 4_200,
  };
  if (outcome === 'rebooted') base.proof = verdict('skip', 'bootID changed and containerd started after the config write');
  if (outcome === 'refused') base.nextStep = 'Check who else holds the node, then re-run.';
  if (outcome === 'failed') base.nextStep = 'Check the node, then release it: kubectl annotate node … registry-auth-rollout/owner-';
  return { ...base, ...overrides };
}

function defaultReason(o: Outcome): string {
  switch (o) {
    case 'rebooted':
    case 'planned-reboot':
      return 'cri.toml carries the old credential';
    case 'reboot-skipped':
    case 'planned-skip':
      return 'containerd started 63s after the last config write (margin 2s)';
    case 'refused':
      return 'claim conflict: owner held by another run';
    case 'failed':
      return 'drain timed out after 45m';
    case 'quarantined':
      return 'drain timed out after 45m: quarantined';
  }
}
