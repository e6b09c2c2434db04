// The server half of `talosctl version` (the client block is printed by the executable before it
// connects, as the real client does).
import { multiError } from '../format.js';
import type { TalosVersion } from '../types.js';
import type { CommandContext } from './context.js';
import { flag } from './context.js';

export const SERVER_BUILDS: Record<TalosVersion, { tag: string; sha: string; go: string }> = {
  '1.13': { tag: 'v1.13.8', sha: '3de49322', go: 'go1.26.5' },
  // No final v1.14.0 tag was examined (docs/talos-facts.md#t17-versions-examined); the rc.1 commit stands in.
  '1.14': { tag: 'v1.14.0', sha: '71b7d37c', go: 'go1.26.5' },
};

export function versionCommand(ctx: CommandContext): number {
  const ok: Array<{ node: string; version: TalosVersion }> = [];
  const errs: string[] = [];
  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (a.ok) ok.push({ node, version: a.rt.node.version });
    else errs.push(`${node}: ${a.error}`);
  }
  if (!ok.length) {
    ctx.out.fail(`error getting version: ${multiError(errs)}`);
    return 1;
  }
  if (errs.length) ctx.out.err(`WARNING: ${multiError(errs)}\n`);
  const json = flag(ctx, 'json', false);
  let text = '';
  for (const { node, version } of ok) {
    const b = SERVER_BUILDS[version];
    if (json) {
      text += `${JSON.stringify({ metadata: { hostname: node }, version: { tag: b.tag, sha: b.sha, goVersion: b.go, os: 'linux', arch: 'amd64' }, features: { rbac: true } })}\n`;
      continue;
    }
    text += `\tNODE:        ${node}\n\tTag:         ${b.tag}\n\tSHA:         ${b.sha}\n\tBuilt:       \n\tGo version:  ${b.go}\n\tOS/Arch:     linux/amd64\n\tEnabled:     RBAC\n`;
  }
  ctx.out.out(text);
  return 0;
}
