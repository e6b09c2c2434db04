// What a post-reboot proof means for the roll. Pure: it takes the evidence verdict read after the
// reboot and says whether the node is proven, undecided, or failed. The pipeline acts on it
// (src/pipeline/stop.ts, settleProof).
import type { EvidenceVerdict } from '../core/model/verdict.js';

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
 * - every existing config file was read and carries exactly the desired credential;
 * - the reading is complete (no EvidenceVerdict.incomplete): a reading that lacked something is no
 *   proof of anything, and the caller judges one only at its deadline (readAgainBecause).
 * The caller has already seen the new boot id. What stays open is the case the ordering
 * exists to catch: on a Talos ≤ 1.13 boot, containerd reading the file before the credential landed
 * (nothing in ≤ 1.13 orders the two). `verify-image` closes it; without it the node is released with
 * a warning that names this risk.
 *
 * Anything else — `before`, `unknown` (an instant not read), an unhealthy cri, an incomplete reading —
 * is `failed`: the node stays fenced for a person, as a failed reboot does.
 */
export function judgeProof(proof: EvidenceVerdict): ProofJudgement {
  if (proof.verdict === 'skip') return { kind: 'proven' };
  if (proof.contradicts !== false || proof.ordering !== 'undecidable') return { kind: 'failed' };
  if (proof.incomplete !== undefined) return { kind: 'failed' };
  const v = proof.values;
  if (v.criState !== 'Running' || v.criHealth !== 'OK') return { kind: 'failed' };
  const existing = v.files.filter((f) => f.exists === true);
  if (existing.length === 0 || existing.some((f) => f.credential !== 'desired')) return { kind: 'failed' };
  return { kind: 'undecided', unproven: proof.reason };
}

/**
 * cri states after which the service does not come up by itself: a failed condition or pre stage,
 * or a skipped service (service_runner.go). Every other state moves on by itself: Initialized,
 * Starting, Waiting, Preparing are a run not launched yet, Stopping and Finished the middle of a
 * Talos 1.14 restart (cri.ServiceController stops, then starts it).
 */
const CRI_STATES_FOR_GOOD = new Set(['Failed', 'Skipped']);

/**
 * Why a post-reboot reading is to be read again before it is judged, or undefined when it is final.
 * The caller reads again until this says undefined or its deadline (ready-timeout) passes, then judges
 * the last reading: waiting never weakens the proof (the last reading is judged by the same rule, and
 * an incomplete one fails it), it only keeps a node that is fine from being fenced while it boots.
 *
 * The proof is read as soon as the reboot returned, when Talos answers with a new boot id, and that
 * is early in the boot: apid starts in the Initialize sequence, while
 * - cri is loaded only in StartAllServices (≤ 1.13) or by cri.ServiceController once cri.toml's
 *   EtcFileStatus exists (1.14); until then the service reading fails ("the node lists no service
 *   cri"). A cri (re)started a moment ago is Running with health unknown ("?") until its first check,
 *   one second after the launch; a first check that failed is retried five seconds later; a run not
 *   yet launched or a 1.14 restart in progress is not Running at all (Talos health.DefaultSettings,
 *   service_runner.go). Each turns into Running with health OK by itself on a healthy node.
 * - /etc is rebuilt at every boot (a tmpfs) and its CRI files are written by machined's controllers
 *   once the machine config is loaded, on their own schedule, so the node may answer before
 *   cri.toml (1.14) or 01-registries.part and the cri.toml that merges it (≤ 1.13) exist. A reading
 *   that lacks something the rule needs (EvidenceVerdict.incomplete: a file listed but not read, read
 *   but not found, no EtcFileStatus yet, a read that failed) is no fact about the node: an absence
 *   seen earlier in the boot says nothing about the next reading. It is read again, and only a
 *   complete reading decides the proof.
 *
 * Final: a skip; a cri in a state it does not leave by itself (Failed, Skipped), whatever else the
 * reading lacks; a complete reading with cri Running and healthy, whatever it says (an old credential
 * is judged at once, not waited on).
 */
export function readAgainBecause(proof: EvidenceVerdict): string | undefined {
  if (proof.verdict === 'skip') return undefined;
  const { criState: state, criHealth: health } = proof.values;
  if (state === undefined) return 'cri is not readable (Talos answers before it loads cri)';
  if (CRI_STATES_FOR_GOOD.has(state)) return undefined;
  if (state !== 'Running') return `cri is ${state}`;
  if (health !== 'OK') return `cri is Running with health ${health}`;
  if (proof.incomplete !== undefined) return `the reading is incomplete (${proof.incomplete})`;
  return undefined;
}

/** The residual risk of a node released on an undecided proof, for the warning and the decision output. */
export function residualRisk(host: string): string {
  return (
    `containerd may have read its CRI config before the credential for ${host} was written during the boot, ` +
    `in which case pulls from ${host} still use the old credential until the next containerd restart`
  );
}

/**
 * A node to prove (its marker carries the revision, not a proof: src/rules/marker.ts hostsToProve), judged
 * on a reading of its evidence with no patch and no reboot in this run: proven only on the verdict that
 * would skip a reboot (containerd started after the CRI config holding the desired credential was
 * written, by more than the margin, on a clock the checks trust: src/rules/evidence.ts). Anything else
 * leaves it unproven: `contradicts` when the reading says containerd did not load it (the node is to be
 * rolled, not proven), else the order is still open (a pull of verify-image, or a later containerd, proves it).
 */
export function judgeProofReading(verdict: EvidenceVerdict): { proven: true } | { proven: false; contradicts: boolean } {
  if (verdict.verdict === 'skip') return { proven: true };
  return { proven: false, contradicts: verdict.contradicts === true };
}
