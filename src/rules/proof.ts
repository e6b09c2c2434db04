// What a post-reboot proof means for the roll. Pure: it takes the evidence verdict read after the
// reboot and says whether the node is proven, undecided, or failed. The pipeline acts on it
// (src/pipeline/nodeRun.ts, settleProof).
import type { EvidenceVerdict } from '../model.js';

export type ProofJudgement =
  | { kind: 'proven' }
  /** nothing contradicts the credential being loaded; only the order of start and write is open */
  | { kind: 'undecided'; unproven: string }
  /** the readings contradict it, or something other than the ordering could not be read */
  | { kind: 'failed' };

/**
 * A reboot replaces containerd, so after it the proof asks only: did the NEW containerd start after
 * the config holding the desired credential was written? The reboot itself is the reason to believe
 * it did (Talos renders the config during boot); the proof confirms it when the readings are precise
 * enough.
 *
 * `undecided` — the roll did not fail, a person is told what is open — requires ALL of:
 * - the verdict does not contradict (no start provably before the write, no old or absent credential
 *   in an existing file, cri not stopped);
 * - the ordering is `undecidable` (bounds overlap, a gap within the margin, a tie, or a clock the
 *   checks do not trust), so both instants were read;
 * - cri is Running with health OK;
 * - every existing config file was read and carries exactly the desired credential.
 * The caller has already seen the new boot id and Ready. What stays open is the case the ordering
 * exists to catch: on a Talos ≤ 1.13 boot, containerd reading the file before the credential landed
 * (nothing in ≤ 1.13 orders the two). `verify-image` closes it; without it the node is released with
 * a warning that names this risk.
 *
 * Anything else — `before`, `unknown` (an instant not read), an unhealthy cri, a file not read — is
 * `failed`: the node stays fenced for a person, as a failed reboot does.
 */
export function judgeProof(proof: EvidenceVerdict): ProofJudgement {
  if (proof.verdict === 'skip') return { kind: 'proven' };
  if (proof.contradicts !== false || proof.ordering !== 'undecidable') return { kind: 'failed' };
  const v = proof.values;
  if (v.criState !== 'Running' || v.criHealth !== 'OK') return { kind: 'failed' };
  const existing = v.files.filter((f) => f.exists === true);
  if (existing.length === 0 || existing.some((f) => f.credential !== 'desired')) return { kind: 'failed' };
  return { kind: 'undecided', unproven: proof.reason };
}

/** The residual risk of a node released on an undecided proof, for the warning and the decision output. */
export function residualRisk(host: string): string {
  return (
    `containerd may have read its CRI config before the credential for ${host} was written during the boot, ` +
    `in which case pulls from ${host} still use the old credential until the next containerd restart`
  );
}
