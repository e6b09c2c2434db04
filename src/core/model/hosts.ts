// A registry host of the run as a node's marker leaves it: to roll (the node is stale for it, and why) or
// to prove (its entry carries the run's revision but proves nothing yet, and why). src/rules/marker.ts
// decides which (hostsToRoll, hostsToProve); the node's record, the `decisions` output and the report
// file carry a host to roll as it is declared here, a proof check a host to prove. One declaration each,
// so a field added here reaches every account of a node at once. Plain data, no I/O.

/** A host a node's roll is for, and why: no proof, another revision's, or (`reprove`) only its proof image differs. */
export interface HostToRoll {
  host: string;
  /** one line a person reads */
  why: string;
  /** true: verified for this revision, but `verify-image` is not the image that proved it: a pull proves it again */
  reprove?: true;
}

/** A host of the run whose entry carries the run's revision but proves nothing yet, and why. */
export interface HostToProve {
  host: string;
  /** one line a person reads */
  why: string;
}
