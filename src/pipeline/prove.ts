// Proving the nodes to prove: those whose verified marker carries the run's revision for a host without a
// proof of it (an undecided post-reboot proof, or a marker that does not say how: src/rules/marker.ts).
// Their credential is in place, so they are not rolled: one step proves each, with no claim, no cordon,
// no drain, no reboot and no Talos mutation, and the only write is the marker's entry:
// - with `verify-image` set (and on a host of the run), a pull of it through the node's containerd (the
//   probe pod the roll uses, src/pipeline/verifyImage.ts): it proves the credential as it proves a
//   rolled node, and records the image the later runs compare, so the node is then current;
// - otherwise a read of the evidence (Talos reads only): the reading that lets a roll skip a reboot
//   (containerd started after the CRI config holding the desired credential was written: verdict
//   `skip`, src/rules/evidence.ts) is proof enough. After a reboot whose order was undecided it usually
//   stays so (the same boot read the same way) until containerd restarts, or the run reads over the Talos
//   API, whose nanosecond instants order what talosctl's whole seconds cannot.
// Nothing here fails the run: a node not proven is said (summary, report, annotation) as the node that
// keeps `old-credential-revocable` false, with why and what would prove it. The write is one JSON Patch
// behind a `test` of the node's uid and of the marker's text as listed (the old single-key marker's value
// when that is all there is: src/rules/marker.ts markerWrite), so a run that wrote the marker since, or a
// node re-created under the name, makes it fail and nothing is recorded: the next run judges what is there.
import { errorMessage } from '../core/errors.js';
import type { NodeState } from '../core/model/node.js';
import type { ProofCheck, ProofStep } from '../core/model/proofCheck.js';
import type { HostToProve } from '../core/model/hosts.js';
import { markerWrite, proveBy } from '../rules/marker.js';
import { judgeProofReading } from '../rules/proof.js';
import type { RunContext } from './context.js';
import { readOne } from './evidence.js';
import { isTestFailure, patchNodeSurvivingLoss } from './nodeWrite.js';
import { pullThroughNode } from './verifyImage.js';

/** A node to prove (src/rules/inventory.ts selectNodes `toProve`). */
export interface ToProve {
  node: NodeState;
  hosts: HostToProve[];
}

/** What proves the run's nodes to prove: src/rules/marker.ts proveBy. */
export function proofStep(ctx: RunContext): ProofStep {
  return proveBy(ctx.want);
}

/**
 * Proves each node in turn (they are few: only releases with a warning, and an upgrade's first run);
 * `talosUnavailable` says why the Talos client could not be opened for the evidence (undefined: it was, or none was needed).
 */
export async function proveNodes(ctx: RunContext, nodes: readonly ToProve[], talosUnavailable?: string): Promise<ProofCheck[]> {
  const out: ProofCheck[] = [];
  for (const p of nodes) {
    const check = await proveOne(ctx, p, talosUnavailable);
    ctx.log.info(
      `${p.node.name}: ${check.proven ? 'proven' : 'not proven'} (${p.hosts.map((h) => h.why).join('; ')}): ${check.detail}` +
        (check.nextStep ? `. ${check.nextStep}` : ''),
    );
    out.push(check);
  }
  return out;
}

async function proveOne(ctx: RunContext, p: ToProve, talosUnavailable: string | undefined): Promise<ProofCheck> {
  const { node } = p;
  const base = { node: node.name, uid: node.uid, hosts: p.hosts.map((h) => ({ ...h })) };
  const by = proofStep(ctx);
  const hosts = p.hosts.map((h) => h.host);
  const names = hosts.join(', ');
  const address = node.internalIPs[0] ?? '';
  const setVerifyImage =
    `To prove it, set verify-image to a private image of ${names} and rerun: a pull through the node's containerd proves it, ` +
    `with no drain and no reboot; or restart its containerd (reboot the node) and rerun, so the evidence is read again`;
  let detail: string;
  if (by === 'verify-image') {
    const image = ctx.config.verifyImage!;
    try {
      const id = await pullThroughNode(ctx, node.name, image);
      detail = `proven by a pull of ${image} through its containerd (${id})`;
    } catch (e) {
      return {
        ...base,
        by,
        proven: false,
        detail: `the pull of ${image} through its containerd failed: ${errorMessage(e)}`,
        nextStep: `Check the pull's failure (the image, verify-namespace, the node's credential for ${names}); until a pull works the node may pull with the old credential`,
      };
    }
  } else {
    if (talosUnavailable !== undefined) {
      return { ...base, proven: false, detail: `the evidence could not be read: ${talosUnavailable}`, nextStep: setVerifyImage };
    }
    let verdict;
    try {
      verdict = await readOne(ctx, { name: node.name, address, desired: ctx.desired.filter((d) => hosts.includes(d.host)) });
    } catch (e) {
      return { ...base, by, proven: false, detail: `reading the evidence failed: ${errorMessage(e)}`, nextStep: setVerifyImage };
    }
    const judged = judgeProofReading(verdict);
    if (!judged.proven) {
      const contradicts = judged.contradicts;
      return {
        ...base,
        by,
        proven: false,
        detail: `the evidence ${contradicts ? 'contradicts that containerd loaded' : 'does not prove containerd loaded'} the desired credential: ${verdict.reason}`,
        nextStep: contradicts
          ? `Its containerd may run another credential than its marker says: remove the marker (kubectl annotate node ${node.name} ${ctx.keys.verified}-) and rerun, so the run rolls it`
          : setVerifyImage,
      };
    }
    detail = `proven by the evidence: ${verdict.reason}`;
  }
  const written = await recordProof(ctx, node, by, hosts);
  return written === undefined ? { ...base, by, proven: true, detail } : { ...base, by, proven: false, detail: `${detail}; ${written}` };
}

/** Writes how the hosts were proven; undefined when it landed, else why it was not recorded. */
async function recordProof(ctx: RunContext, node: NodeState, by: ProofStep, hosts: string[]): Promise<string | undefined> {
  const at = new Date(ctx.clock.now()).toISOString();
  const marker = markerWrite(node.annotations, ctx.keys, ctx.want, at, by, hosts);
  const ops = [{ op: 'test' as const, path: '/metadata/uid', value: node.uid }, ...marker.ops];
  try {
    await patchNodeSurvivingLoss({ ...ctx, note: (m) => ctx.log.info(m) }, node.name, ops, 'the verified marker');
    return undefined;
  } catch (e) {
    if (isTestFailure(e)) {
      return 'not recorded: the node or its marker changed since the listing (another run wrote it, or the node was re-created); the next run judges what it carries then';
    }
    return `recording it failed: ${errorMessage(e)}`;
  }
}
