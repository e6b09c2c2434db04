// Another run holding the Lease, said usefully: the nodes its holder left claimed, each with its release
// command, or that it left none (docs/preflight.md "Another run holding the Lease").
import { releaseCommand } from '../rules/commands.js';
import { fenceCapture } from '../rules/fences.js';
import type { RunContext } from './context.js';
import { HolderFencesError, LeaseHeldError } from './errors.js';

/** On a LeaseHeldError: name the nodes the holder left claimed, with their release commands (or that it left none). */
export async function withFencesOfHolder(ctx: RunContext, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (!(e instanceof LeaseHeldError)) throw e;
    const nodes = await ctx.kube.listNodes().catch(() => undefined);
    if (!nodes) throw e;
    const fenced = nodes.filter((n) => n.annotations[ctx.keys.owner] === e.holder);
    if (fenced.length === 0) throw new HolderFencesError(e, ` No node carries a claim of ${e.holder}.`);
    const lines = fenced.map((n) => {
      const annotated = n.annotations[ctx.keys.phase] ?? '(none)';
      return `- ${n.name} (phase=${annotated}${n.unschedulable ? ', cordoned' : ''}): check it, then release it: ${releaseCommand(fenceCapture(n, ctx.keys), ctx.keys, ctx.config)}`;
    });
    throw new HolderFencesError(e, `\nThe Lease is kept for node(s) that run left claimed:\n${lines.join('\n')}`);
  }
}
