// Everything the main step hands to the post step (`post-if: always()`, a fresh process), in one
// place: each saved key, its type, and its save/load. The post step reads only this, so it never
// re-derives an input or its default: the main step saves what it resolved. Nothing here is a secret
// (node names, claims, the Lease's name, the kubectl flags), and the masking port writes it as it is
// (src/action/masked.ts): a masked byte would be a wrong reading of the run's own claim.
import { NODE_PHASES, type HeldNode, type NodePhase, type SavedAccess, type SavedLease } from '../core/model/phase.js';

/** The step-state port: `core.saveState` / `core.getState`, or a map in tests. */
export interface StateStore {
  saveState(name: string, value: string): void;
  getState(name: string): string;
}

/** The saved keys. Nothing else is saved. */
const KEY = {
  /** the nodes this run holds or left claimed (HeldNode[]); empty when none */
  held: 'held',
  /** the run Lease while this run holds it (SavedLease); empty once released */
  lease: 'lease',
  /** how to reach the cluster and the annotation keys, as main resolved them (SavedAccess) */
  access: 'access',
} as const;

// their shapes are the post step's input too (src/fences/post.ts), so they live with HeldNode
export type { SavedAccess, SavedLease } from '../core/model/phase.js';

const PHASES: ReadonlySet<NodePhase> = new Set<NodePhase>(NODE_PHASES);

export function saveHeld(store: StateStore, held: HeldNode[]): void {
  store.saveState(KEY.held, held.length ? JSON.stringify(held) : '');
}

export function saveLease(store: StateStore, lease: SavedLease | undefined): void {
  store.saveState(KEY.lease, lease ? JSON.stringify(lease) : '');
}

export function saveAccess(store: StateStore, access: SavedAccess): void {
  store.saveState(KEY.access, JSON.stringify(access));
}

/** A saved value the post step cannot read (not JSON, wrong shape): named, so it can say so. */
export class StateError extends Error {
  constructor(
    readonly key: string,
    detail: string,
  ) {
    super(`the saved state "${key}" ${detail}`);
    this.name = 'StateError';
  }
}

function parse(store: StateStore, key: string): unknown {
  const raw = store.getState(key);
  if (!raw) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    throw new StateError(key, 'is not JSON');
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function loadHeld(store: StateStore): HeldNode[] {
  const v = parse(store, KEY.held);
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new StateError(KEY.held, 'is not a list of nodes');
  for (const h of v) {
    if (
      !isObject(h) ||
      typeof h.node !== 'string' ||
      typeof h.owner !== 'string' ||
      !isObject(h.capture) ||
      !PHASES.has(h.phase as NodePhase)
    ) {
      throw new StateError(KEY.held, `has an entry that is not a held node: ${JSON.stringify(h).slice(0, 200)}`);
    }
  }
  return v as HeldNode[];
}

export function loadLease(store: StateStore): SavedLease | undefined {
  const v = parse(store, KEY.lease);
  if (v === undefined) return undefined;
  if (!isObject(v) || typeof v.namespace !== 'string' || typeof v.name !== 'string' || typeof v.owner !== 'string') {
    throw new StateError(KEY.lease, 'is not a Lease reference');
  }
  return v as unknown as SavedLease;
}

export function loadAccess(store: StateStore): SavedAccess | undefined {
  const v = parse(store, KEY.access);
  if (v === undefined) return undefined;
  if (!isObject(v) || typeof v.annotationPrefix !== 'string') throw new StateError(KEY.access, 'does not name the annotation prefix');
  return v as unknown as SavedAccess;
}
