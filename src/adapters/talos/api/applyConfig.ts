// The credential patch through MachineService.ApplyConfiguration, as `talosctl patch machineconfig
// --mode=no-reboot` does it, and no more: read the active MachineConfig, take its multi-document
// body the way talosctl does (two forms, docs/talos-api.md "Applying the credential"), change
// only the credential documents (src/adapters/talos/machineConfig/patch.ts), send nothing when nothing changes,
// send NO_REBOOT (never AUTO: a ≤ 1.13 node may reboot; never REBOOT: 1.14 refuses it), retry the
// node's "another apply configuration is already in progress", then re-read and check the change
// landed, byte for byte (Talos keeps the bytes an apply sent; there is no compare-and-swap on a
// machine config, so any other difference is another writer's). Plan mode never calls
// ApplyConfiguration, not even as a dry run (docs/plan.md): its preview is the action's own change
// list, checked locally (src/adapters/talos/machineConfig/verify.ts).
// The config read back carries every credential of the cluster: its secrets, as Talos defines them
// (src/adapters/talos/machineConfig/secrets.ts), are registered for masking before anything could quote them, and no
// message here carries its text.
import { parse as parseYaml } from 'yaml';
import { ToolError, errorMessage } from '../../../core/errors.js';
import type { ConfigPreview } from '../../../core/model/record.js';
import { configSecrets } from '../machineConfig/secrets.js';
import type { CredentialChange } from '../../../core/authPatch.js';
import { MachineConfigError } from '../machineConfig/documents.js';
import { pendingChanges } from '../machineConfig/plan.js';
import { readBackDrift } from '../machineConfig/verify.js';
import { applyCredentialChanges, type PatchedConfig } from '../machineConfig/patch.js';
import { type TalosConnection, grpcDetailsOf } from './connection.js';
import { RPC } from './proto.js';

type Plain = Record<string, unknown>;

export const MACHINE_CONFIG = { type: 'MachineConfigs.config.talos.dev', namespace: 'config', id: 'v1alpha1' } as const;
/** machined's text for a concurrent apply (v1alpha1_server.go ApplyConfiguration, FailedPrecondition) */
export const APPLY_IN_PROGRESS = 'another apply configuration is already in progress';

export interface ApplyOptions {
  /** a line for the node's log (warnings, what was sent) */
  log: (line: string) => void;
  /** registers a secret to mask wherever text leaves the action (the shell's masking port) */
  secret: (value: string) => void;
  /** attempts when another apply is in progress; default 5 */
  attempts?: number;
  /** pause before the n-th retry, ms; default 500·n */
  backoffMs?: (n: number) => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The multi-document body of a MachineConfig resource, as talosctl's extractMachineConfigBody reads
 * it: with annotations (Talos ≥ 1.5 sets `talos.dev/yaml-spec`) the spec's YAML is one string scalar
 * holding the body; without (older nodes) the spec's YAML is the body itself.
 */
export function machineConfigBody(resource: Plain): string {
  const md = (resource.metadata ?? {}) as Plain;
  const spec = (resource.spec ?? {}) as Plain;
  const yaml = typeof spec.yaml_spec === 'string' ? spec.yaml_spec : '';
  const annotations = (md.annotations ?? {}) as Record<string, string>;
  if (Object.keys(annotations).length === 0) return yaml;
  let body: unknown;
  try {
    body = parseYaml(yaml);
  } catch (e) {
    const pos = (e as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
    throw new MachineConfigError(
      `the MachineConfig spec is not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`,
      'v1alpha1',
    );
  }
  if (typeof body !== 'string')
    throw new MachineConfigError('the MachineConfig spec is not one YAML string holding the config', 'v1alpha1');
  return body;
}

/** The node's active config body (COSI Get of MachineConfig), its secrets registered first. */
export async function readConfig(conn: TalosConnection, node: string, opts: Pick<ApplyOptions, 'secret'>): Promise<string> {
  const res = await conn.unary('cosiGet', node, { ...MACHINE_CONFIG });
  const resource = (res.resource ?? {}) as Plain;
  const md = (resource.metadata ?? {}) as Plain;
  if (md.type !== MACHINE_CONFIG.type || md.id !== MACHINE_CONFIG.id)
    throw configError(node, `the answer is not ${MACHINE_CONFIG.type} ${MACHINE_CONFIG.id}`, 'unparseable');
  let body: string;
  try {
    body = machineConfigBody(resource);
    for (const s of configSecrets(body)) opts.secret(s);
  } catch (e) {
    if (e instanceof MachineConfigError) throw configError(node, e.message, 'unparseable');
    throw e;
  }
  return body;
}

/**
 * Reads the node's active config and applies the credential changes to it, sending nothing: what
 * applyCredential sends and previewCredential shows, checked locally (verifyPatched). Every secret of
 * both texts is registered first.
 */
export async function patchedConfig(
  conn: TalosConnection,
  node: string,
  changes: CredentialChange[],
  opts: Pick<ApplyOptions, 'secret'>,
): Promise<PatchedConfig> {
  const before = await readConfig(conn, node, opts);
  let patched;
  try {
    patched = applyCredentialChanges(before, changes);
  } catch (e) {
    if (e instanceof MachineConfigError) throw configError(node, e.message, 'invalid');
    throw e;
  }
  // the patch's own values too (the action registered them from the inputs; this client may be used alone)
  if (patched.text !== undefined) for (const s of configSecrets(patched.text)) opts.secret(s);
  return patched;
}

/**
 * What the apply would change on one node, from the action's own change list: the places written,
 * field by field, and the checks made on the patched text, never a value nor machined's text. Only
 * the active config is read (COSI Get): no ApplyConfiguration at all, because even a dry run takes
 * the node's apply lock and cancels a pending `--mode=try` rollback (v1alpha1_server.go, docs/plan.md).
 */
export async function previewCredential(
  conn: TalosConnection,
  node: string,
  changes: CredentialChange[],
  opts: Pick<ApplyOptions, 'secret'>,
): Promise<ConfigPreview> {
  const patched = await patchedConfig(conn, node, changes, opts);
  return { shown: true, edits: patched.edits, checks: patched.checks };
}

/** Applies the credential changes to one node; resolves once the node's config carries them. */
export async function applyCredential(conn: TalosConnection, node: string, changes: CredentialChange[], opts: ApplyOptions): Promise<void> {
  const patched = await patchedConfig(conn, node, changes, opts);
  if (patched.text === undefined) {
    opts.log(`${node}: the machine config already carries the credential: ApplyConfiguration not sent`);
    return;
  }
  const documents = patched.changed.join(', ');
  const attempts = Math.max(1, opts.attempts ?? 5);
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let n = 1; ; n++) {
    try {
      const res = await conn.unary('applyConfiguration', node, { data: Buffer.from(patched.text), mode: 'NO_REBOOT', dry_run: false });
      for (const m of (res.messages ?? []) as Plain[]) {
        for (const w of (m.warnings ?? []) as string[]) opts.log(`${node}: ApplyConfiguration warning: ${w}`);
        opts.log(
          `${node}: ApplyConfiguration (${String(m.mode)}) changed ${documents}: ${typeof m.mode_details === 'string' ? m.mode_details : ''}`,
        );
      }
      break;
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      const details = grpcDetailsOf(e);
      if (details.includes(APPLY_IN_PROGRESS) && n < attempts) {
        const wait = opts.backoffMs?.(n) ?? 500 * n;
        opts.log(`${node}: ${APPLY_IN_PROGRESS}: retrying in ${wait} ms (attempt ${n + 1} of ${attempts})`);
        await sleep(wait);
        continue;
      }
      if (/code = InvalidArgument/.test(e.stderr)) {
        throw configError(node, `the node refused the machine config changing ${documents} (InvalidArgument): ${details}`, 'invalid');
      }
      throw e;
    }
  }
  const after = await readConfig(conn, node, opts);
  let missing: string[];
  try {
    missing = pendingChanges(after, changes);
  } catch (e) {
    throw configError(node, `re-reading after ApplyConfiguration: ${errorMessage(e)}`, 'unparseable');
  }
  if (missing.length > 0) {
    throw configError(
      node,
      `ApplyConfiguration answered OK but the machine config read back does not carry ${missing.join(', ')} (another writer, e.g. Omni, changed it?)`,
      'conflict',
    );
  }
  // Talos keeps the bytes sent: anything else that differs was changed by another writer since
  const drift = readBackDrift(patched.text, after);
  if (drift.length > 0) {
    throw configError(
      node,
      `the machine config read back after ApplyConfiguration differs from the one sent in ${drift.join(', ')}; the apply changed only ${documents} (another writer, e.g. Omni, changed the rest?)`,
      'conflict',
    );
  }
}

function configError(node: string, why: string, kind: 'invalid' | 'unparseable' | 'conflict'): ToolError {
  return new ToolError({
    tool: 'talos-api',
    command: `${RPC.applyConfiguration.path} (node ${node})`,
    kind,
    exitCode: null,
    stderr: why,
    node,
    message: `applying the credential to the machine config of ${node}: ${why}`,
  });
}
