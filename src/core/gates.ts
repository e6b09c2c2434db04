// The health gates' inputs (docs/gates.md): `health-gates` (a YAML list of gates over any kind, each a
// CEL expression that every selected object must satisfy), `storage-gate` (the built-in storage gates,
// on by default) and `gate-timeout`. Pure: parsed and checked here, before anything runs; whether a
// kind is served is asked of the cluster later (src/pipeline/gates.ts), still before any write. The
// expressions are compiled by checkGateExpressions, which loads the CEL library (src/core/cel.ts) only
// when a gate names one.
import { parse as parseYaml } from 'yaml';
import { InputError } from './errors.js';
import { parseLabelSelector } from './labelSelector.js';
import type { GateSpec } from './model/gates.js';

export interface GatesConfig {
  /** the `health-gates` input, each checked (fields, selector, CEL compiles) */
  healthGates: GateSpec[];
  /** `storage-gate`: the built-in storage gates (src/rules/gates.ts STORAGE_GATES) */
  storageGate: boolean;
  /** `gate-timeout`: how long a gate may stay false before new starts stop */
  gateTimeoutMs: number;
}

/** The default `gate-timeout`. */
export const DEFAULT_GATE_TIMEOUT = '15m';

const FIELDS = new Set(['name', 'kind', 'group', 'version', 'namespace', 'selector', 'expression']);
// a Kind is a CamelCase identifier; a group a DNS subdomain; a version as Kubernetes spells them (v1, v1beta2)
const KIND = /^[A-Z][A-Za-z0-9]*$/;
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VERSION = /^v[0-9]+((alpha|beta)[0-9]+)?$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function readGatesInputs(
  str: (name: string) => string,
  booleans: ReadonlyMap<string, boolean>,
  duration: (input: string, text: string) => number,
): GatesConfig {
  const storageGate = booleans.get(str('storage-gate') || 'true');
  if (storageGate === undefined) throw new InputError('storage-gate', `"${str('storage-gate')}" is not true or false`);
  const timeoutText = str('gate-timeout') || DEFAULT_GATE_TIMEOUT;
  const gateTimeoutMs = duration('gate-timeout', timeoutText);
  if (gateTimeoutMs <= 0) throw new InputError('gate-timeout', `"${timeoutText}" must be longer than zero (e.g. 15m)`);
  return { healthGates: parseHealthGates(str('health-gates')), storageGate, gateTimeoutMs };
}

/** `health-gates`: a YAML list of gates; every error names the input and the gate. */
export function parseHealthGates(text: string): GateSpec[] {
  if (!text.trim()) return [];
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new InputError('health-gates', `is not YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!Array.isArray(doc)) throw new InputError('health-gates', 'must be a YAML list of gates (each with name, kind, group, expression)');
  const names = new Set<string>();
  return doc.map((item, i) => {
    const gate = oneGate(item, i);
    if (names.has(gate.name)) throw new InputError('health-gates', `two gates are named "${gate.name}"`);
    names.add(gate.name);
    return gate;
  });
}

function oneGate(item: unknown, i: number): GateSpec {
  const at = `gate ${i + 1}`;
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    throw new InputError('health-gates', `${at} is not a mapping (name, kind, group, expression)`);
  }
  const o = item as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!FIELDS.has(k)) throw new InputError('health-gates', `${at} has an unknown field "${k}" (known: ${[...FIELDS].join(', ')})`);
  }
  const field = (k: string, required: boolean): string | undefined => {
    const v = o[k];
    if (v === undefined || v === null) {
      if (required) throw new InputError('health-gates', `${at} has no "${k}"`);
      return undefined;
    }
    if (typeof v !== 'string') throw new InputError('health-gates', `${at}: "${k}" must be a string`);
    return v.trim();
  };
  const name = field('name', true)!;
  if (!name || name.startsWith('storage/')) {
    throw new InputError(
      'health-gates',
      `${at}: name ${JSON.stringify(name)} must be non-empty and not start with storage/ (the built-in gates' names)`,
    );
  }
  const named = `gate "${name}"`;
  const kind = field('kind', true)!;
  if (!KIND.test(kind)) throw new InputError('health-gates', `${named}: kind "${kind}" is not a Kind (e.g. Volume, PersistentVolumeClaim)`);
  // `group` is required so that a core kind is said on purpose (empty), never a forgotten field
  const group = field('group', true)!;
  if (group && !GROUP.test(group))
    throw new InputError('health-gates', `${named}: group "${group}" is not an API group (e.g. longhorn.io; empty for core)`);
  const version = field('version', false) || undefined;
  if (version !== undefined && !VERSION.test(version))
    throw new InputError('health-gates', `${named}: version "${version}" is not an API version (e.g. v1, v1beta2)`);
  const namespace = field('namespace', false) || undefined;
  if (namespace !== undefined && !NAMESPACE.test(namespace))
    throw new InputError('health-gates', `${named}: namespace "${namespace}" is not a namespace name`);
  const selector = field('selector', false) || undefined;
  if (selector !== undefined) {
    try {
      parseLabelSelector(selector);
    } catch (e) {
      throw new InputError(
        'health-gates',
        `${named}: selector ${JSON.stringify(selector)} is not a label selector: ${(e as Error).message}`,
      );
    }
  }
  const expression = field('expression', true)!;
  if (!expression) throw new InputError('health-gates', `${named}: expression is empty`);
  return {
    name,
    kind,
    group,
    ...(version ? { version } : {}),
    ...(namespace ? { namespace } : {}),
    ...(selector ? { selector } : {}),
    expression,
  };
}

/**
 * Every expression of `health-gates` compiled, before anything runs: one that does not compile is an
 * InputError naming the gate and showing the compiler's message. Loads the CEL library only when there
 * is a gate (src/core/cel.ts says why).
 */
export async function checkGateExpressions(gates: readonly GateSpec[]): Promise<void> {
  if (!gates.some((g) => g.expression !== undefined)) return;
  const { celCompileError } = await import('./cel.js');
  for (const g of gates) {
    const error = g.expression === undefined ? undefined : celCompileError(g.expression);
    if (error !== undefined) throw new InputError('health-gates', `gate "${g.name}": expression does not compile: ${error}`);
  }
}
