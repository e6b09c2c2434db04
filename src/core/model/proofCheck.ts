// A node to prove, and what a run found when it tried: the verified marker records the run's revision for
// a host but not a proof of it (an undecided post-reboot proof, or a marker written before the marker said
// how: src/rules/marker.ts). A run with nothing to roll tries to prove such a node with one step, a read
// of the evidence or a pull of `verify-image` (src/pipeline/prove.ts), and the old-credential verdict
// (src/rules/revocation.ts) takes what it found over the listing it judged. Plain data, no I/O.

import type { HostToProve } from './hosts.js';

/** What proves a node to prove: a read of the evidence, or a pull of `verify-image` through its containerd. */
export const PROOF_STEPS = ['evidence', 'verify-image'] as const;
export type ProofStep = (typeof PROOF_STEPS)[number];

export interface ProofCheck {
  node: string;
  /** the node's uid as listed: a node re-created under its name is another machine */
  uid: string;
  /** the hosts whose entries were not proven, and why (src/rules/marker.ts hostsToProve) */
  hosts: HostToProve[];
  /** what the run tried; absent: it could try nothing (the Talos client could not be opened, say) */
  by?: ProofStep;
  /** true: proven, and the marker now says how */
  proven: boolean;
  /** one line: what proved it, or why it stays unproven */
  detail: string;
  /** when not proven: what a person does to prove it */
  nextStep?: string;
}
