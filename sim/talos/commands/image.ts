// `talosctl image pull|remove` (client v1.13.8: one ImageService call per node, errors joined as
// `error from node <n>: …`). Pull resolves with Talos's own resolver, i.e. the MACHINE CONFIG
// credential, and skips images already present: a success here proves nothing about what
// containerd's CRI plugin loaded.
import { createHash } from 'node:crypto';
import { grpcError } from '../format.js';
import { criHost } from '../render.js';
import { effectiveAuth, sameAuth } from '../machineconfig.js';
import type { AuthFields } from '../types.js';
import type { CommandContext } from './context.js';
import { flag } from './context.js';

export interface ImageRef {
  /** as containerd names it: docker.io/library/nginx:latest */
  normalized: string;
  /** registry host as written (docker.io for Docker Hub) */
  domain: string;
  repository: string;
  /** name@sha256:… */
  pinned: string;
  digest: string;
}

/** distribution/reference normalisation (ParseDockerRef). */
export function parseImageRef(ref: string): ImageRef {
  let rest = ref;
  let digest = '';
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag = '';
  const lastColon = rest.lastIndexOf(':');
  if (lastColon > rest.lastIndexOf('/')) {
    tag = rest.slice(lastColon + 1);
    rest = rest.slice(0, lastColon);
  }
  const slash = rest.indexOf('/');
  const first = slash >= 0 ? rest.slice(0, slash) : '';
  let domain = 'docker.io';
  let path = rest;
  if (first && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    domain = first;
    path = rest.slice(slash + 1);
  }
  if (domain === 'index.docker.io') domain = 'docker.io';
  if (domain === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  const name = `${domain}/${path}`;
  if (!digest && !tag) tag = 'latest';
  const normalized = digest ? `${name}@${digest}` : `${name}:${tag}`;
  const d = digest || `sha256:${createHash('sha256').update(normalized).digest('hex')}`;
  return { normalized, domain, repository: path, pinned: `${name}@${d}`, digest: d };
}

/** The credential the registry wants for this host, looked up under both Docker Hub names. */
export function registryFor(get: (host: string) => AuthFields | undefined, domain: string): AuthFields | undefined {
  return get(domain) ?? get(criHost(domain)) ?? (domain === 'registry-1.docker.io' ? get('docker.io') : undefined);
}

export function credentialFor(creds: Record<string, AuthFields>, domain: string): AuthFields | undefined {
  for (const [host, a] of Object.entries(creds)) {
    if (criHost(host) === criHost(domain)) return a;
  }
  return undefined;
}

export function unauthorized(img: ImageRef): string {
  const host = criHost(img.domain);
  return `failed to resolve reference "${img.normalized}": failed to authorize: failed to fetch oauth token: unexpected status from GET request to https://${host}/token?scope=repository%3A${encodeURIComponent(img.repository)}%3Apull&service=${host}: 401 Unauthorized`;
}

function checkNamespace(ctx: CommandContext): boolean {
  const ns = flag(ctx, 'namespace', 'cri');
  if (!['cri', 'system', 'inmem'].includes(ns)) {
    ctx.out.fail(`unsupported namespace "${ns}"`);
    return false;
  }
  return true;
}

export function imagePullCommand(ctx: CommandContext): number {
  if (!checkNamespace(ctx)) return 1;
  const img = parseImageRef(ctx.req.args[0]);
  const pulled: string[] = [];
  const errs: string[] = [];
  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (!a.ok) {
      errs.push(`error from node ${node}: ${a.error}`);
      continue;
    }
    const rt = a.rt;
    if (!rt.node.images.has(img.normalized)) {
      const wanted = registryFor((h) => ctx.sim.registryCredential(h), img.domain);
      const have = credentialFor(effectiveAuth(rt.node.machineConfig), img.domain);
      if (wanted && !sameAuth(wanted, have)) {
        // The real node retries 401s with backoff for up to 20 minutes; the twin fails at once.
        errs.push(`error from node ${node}: ${grpcError('Unknown', `error pulling image: ${unauthorized(img)}`)}`);
        continue;
      }
      rt.node.images.add(img.normalized);
    }
    pulled.push(`${node}: pulled image ${img.pinned}\n`);
  }
  if (pulled.length) ctx.out.err(`${pulled.join('').trim()}\n`);
  if (errs.length) {
    ctx.out.fail(errs.join('\n'));
    return 1;
  }
  return 0;
}

export function imageRemoveCommand(ctx: CommandContext): number {
  if (!checkNamespace(ctx)) return 1;
  const ref = ctx.req.args[0];
  const errs: string[] = [];
  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (!a.ok) errs.push(`error from node ${node}: ${a.error}`);
    else if (!a.rt.node.images.delete(ref)) errs.push(`error from node ${node}: ${grpcError('NotFound', `image ${ref} not found`)}`);
  }
  if (errs.length) {
    ctx.out.fail(errs.join('\n'));
    return 1;
  }
  return 0;
}
