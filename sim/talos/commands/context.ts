// What a simulated talosctl command sees: the parsed request from the fake executable, a way to
// reach each node (or learn why it cannot be reached), and an output stream back to the client.
import type { NodeRuntime } from '../state.js';

export interface RunRequest {
  argv: string[];
  /** the simulated command: service, ls, read, get, patch, reboot, etcd-status, etcd-alarm-list, etcd-members, etcd-remove-member, image-pull, image-remove, version */
  command: string;
  /** e.g. `talosctl etcd status` */
  commandPath: string;
  args: string[];
  flags: Record<string, unknown>;
  changed: string[];
  /** the -n values (or the talosconfig context's nodes), verbatim */
  nodes: string[];
  patches?: Array<{ source: string; content: string }>;
  cwd?: string;
  tz?: string;
}

/** Output segments; the client resolves time placeholders and runs tabwriter on `table` segments. */
export interface Out {
  out(text: string): void;
  err(text: string): void;
  table(text: string): void;
  /** an error returned from the command: the client prints it as talosctl's Execute does (usage quirk) */
  fail(message: string): void;
}

export type Access = { ok: true; rt: NodeRuntime } | { ok: false; error: string };

export interface SimServices {
  rebootMs: number;
  /** every control-plane runtime, in the order they were added */
  controlPlanes(): NodeRuntime[];
  /** etcd's member list (the cluster's own record, not derived from the machines) */
  /** etcd's member list as `rt`'s etcd answers it (a lagging member answers an older copy) */
  etcdMembers(rt?: import('../state.js').NodeRuntime): import('../types.js').SimEtcdMember[];
  /** `etcd remove-member`: false when no such member exists */
  removeEtcdMember(id: string): boolean;
  /** the credential the simulated registry accepts for a host, if it requires one */
  registryCredential(host: string): import('../types.js').AuthFields | undefined;
}

export interface CommandContext {
  req: RunRequest;
  out: Out;
  reach(node: string): Access;
  sim: SimServices;
  /** aborted when the client went away (killed on its own timeout, signalled) */
  signal: AbortSignal;
}

export type Command = (ctx: CommandContext) => number | Promise<number>;

export const flag = <T>(ctx: CommandContext, name: string, fallback: T): T => {
  const v = ctx.req.flags[name];
  return (v === undefined ? fallback : v) as T;
};

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    // the listener goes when the timer fires: a long wait sleeps in a loop on one signal
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
