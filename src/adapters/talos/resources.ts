// What both Talos read paths agree on, whether the answer comes printed by talosctl
// (src/adapters/talos/cli/talosctl.ts, src/adapters/talos/cli/parse/cosiYaml.ts) or over the API
// (src/adapters/talos/api/apiClient.ts): the COSI resources the evidence reads, the EtcFileStatus id of a
// file under /etc, which of a status's two stamps is its last write, and the server's words for a
// missing file and for a resource type the node does not know. Facts only: no transport, no format.
import { posix } from 'node:path';
import type { Instant } from '../../core/model/readings.js';

/**
 * The COSI resources read (docs/talos-api.md, "Resources read over COSI State"): the full type, its
 * namespace, the name `talosctl get` takes, the spec message the API sends, and the id of a singleton.
 */
export const COSI = {
  /** v1.13+: `spec.pid` is the host PID, `created` is recorded right after the launch */
  servicePid: {
    type: 'ServicePIDs.runtime.talos.dev',
    namespace: 'runtime',
    cliName: 'servicepids',
    spec: 'talos.resource.definitions.runtime.ServicePIDSpec',
    id: 'cri',
  },
  /** one per rendered file under /etc, id from etcFileId; updated after the controller wrote the file */
  etcFileStatus: {
    type: 'EtcFileStatuses.files.talos.dev',
    namespace: 'files',
    cliName: 'etcfilestatuses',
    spec: 'talos.resource.definitions.files.EtcFileStatusSpec',
  },
  /** `epoch` counts clock jumps > 15 min since boot */
  timeStatus: {
    type: 'TimeStatuses.v1alpha1.talos.dev',
    namespace: 'runtime',
    cliName: 'timestatuses',
    spec: 'talos.resource.definitions.time.StatusSpec',
    id: 'node',
  },
} as const;

/** `/etc/cri/conf.d/cri.toml` → `cri/conf.d/cri.toml` (EtcFileStatus ids are relative to /etc); undefined outside /etc. */
export function etcFileId(path: string): string | undefined {
  const norm = posix.normalize(path);
  return norm.startsWith('/etc/') && norm.length > 5 ? norm.slice(5) : undefined;
}

/**
 * When a status resource was last recorded: the later of its `created` and `updated`. A status only
 * ever created has `updated` a hair before `created` (the constructor stamps it first), so neither
 * stamp alone is the write. Both bounds are the later ones, so the instant never begins before either
 * stamp. Undefined only when both are absent.
 */
export function recordedAt(created: Instant | undefined, updated: Instant | undefined): Instant | undefined {
  if (!created) return updated;
  if (!updated) return created;
  const later = updated.latestMs >= created.latestMs ? updated : created;
  return { ...later, earliestMs: Math.max(created.earliestMs, updated.earliestMs) };
}

/**
 * `lstat <path>: no such file or directory` (a listing's root) or `stat <path>: …` (a read): the path
 * is absent. The server's own text, printed by talosctl or carried in the gRPC status details.
 */
export function isMissingFile(text: string): boolean {
  return /\bl?stat [^\n]*: no such file or directory/.test(text);
}

/**
 * The node does not know the resource type at all (Talos older than the type), from a gRPC error as
 * text, `rpc error: code = <Code> desc = <details>` (talosctl prints it so; the API adapter keeps it so).
 * talosctl's kind resolution on the first node answers NotFound `resource "servicepids" is not
 * registered`; a node without the type answers through its access filter, PermissionDenied
 * `resource type "ServicePIDs.runtime.talos.dev" is not supported` (talos internal/app/resources/access.go).
 * Any other NotFound or PermissionDenied is a failure.
 */
export function isUnregisteredType(rpcError: string): boolean {
  return (
    /code = NotFound desc = resource "[^"]+" is not registered/.test(rpcError) ||
    /code = PermissionDenied desc = resource type "[^"]+" is not supported/.test(rpcError)
  );
}

/** the kernel's boot id, as talosctl's action tracker reads it (both paths read it before a reboot) */
export const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';
