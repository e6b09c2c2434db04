// `talosctl service`, `service <id>`, `service <id> start|stop|restart` (client v1.13.8: one
// ServiceList/ServiceStart… call with `nodes` metadata; per-node failures come back as a multierror,
// a WARNING when some node answered, an error when none did).
import { agoMark, goQuote, grpcError, multiError } from '../format.js';
import type { NodeRuntime } from '../state.js';
import type { ServiceEvent, ServiceHealth } from '../types.js';
import type { CommandContext } from './context.js';

export interface ServiceView {
  id: string;
  state: string;
  health: ServiceHealth;
  events: ServiceEvent[];
}

export function services(rt: NodeRuntime): ServiceView[] {
  const c = rt.node.containerd;
  // after a reboot the node answers before machined loads cri: it is not listed at all until then
  const cri: ServiceView[] = c.listed ? [{ id: 'cri', state: c.state, health: c.health, events: c.events }] : [];
  return [...rt.otherServices, ...cri].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function healthStatus(h: ServiceHealth): string {
  if (h.unknown) return '?';
  return h.healthy ? 'OK' : 'Fail';
}

/** Reaches every node; the nodes that answered, and the multierror entries of those that did not. */
function gather(ctx: CommandContext): { ok: Array<{ node: string; rt: NodeRuntime }>; errs: string[] } {
  const ok: Array<{ node: string; rt: NodeRuntime }> = [];
  const errs: string[] = [];
  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (a.ok) ok.push({ node, rt: a.rt });
    else errs.push(`${node}: ${a.error}`);
  }
  return { ok, errs };
}

function list(ctx: CommandContext): number {
  const { ok, errs } = gather(ctx);
  if (ok.length === 0) {
    ctx.out.fail(`error listing services: ${multiError(errs)}`);
    return 1;
  }
  if (errs.length) ctx.out.err(`WARNING: ${multiError(errs)}\n`);
  let t = 'NODE\tSERVICE\tSTATE\tHEALTH\tLAST CHANGE\tLAST EVENT\n';
  for (const { node, rt } of ok) {
    for (const s of services(rt)) {
      const last = s.events[s.events.length - 1];
      t += `${node}\t${s.id}\t${s.state}\t${healthStatus(s.health)}\t${last ? agoMark(last.ts) : ''} ago\t${last ? last.msg : '<none>'}\n`;
    }
  }
  ctx.out.table(t);
  return 0;
}

function info(ctx: CommandContext, id: string): number {
  const { ok, errs } = gather(ctx);
  if (ok.length === 0) {
    ctx.out.fail(`error listing services: ${multiError(errs)}`);
    return 1;
  }
  if (errs.length) ctx.out.err(`WARNING: ${multiError(errs)}\n`);
  const found: Array<{ node: string; s: ServiceView }> = [];
  for (const { node, rt } of ok) {
    const s = services(rt).find((x) => x.id === id);
    if (s) found.push({ node, s });
  }
  if (!found.length) {
    ctx.out.fail(`service ${goQuote(id)} is not registered on any nodes`);
    return 1;
  }
  // formatters.RenderServicesInfo: one tabwriter for every node's block, events newest first.
  let t = '';
  for (const { node, s } of found) {
    t += `NODE\t${node}\nID\t${s.id}\nSTATE\t${s.state}\nHEALTH\t${healthStatus(s.health)}\n`;
    if (s.health.lastMessage !== '') t += `LAST HEALTH MESSAGE\t${s.health.lastMessage}\n`;
    let label = 'EVENTS';
    for (let i = s.events.length - 1; i >= 0; i--) {
      const e = s.events[i];
      t += `${label}\t[${e.state}]: ${e.msg} (${agoMark(e.ts)} ago)\n`;
      label = '';
    }
  }
  ctx.out.table(t);
  return 0;
}

/** system.APIStart/APIStop/APIRestart: only kubelet (start, restart) accepts API control here. */
function control(ctx: CommandContext, id: string, action: 'start' | 'stop' | 'restart'): number {
  const answers: Array<{ node: string; resp: string }> = [];
  const errs: string[] = [];
  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (!a.ok) {
      errs.push(`${node}: ${a.error}`);
      continue;
    }
    const svc = services(a.rt).find((s) => s.id === id);
    if (!svc) {
      errs.push(`${node}: ${grpcError('Unknown', `service ${goQuote(id)} not defined`)}`);
      continue;
    }
    const running = svc.state === 'Running';
    let effective: string = action;
    if (action === 'restart' && !running) effective = 'start';
    if (effective === 'start' && running) {
      answers.push({ node, resp: `Service ${goQuote(id)} started` });
      continue;
    }
    if (effective === 'stop' && !running) {
      answers.push({ node, resp: `Service ${goQuote(id)} stopped` });
      continue;
    }
    const allowed = id === 'kubelet' && (effective === 'start' || effective === 'restart');
    if (!allowed) {
      errs.push(`${node}: ${grpcError('Unknown', `service ${goQuote(id)} doesn't support ${effective} operation via API`)}`);
      continue;
    }
    answers.push({ node, resp: `Service ${goQuote(id)} ${action === 'restart' ? 'restarted' : 'started'}` });
  }
  if (!answers.length) {
    // restart and stop share start's wrapping text in talosctl ≤1.13
    ctx.out.fail(`error starting service: ${multiError(errs)}`);
    return 1;
  }
  if (errs.length) ctx.out.err(`WARNING: ${multiError(errs)}\n`);
  ctx.out.table(`NODE\tRESPONSE\n${answers.map((a) => `${a.node}\t${a.resp}\n`).join('')}`);
  return 0;
}

export function serviceCommand(ctx: CommandContext): number {
  const [id = '', action = 'status'] = ctx.req.args;
  if (!['status', 'start', 'stop', 'restart'].includes(action)) {
    ctx.out.fail(`unsupported service action: ${goQuote(action)}`);
    return 1;
  }
  if (action === 'status') return id ? info(ctx, id) : list(ctx);
  return control(ctx, id, action as 'start' | 'stop' | 'restart');
}
