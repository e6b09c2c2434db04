// `talosctl etcd status`, `etcd alarm list`, `etcd members` and `etcd remove-member` (client v1.13.8
// etcd.go): one call with `nodes` metadata; the header is printed with the first answering node only;
// workers answer Unimplemented.
import { grpcError, humanizeBytes, multiError } from '../format.js';
import type { NodeRuntime } from '../state.js';
import type { CommandContext } from './context.js';

const DB_SIZE = 20_000_000;
const DB_IN_USE = 9_798_000;
// raft counters advance with real time so that successive calls differ as they would on a live member
const RAFT_EPOCH_MS = Date.UTC(2026, 0, 1);

function etcdVersions(rt: NodeRuntime): { protocol: string; storage: string } {
  return rt.node.version === '1.14' ? { protocol: '3.7.1', storage: '3.7.0' } : { protocol: '3.6.12', storage: '3.6.0' };
}

type Answer = { node: string; rt: NodeRuntime };

function gather(ctx: CommandContext, api: string, failure: string): { ok: Answer[]; errs: string[] } {
  const ok: Answer[] = [];
  const errs: string[] = [];
  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (!a.ok) errs.push(`${node}: ${a.error}`);
    else if (!a.rt.node.etcd) errs.push(`${node}: ${grpcError('Unimplemented', `${api} is only available on control plane nodes`)}`);
    else if (!a.rt.node.etcd.healthy) errs.push(`${node}: ${grpcError('Unknown', `${failure}: context deadline exceeded`)}`);
    else ok.push({ node, rt: a.rt });
  }
  return { ok, errs };
}

function leaderId(ctx: CommandContext): string {
  const cps = ctx.sim.controlPlanes().filter((rt) => rt.node.up && rt.node.etcd?.healthy && !rt.node.etcd.learner);
  return cps[0]?.node.etcd?.memberId ?? '0000000000000000';
}

export function etcdStatusCommand(ctx: CommandContext): number {
  const { ok, errs } = gather(ctx, 'etcd status', 'failed to query etcd status');
  if (!ok.length) {
    ctx.out.fail(`error getting status: ${multiError(errs)}`);
    return 1;
  }
  if (errs.length) ctx.out.err(`WARNING: ${multiError(errs)}\n`);
  const leader = leaderId(ctx);
  const raftIndex = 100_000 + Math.floor((Date.now() - RAFT_EPOCH_MS) / 700);
  const ratio = ((DB_IN_USE / DB_SIZE) * 100).toFixed(2);
  let t = 'NODE\tMEMBER\tDB SIZE\tIN USE\tLEADER\tRAFT INDEX\tRAFT TERM\tRAFT APPLIED INDEX\tLEARNER\tPROTOCOL\tSTORAGE\tERRORS\n';
  for (const { node, rt } of ok) {
    const e = rt.node.etcd;
    if (!e) continue;
    const v = etcdVersions(rt);
    t += `${node}\t${e.memberId}\t${humanizeBytes(DB_SIZE)}\t${humanizeBytes(DB_IN_USE)} (${ratio}%)\t${leader}\t${raftIndex}\t3\t${raftIndex}\t${e.learner}\t${v.protocol}\t${v.storage}\t${e.errors}\n`;
  }
  ctx.out.table(t);
  return 0;
}

export function etcdAlarmListCommand(ctx: CommandContext): number {
  const { ok, errs } = gather(ctx, 'etcd alarm list', 'failed to list etcd alarms');
  if (!ok.length) {
    ctx.out.fail(`error getting alarms: ${multiError(errs)}`);
    return 1;
  }
  if (errs.length) ctx.out.err(`WARNING: ${multiError(errs)}\n`);
  // AlarmList is cluster-wide: every member answers with the alarms of all members.
  const alarms: Array<{ member: string; alarm: string }> = [];
  for (const rt of ctx.sim.controlPlanes()) {
    for (const alarm of rt.node.etcd?.alarms ?? []) alarms.push({ member: rt.node.etcd?.memberId ?? '', alarm });
  }
  let t = '';
  ok.forEach(({ node }, i) => {
    alarms.forEach((a, j) => {
      // displayAlarms prints the header only when the first message's first alarm is printed
      if (i === 0 && j === 0) t += 'NODE\tMEMBER\tALARM\n';
      t += `${node}\t${a.member}\t${a.alarm}\n`;
    });
  });
  if (t) ctx.out.table(t);
  return 0;
}

/**
 * `etcd members`: each node answers etcd's member list from its own etcd (QueryLocal, server
 * v1alpha1_server.go EtcdMemberList), which needs that etcd up. The list is the cluster's own record
 * (SimServices.etcdMembers), not the machines: orphans, members added by hand and learners show here.
 */
export function etcdMembersCommand(ctx: CommandContext): number {
  const ok: string[] = [];
  const answering: Array<import('../state.js').NodeRuntime> = [];
  const errs: string[] = [];
  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (!a.ok) errs.push(`${node}: ${a.error}`);
    else if (!a.rt.node.etcd) errs.push(`${node}: ${grpcError('Unimplemented', 'member list is only available on control plane nodes')}`);
    // the local client's dial gives up after its 5 s DialTimeout (internal/pkg/etcd/etcd.go NewClient)
    else if (!a.rt.node.etcd.healthy)
      errs.push(`${node}: ${grpcError('Unknown', 'error building etcd client: context deadline exceeded')}`);
    else {
      ok.push(node);
      answering.push(a.rt);
    }
  }
  if (!ok.length) {
    ctx.out.fail(`error getting members: ${multiError(errs)}`);
    return 1;
  }
  if (errs.length) ctx.out.err(`WARNING: ${multiError(errs)}\n`);
  let t = '';
  ok.forEach((node, i) => {
    // each node answers its own etcd's copy (QueryLocal): a member lagging a change holds an older one
    ctx.sim.etcdMembers(answering[i]).forEach((m, j) => {
      // the header comes with the first member of the first answering node
      if (i === 0 && j === 0) t += 'NODE\tID\tHOSTNAME\tPEER URLS\tCLIENT URLS\tLEARNER\n';
      t += `${node}\t${m.id}\t${m.name}\t${m.peerUrls.join(',')}\t${m.clientUrls.join(',')}\t${m.learner}\n`;
    });
  });
  if (t) ctx.out.table(t);
  return 0;
}

/**
 * `etcd remove-member <id>`: the id is hex (etcdresource.ParseMemberID, talosctl ≥ 1.7); the node asks
 * etcd through every control plane (EtcdRemoveMemberByID), so its own etcd need not be up. Prints
 * nothing on success.
 */
export function etcdRemoveMemberCommand(ctx: CommandContext): number {
  const arg = ctx.req.args[0] ?? '';
  if (!/^[0-9a-fA-F]{1,16}$/.test(arg)) {
    ctx.out.fail(
      `error parsing member ID: error parsing etcd member id: strconv.ParseUint: parsing ${JSON.stringify(arg)}: invalid syntax`,
    );
    return 1;
  }
  const id = BigInt(`0x${arg}`);
  const hex = id.toString(16).padStart(16, '0');
  const errs: string[] = [];
  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (!a.ok) errs.push(`${node}: ${a.error}`);
    else if (!a.rt.node.etcd)
      errs.push(`${node}: ${grpcError('Unimplemented', 'etcd remove member is only available on control plane nodes')}`);
    else if (!ctx.sim.etcdMembers().some((m) => m.id === hex))
      errs.push(`${node}: ${grpcError('NotFound', `failed to remove member ${id}: etcdserver: member not found`)}`);
    else ctx.sim.removeEtcdMember(hex);
  }
  if (errs.length) {
    ctx.out.fail(multiError(errs));
    return 1;
  }
  return 0;
}
