// `talosctl read PATH` on one node (the client refuses several). Any regular file can be read,
// including procfs files such as the boot id; errors surface while copying the stream.
import { grpcError } from '../format.js';
import type { CommandContext } from './context.js';

export function readCommand(ctx: CommandContext): number {
  const node = ctx.req.nodes[0];
  const path = ctx.req.args[0];
  const a = ctx.reach(node);
  if (!a.ok) {
    ctx.out.fail(`error reading: ${a.error}`);
    return 1;
  }
  const proc = a.rt.procFile(path);
  if (proc !== undefined) {
    ctx.out.out(proc);
    return 0;
  }
  const entry = a.rt.listing().get(path);
  if (!entry) {
    ctx.out.fail(`error reading: ${grpcError('NotFound', `stat ${path}: no such file or directory`)}`);
    return 1;
  }
  if (entry.dir) {
    ctx.out.fail(`error reading: ${grpcError('Unknown', 'path must be a regular file')}`);
    return 1;
  }
  ctx.out.out(entry.file?.content ?? '');
  return 0;
}
