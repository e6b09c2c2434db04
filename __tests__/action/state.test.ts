import { describe, expect, it } from 'vitest';
import type { HeldNode } from '../../src/core/model/phase.js';
import { MaskedCore } from '../../src/action/masked.js';
import { loadAccess, loadHeld, loadLease, saveAccess, saveHeld, saveLease, StateError, type StateStore } from '../../src/action/state.js';

function store(): StateStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, saveState: (k, v) => map.set(k, v), getState: (k) => map.get(k) ?? '' };
}

const held: HeldNode = {
  node: 'w1',
  phase: 'left-as-set',
  stoppedIn: 'draining',
  owner: 'acme/infra/runs/42/attempts/1/abcdef',
  capture: {
    node: 'w1',
    uid: 'u1',
    internalIP: '10.0.0.10',
    role: 'worker',
    wasCordoned: false,
    taints: [],
    schedulingTaints: [],
    owner: 'acme/infra/runs/42/attempts/1/abcdef',
  },
};

describe('state: what main hands to the post step', () => {
  it('round-trips the held nodes, the Lease and the access', () => {
    const s = store();
    saveHeld(s, [held]);
    saveLease(s, { namespace: 'kube-system', name: 'l', owner: held.owner });
    saveAccess(s, { annotationPrefix: 'example.com/rar', kubeContext: 'prod' });
    expect(loadHeld(s)).toEqual([held]);
    expect(loadLease(s)).toEqual({ namespace: 'kube-system', name: 'l', owner: held.owner });
    expect(loadAccess(s)).toEqual({ annotationPrefix: 'example.com/rar', kubeContext: 'prod' });
  });

  it('an empty set and a released Lease are saved as nothing', () => {
    const s = store();
    saveHeld(s, []);
    saveLease(s, undefined);
    expect(loadHeld(s)).toEqual([]);
    expect(loadLease(s)).toBeUndefined();
  });

  it('refuses an entry with an unknown phase (the post step must not guess what to do with it)', () => {
    const s = store();
    s.map.set('held', JSON.stringify([{ ...held, phase: 'holding' }]));
    expect(() => loadHeld(s)).toThrow(StateError);
    s.map.set('lease', 'not json');
    expect(() => loadLease(s)).toThrow(/"lease" is not JSON/);
  });

  it('round-trips through the masking port unchanged when a registered secret also occurs in the owner token and the node name', () => {
    // The runner keeps the state file to itself (it becomes the post step's STATE_* variables, never
    // shown), so it is not a sink: masked, `acme/infra/…` would come back as `acme/***/…` and the post
    // step would not recognise its own claim. A short password is registered whole, as the runner does.
    const map = new Map<string, string>();
    const secrets: string[] = [];
    const core = new MaskedCore({
      saveState: (k: string, v: string) => map.set(k, v),
      getState: (k: string) => map.get(k) ?? '',
      setSecret: (v: string) => secrets.push(v),
    } as unknown as ConstructorParameters<typeof MaskedCore>[0]);
    core.addSecret('infra');
    const mine: HeldNode = { ...held, node: 'infra-w1', capture: { ...held.capture, node: 'infra-w1', uid: 'infra-uid' } };
    saveHeld(core, [mine]);
    saveLease(core, { namespace: 'kube-system', name: 'infra-lease', owner: mine.owner });
    saveAccess(core, { annotationPrefix: 'infra.example.com/rar' });
    expect(secrets).toEqual(['infra']);
    expect(core.mask(mine.owner)).toBe('acme/***/runs/42/attempts/1/abcdef');
    expect(loadHeld(core)).toEqual([mine]);
    expect(loadLease(core)).toEqual({ namespace: 'kube-system', name: 'infra-lease', owner: mine.owner });
    expect(loadAccess(core)).toEqual({ annotationPrefix: 'infra.example.com/rar' });
  });
});
