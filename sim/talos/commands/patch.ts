// `talosctl patch machineconfig --mode=… --patch-file F` (client v1.13.8 patch.go): nodes are patched
// one after another; for each, the active MachineConfig is fetched, patched locally, sent with
// ApplyConfiguration, and only then compared: an unchanged config prints "Apply was skipped" and
// succeeds whatever the apply returned. Everything it prints goes to stderr.
import { goDurationSeconds, grpcError, multiError } from '../format.js';
import { immediateRefusal, loadPatch, sameWithoutComments, validate } from '../machineconfig.js';
import type { Patch } from '../machineconfig.js';
import type { MachineConfigState } from '../types.js';
import type { CommandContext } from './context.js';
import { configDiff } from '../configDiff.js';
import { flag } from './context.js';
import { resolveType } from './get.js';

const MC_TYPE = 'MachineConfigs.config.talos.dev';

export function patchCommand(ctx: CommandContext): number {
  const patches: Patch[] = [];
  for (const p of ctx.req.patches ?? []) {
    try {
      patches.push(loadPatch(p.content));
    } catch (e) {
      ctx.out.fail((e as Error).message);
      return 1;
    }
  }
  const requested = flag<string>(ctx, 'mode', 'auto');
  const dryRun = flag(ctx, 'dry-run', false);
  const [typeName, id] = ctx.req.args;

  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (!a.ok) {
      ctx.out.fail(a.error);
      return 1;
    }
    const def = resolveType(typeName);
    if (!def) {
      ctx.out.fail(grpcError('NotFound', `resource "${typeName}" is not registered`));
      return 1;
    }
    if (def.type !== MC_TYPE) {
      ctx.out.fail(`${node}: unsupported resource type: ${def.type}`);
      return 1;
    }
    if (id !== undefined && id !== 'v1alpha1') {
      ctx.out.fail(`${node}: ${grpcError('NotFound', `resource ${MC_TYPE}(config/${id}@undefined) doesn't exist`)}`);
      return 1;
    }
    const rt = a.rt;
    const before = rt.node.machineConfig;
    let next: MachineConfigState;
    try {
      next = rt.patch(patches);
    } catch (e) {
      ctx.out.fail((e as Error).message);
      return 1;
    }

    // ApplyConfiguration (server side of v1.13.8 / v1.14 ApplyConfiguration): a call in any other
    // mode than try, a dry run included, first cancels a pending try-mode rollback
    if (requested !== 'try') rt.cancelRollback();
    let applyErr: string | undefined;
    let details = '';
    const invalid = validate(next);
    const refusal = immediateRefusal(before, next);
    // auto: a change that cannot be applied at once is applied with a reboot
    const mode = requested === 'auto' && refusal ? 'reboot' : requested;
    if (invalid) applyErr = grpcError('InvalidArgument', invalid);
    else if (refusal && (mode === 'no-reboot' || mode === 'try')) applyErr = grpcError('InvalidArgument', refusal);
    else if (mode === 'reboot' && rt.node.version === '1.14') {
      applyErr = grpcError('Unimplemented', 'the REBOOT mode is not supported, please use AUTO or NO_REBOOT modes instead');
    } else {
      details =
        {
          auto: 'Applied configuration without a reboot',
          'no-reboot': 'Applied configuration without a reboot',
          try: 'Applied configuration without a reboot',
          staged: 'Staged configuration to be applied after the next reboot',
          reboot: 'Applied configuration with a reboot',
        }[mode] ?? 'Applied configuration without a reboot';
      if (dryRun) {
        details = `Dry run summary:\n${details} (skipped in dry-run).\n${configDiff(before, next)}`;
      } else if (mode === 'staged') {
        rt.applyStaged(next);
      } else if (mode === 'reboot') {
        rt.applyStaged(next);
        void rt.reboot();
      } else {
        rt.applyNow(next);
        if (mode === 'try') {
          const timeoutMs = flag(ctx, 'timeout', 60_000);
          details += `\nThe config is applied in 'try' mode and will be automatically reverted back in ${goDurationSeconds(Math.round(timeoutMs / 1000))}`;
          rt.revertAfter(before, timeoutMs);
        }
      }
    }

    // talosctl compares the text it sent with the body it read, comments stripped (patch.go)
    if (sameWithoutComments(next.text, before.text)) {
      ctx.out.err('Apply was skipped: no changes detected.\n');
      continue;
    }
    ctx.out.err(`patched ${MC_TYPE}/v1alpha1 at the node ${node}\n`);
    if (applyErr) {
      ctx.out.fail(multiError([`${node}: ${applyErr}`]));
      return 1;
    }
    ctx.out.err(`${details}\n`);
  }
  return 0;
}
