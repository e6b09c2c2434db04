// One listing of the run: every node of the cluster, validated as an inventory (no unidentifiable node,
// no leftover claim but those an apply run adopts), and the selection a pass rolls, in roll order. The
// decisions are src/rules/inventory.ts's and src/rules/adopt.ts's.
import { InputError } from '../core/errors.js';
import type { NodeState } from '../core/model/node.js';
import type { RolloutFindings } from '../core/model/rolloutResult.js';
import { adoptable } from '../rules/adopt.js';
import { selectNodes, validateInventory } from '../rules/inventory.js';
import { quarantinedNodes, type QuarantinedOut } from '../rules/quarantine.js';
import type { RunContext } from './context.js';
import { withFencesOfHolder } from './holderFences.js';
import type { ToProve } from './prove.js';

/** What the run found and did (core/model/rolloutResult.ts), and the listing the old-credential verdict is judged on. */
export interface ScopedFindings extends RolloutFindings {
  /** every node of the cluster as the run last listed it, and which of them the inputs select (src/rules/revocation.ts) */
  scope?: Scope;
}

/** Every node of the cluster as one listing saw it, and the uids of those the `nodes` / `node-selector` inputs select. */
export interface Scope {
  nodes: NodeState[];
  selected: Set<string>;
}

/** What one listing gives a pass: the nodes to roll in roll order, those already verified, and the quarantined ones (out of service). */
export interface Listing {
  selected: NodeState[];
  upToDate: string[];
  quarantined: QuarantinedOut[];
  scope: Scope;
  /** nodes in scope not to roll whose marker proves nothing yet for a host (src/rules/inventory.ts selectNodes) */
  toProve: ToProve[];
}

/** List, validate the inventory and select the nodes a pass rolls, in roll order. */
export async function listAndSelect(ctx: RunContext, processed: number): Promise<Listing> {
  const { kube, config, keys } = ctx;
  // Every node must be identifiable and none may carry a leftover claim.
  const inventory = await kube.listNodes();
  // An apply run adopts the claims other runs of this action abandoned (src/rules/adopt.ts): they are
  // no problem for it, as long as it can take the Lease (refused while their run holds it).
  const adopt = config.mode === 'apply' && ctx.lock ? (n: NodeState) => adoptable(n, keys, ctx.owner) : undefined;
  const problems = validateInventory(inventory, keys, adopt);
  if (problems.length > 0) {
    // Another run's claim on a node reads as a residual claim: when that run still holds the Lease,
    // say so (who, the URL of its run, and the nodes it left claimed) instead. Read on the first
    // listing only (later ones run under our Lease), and only when it refuses the run: a listing with
    // nothing to roll needs no Lease (docs/preflight.md "Another run holding the Lease").
    if (processed === 0 && config.mode === 'apply' && ctx.lock) await withFencesOfHolder(ctx, () => ctx.lock!.checkNotHeldByAnother());
    const changed =
      processed === 0
        ? 'nothing was changed'
        : `${processed} node(s) were already processed in this run (listed below); no further node was started`;
    throw new InputError('nodes', `the cluster's node inventory is not safe to roll, ${changed}:\n- ${problems.join('\n- ')}`);
  }
  // the selector is matched against this one listing of every node: no second, filtered listing
  const selection = selectNodes(inventory, {
    names: config.nodes.length ? config.nodes : undefined,
    selector: config.nodeSelector,
    want: ctx.want,
    keys,
  });
  if (selection.unknownNames.length > 0) {
    throw new InputError('nodes', `no such node: ${selection.unknownNames.join(', ')}`);
  }
  // An abandoned claim outside the selection is not this run's to complete: the inputs did not pick it.
  const inScope = new Set(selection.inScope.map((n) => n.uid));
  const outside = adopt ? inventory.filter((n) => adopt(n) && !inScope.has(n.uid)) : [];
  if (outside.length > 0) {
    // Such a claim is abandoned only once its run no longer holds the Lease: while another run holds it
    // (a live run draining that node), say so, naming it and its nodes, as for any claim of a live run.
    if (processed === 0) await withFencesOfHolder(ctx, () => ctx.lock!.checkNotHeldByAnother());
    throw new InputError(
      config.nodes.length ? 'nodes' : 'node-selector',
      `node(s) carry a claim another run of this action left, outside this run's selection, nothing was changed: ${outside.map((n) => `${n.name} (${keys.owner}=${JSON.stringify(n.annotations[keys.owner])})`).join(', ')}; select them too (the run completes their roll), or release them with mode: recover-fences`,
    );
  }
  return {
    selected: selection.selected,
    upToDate: selection.upToDate,
    quarantined: quarantinedNodes(inventory, keys),
    toProve: selection.toProve,
    // the whole inventory, not the selection: the old credential is revocable only when no node of the cluster holds it
    scope: { nodes: inventory, selected: new Set(selection.inScope.map((n) => n.uid)) },
  };
}
