// The Talos API's answers read for the API client (apiClient.ts): a COSI spec from its proto or YAML
// form, a google.protobuf.Timestamp as an exact instant, scalar fields, and per node (and path) a
// reading or the classified failure. No I/O.
import { parse as parseYaml } from 'yaml';
import { reorder, unique } from '../../../core/async.js';
import { ToolError, errorMessage, type FailureCause } from '../../../core/errors.js';
import type { Instant, Reading } from '../../../core/model/readings.js';
import { messageType, toPlain } from './proto.js';
import { scalarText } from '../../../core/text.js';

export type Plain = Record<string, unknown>;

/** `proto_spec` when the server filled it (field names as in the .proto), else the `yaml_spec` text. */
export function decodeSpec(node: string, specType: string, spec: Plain): Plain {
  const bytes = spec.proto_spec as Buffer | undefined;
  if (bytes && bytes.length > 0) {
    try {
      return toPlain(messageType(specType), bytes);
    } catch (e) {
      throw unparseable('/cosi.resource.State/Get', node, `${specType}: ${errorMessage(e)}`);
    }
  }
  const yaml = typeof spec.yaml_spec === 'string' ? spec.yaml_spec : '';
  let doc: unknown;
  try {
    doc = parseYaml(yaml);
  } catch {
    throw unparseable('/cosi.resource.State/Get', node, `${specType}: yaml_spec is not valid YAML`);
  }
  const o = (doc ?? {}) as Plain;
  // yaml_spec keys are the Go yaml tags (camelCase): map the ones we read to the .proto names
  return { ...o, spec_version: o.specVersion, mount_namespace: o.mountNamespace, sync_disabled: o.syncDisabled };
}

/** A google.protobuf.Timestamp as an exact Instant (milliseconds with the nanoseconds as a fraction). */
export function timestamp(ts: Plain | undefined): Instant | undefined {
  if (!ts) return undefined;
  const seconds = Number(ts.seconds ?? 0);
  const nanos = Number(ts.nanos ?? 0);
  if (seconds === 0 && nanos === 0) return undefined; // unset
  const ms = seconds * 1000 + nanos / 1e6;
  return { earliestMs: ms, latestMs: ms, via: 'api', text: `${rfc3339Seconds(seconds).slice(0, -1)}.${String(nanos).padStart(9, '0')}Z` };
}

/** An instant the evidence cannot do without: its absence makes the answer unparseable (→ reboot). */
export function required(i: Instant | undefined, rpc: string, node: string, why: string): Instant {
  if (!i) throw unparseable(rpc, node, why);
  return i;
}

export function rfc3339Seconds(s: number): string {
  return `${new Date(s * 1000).toISOString().slice(0, 19)}Z`;
}

export function memberHex(v: unknown): string {
  return BigInt(scalarText(v) || '0')
    .toString(16)
    .padStart(16, '0');
}

export function first(res: Plain, key: string): Plain | undefined {
  return ((res[key] ?? []) as Plain[])[0];
}

export function unparseable(rpc: string, node: string, why: string): ToolError {
  return refused(rpc, node, 'unparseable', `unparseable answer: ${why}`);
}

/** The node answered, but not with a reading we can use. */
export function refused(rpc: string, node: string, kind: FailureCause, why: string): ToolError {
  return new ToolError({
    tool: 'talos-api',
    command: `${rpc} (node ${node})`,
    kind,
    exitCode: null,
    stderr: why,
    node,
    message: `${rpc} for ${node}: ${why}`,
  });
}

/**
 * A classified failure becomes the node's failed reading; anything else propagates: a defect, or a
 * ServerIdentityError (the server's certificate was refused: nothing it says is a reading).
 */
export function failed(e: unknown): { ok: false; error: string } {
  if (e instanceof ToolError) return { ok: false, error: errorMessage(e) };
  throw e;
}

export async function perNode<T>(addresses: string[], read: (node: string) => Promise<T>): Promise<Map<string, Reading<T>>> {
  const out = new Map<string, Reading<T>>();
  await Promise.all(
    unique(addresses).map(async (node) => {
      try {
        out.set(node, { ok: true, value: await read(node) });
      } catch (e) {
        out.set(node, failed(e));
      }
    }),
  );
  return reorder(out, addresses);
}

export async function perNodePath<T>(
  addresses: string[],
  paths: string[],
  read: (node: string, path: string) => Promise<T>,
): Promise<Map<string, Map<string, Reading<T>>>> {
  const nodes = unique(addresses);
  const ps = unique(paths);
  const out = new Map(nodes.map((n) => [n, new Map<string, Reading<T>>()]));
  const results = await Promise.all(
    nodes.flatMap((n) =>
      ps.map(async (p): Promise<[string, string, Reading<T>]> => {
        try {
          return [n, p, { ok: true, value: await read(n, p) }];
        } catch (e) {
          return [n, p, failed(e)];
        }
      }),
    ),
  );
  for (const [n, p, r] of results) out.get(n)!.set(p, r);
  return out;
}
