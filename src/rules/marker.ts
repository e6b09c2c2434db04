// The verified marker: the proof, kept on the node, that the credential of a registry host was rolled
// and proven there. One per host, so a step rolling `ghcr.io` and a step rolling a mirror never
// overwrite each other's proof. Pure: annotations in, decisions and JSON Patch ops out.
//
// Where it lives: ONE annotation, `<prefix>/verified`, whose value is a JSON object mapping each host
// to its proof, e.g. `{"ghcr.io":{"revision":"r7","image":"ghcr.io/org/probe:1","at":"2026-12-06T07:00:00.000Z","proof":"verify-image"}}`.
// Not one annotation per host: an annotation key's name is at most 63 characters of [A-Za-z0-9-_.]
// (apimachinery validation.IsQualifiedName), so `registry.local:5000` (a colon) or a long host could
// not be a key at all. The value has no such limit (only the 256 KiB of all annotations together).
//
// The old form: `<prefix>/verified-revision` (written before the per-host markers) records only the revision, not
// the host. A run of that version rolled exactly one host, so the old marker is read as the proof of
// the host a run rolls when the run rolls exactly ONE host and the node carries no `verified` map yet
// (no run of this version has verified it). An upgrade therefore re-rolls nothing for a user with one
// registry; a run rolling several hosts cannot tell which one the old marker was written for and
// counts it for none (the nodes are rolled once, and carry the map from then on). Its image is
// unknown, so a changed `verify-image` does not re-prove a node the old marker proves (an upgrade
// re-rolls nothing). The first verified release removes it: from then on the map is the one home of
// the fact, and a stale single-key value can mislead nobody.
//
// How the host was proven (`proof`): `evidence` (containerd started after the CRI config holding the
// desired credential was written, read before the patch, after Talos restarted cri, or after the
// reboot), `verify-image` (the evidence left the order open and a pull of `verify-image` through the
// node's containerd settled it) or `undecided` (the evidence left the order open and nothing settled
// it: on Talos <= 1.13 containerd may have read its config before the credential was written, so the
// node may still pull with the old credential). An `undecided` entry keeps the credential in place
// (the node is not rolled again) but proves nothing: the node counts as a holder of the old
// credential (src/rules/revocation.ts) until a run proves it (src/pipeline/prove.ts, the rule
// `hostsToProve` below). An entry without `proof` was written before the marker said how, when an
// undecided proof was written like any other: it is read as not proven (`proof` undefined), the
// safest reading, unless it records an `image`, which only a pull through containerd that worked
// could have written (read as `verify-image`). The old single-key marker is read as not proven too.
// A `proof` value this version does not know (a later version's) is read as not proven.
import { parseImageRef, registryApiHost } from '../core/imageRef.js';
import type { AnnotationKeys } from '../core/model/node.js';
import type { HostToProve, HostToRoll } from '../core/model/hosts.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import { compareNames } from '../core/order.js';
import { annotationPath } from './claim.js';

/** How a host's entry was proven (see the header); the report file's schema takes its enum from here. */
export const PROOF_HOWS = ['evidence', 'verify-image', 'undecided'] as const;
export type ProofHow = (typeof PROOF_HOWS)[number];

/** What a node's marker records for one host. */
export interface HostProof {
  /** the `revision` input of the run that proved it */
  revision: string;
  /** the `verify-image` that containerd pulled on the node for this host; absent: none did */
  image?: string;
  /** when it was proven (the runner's clock, ISO); absent on the old single-key marker */
  at?: string;
  /** true: read from the old single-key `verified-revision` marker (no host, no image recorded) */
  legacy?: true;
  /** how it was proven; undefined: not recorded (an entry written before the marker said how, or the old marker) */
  proof?: ProofHow;
}

/** The hosts a run rolls, the revision it proves and the image that proves them. */
export interface MarkerWant {
  /** the registry hosts the run rolls (the `registry` input), as the auth patch names them */
  hosts: readonly string[];
  revision: string;
  /** the `verify-image` input; undefined: none */
  verifyImage?: string;
}

/** The node's markers as read. */
export interface MarkerRead {
  /** the proof per host the `verified` annotation records (empty when absent or unreadable) */
  byHost: Record<string, HostProof>;
  /** the `verified` annotation's text exactly as read (what the write's `test` compares); undefined: absent */
  raw?: string;
  /** set when `verified` is present but not the JSON object this rule writes: why (the node counts as verified for no host) */
  unreadable?: string;
  /** the old single-key `verified-revision` marker as read; undefined: absent */
  legacy?: string;
}

export function readMarkers(annotations: Readonly<Record<string, string>>, keys: AnnotationKeys): MarkerRead {
  const raw = annotations[keys.verified];
  const legacy = annotations[keys.verifiedRevision];
  if (raw === undefined) return { byHost: {}, legacy };
  const parsed = parseMap(raw);
  return typeof parsed === 'string' ? { byHost: {}, raw, unreadable: parsed, legacy } : { byHost: parsed, raw, legacy };
}

function parseMap(raw: string): Record<string, HostProof> | string {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return 'not JSON';
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not a JSON object';
  const out: Record<string, HostProof> = {};
  for (const [host, e] of Object.entries(v as Record<string, unknown>)) {
    const o = e as Record<string, unknown> | null;
    // An entry this rule did not write (no revision) proves nothing; the others' entries are kept as read.
    if (typeof o !== 'object' || o === null || typeof o.revision !== 'string') continue;
    out[host] = { revision: o.revision };
    if (typeof o.image === 'string') out[host].image = o.image;
    if (typeof o.at === 'string') out[host].at = o.at;
    const how = PROOF_HOWS.find((h) => h === o.proof);
    if (how !== undefined) out[host].proof = how;
    else if (o.proof === undefined && typeof o.image === 'string') out[host].proof = 'verify-image';
  }
  return out;
}

/**
 * The proof of `host` on the node: its entry in the map; else the old single-key marker when the run
 * rolls exactly one host and the node carries no map yet (see the header); else undefined.
 */
export function proofOf(read: MarkerRead, host: string, runHosts: readonly string[]): HostProof | undefined {
  if (Object.hasOwn(read.byHost, host)) return read.byHost[host];
  if (read.raw === undefined && read.legacy !== undefined && runHosts.length === 1 && runHosts[0] === host) {
    return { revision: read.legacy, legacy: true };
  }
  return undefined;
}

/**
 * The host `verify-image` proves, or undefined: with one host rolled, that host (a pull through the
 * node's containerd proves the credential the run rolled, whichever name the image is pulled by, e.g.
 * through a mirror); with several, the host the image is on (`docker.io` and `registry-1.docker.io`
 * being one), and none when it is on none of them (a reference that does not parse names no host).
 */
export function imageHost(want: Pick<MarkerWant, 'hosts' | 'verifyImage'>): string | undefined {
  if (want.verifyImage === undefined) return undefined;
  if (want.hosts.length === 1) return want.hosts[0];
  let on: string;
  try {
    on = registryApiHost(parseImageRef('verify-image', want.verifyImage).host);
  } catch {
    return undefined;
  }
  return want.hosts.find((h) => registryApiHost(h) === on);
}

/**
 * The hosts of the run the node is not verified for, in the run's order; empty: verified for all.
 * A host is stale when its proof is absent, of another revision, or (for the host verify-image proves)
 * recorded with another image or none: a changed `verify-image` proves the node again.
 * An old single-key marker's image is unknown and never differs (an upgrade re-rolls nothing).
 */
export function staleHosts(annotations: Readonly<Record<string, string>>, keys: AnnotationKeys, want: MarkerWant): HostToRoll[] {
  const read = readMarkers(annotations, keys);
  const proved = imageHost(want);
  const out: HostToRoll[] = [];
  for (const host of want.hosts) {
    const p = proofOf(read, host, want.hosts);
    if (p === undefined) {
      out.push({ host, why: read.unreadable ? `${keys.verified} is ${read.unreadable}` : `no verified marker for ${host}` });
    } else if (p.revision !== want.revision) {
      out.push({ host, why: `${host} verified for revision ${p.revision}, not ${want.revision}` });
    } else if (host === proved && !p.legacy && p.image !== want.verifyImage && unprovenWhy(p, host) === undefined) {
      // an entry not proven yet is proven by src/pipeline/prove.ts (a pull when verify-image is set), not rolled again
      const was = p.image === undefined ? 'no image' : p.image;
      out.push({ host, why: `${host} proven with ${was}, not verify-image ${want.verifyImage}`, reprove: true });
    }
  }
  return out;
}

/**
 * The one question "does this node carry this run's verified marker": verified for every host the run
 * rolls, at its revision (and with its verify-image). The selection and the revocation verdict ask it.
 */
export function carriesMarker(annotations: Readonly<Record<string, string>>, keys: AnnotationKeys, want: MarkerWant): boolean {
  return staleHosts(annotations, keys, want).length === 0;
}

/**
 * Whether the node holds the run's credential by its markers: undefined when it is verified for every
 * host at the revision (whatever image proved it: a re-proof asks for a pull, the credential is the
 * same), else why not, one line. The revocation verdict asks it (src/rules/revocation.ts).
 */
export function notVerifiedWhy(annotations: Readonly<Record<string, string>>, keys: AnnotationKeys, want: MarkerWant): string | undefined {
  const stale = staleHosts(annotations, keys, { hosts: want.hosts, revision: want.revision });
  return stale.length === 0 ? undefined : stale.map((s) => s.why).join('; ');
}

/** Why `p`, the entry of `host` at the run's revision, proves nothing yet; undefined: it was proven (by the evidence or a pull). */
export function unprovenWhy(p: HostProof, host: string): string | undefined {
  if (p.proof === 'evidence' || p.proof === 'verify-image') return undefined;
  if (p.proof === 'undecided') return `${host}: its post-reboot proof was undecided when it was released (released with a warning)`;
  if (p.legacy) return `${host}: verified by the old single-key marker, which does not record how it was proven`;
  return `${host}: its verified marker does not record how it was proven (written before the marker said so)`;
}

/**
 * The hosts of the run whose marker carries the run's revision but was not proven (undecided, or not
 * recorded: see the header), in the run's order; empty: none. A node with such a host is not rolled again
 * for it (its credential is in place), it is **to prove**: the old-credential verdict counts it as a
 * holder until a run proves it, and a run that finds it proves it with the fewest steps
 * (src/pipeline/prove.ts). A host stale for its revision is not listed here: it is **to roll**.
 */
export function hostsToProve(
  annotations: Readonly<Record<string, string>>,
  keys: AnnotationKeys,
  want: Pick<MarkerWant, 'hosts' | 'revision'>,
): HostToProve[] {
  const read = readMarkers(annotations, keys);
  const out: HostToProve[] = [];
  for (const host of want.hosts) {
    const p = proofOf(read, host, want.hosts);
    if (p === undefined || p.revision !== want.revision) continue;
    const why = unprovenWhy(p, host);
    if (why !== undefined) out.push({ host, why });
  }
  return out;
}

/** How a proof that ended in a verified release was reached: the record's undecided proof, and how the run settled it (none: the evidence proved it). */
export function proofHowOf(undecided: { settledBy: 'verify-image' | 'warning' } | undefined): ProofHow {
  if (undecided === undefined) return 'evidence';
  return undecided.settledBy === 'verify-image' ? 'verify-image' : 'undecided';
}

/** How a run proves a node to prove: a pull when `verify-image` is set and proves a host of the run (the one step that also records the image the later runs compare), else the evidence read. */
export function proveBy(want: Pick<MarkerWant, 'hosts' | 'verifyImage'>): 'verify-image' | 'evidence' {
  return imageHost(want) === undefined ? 'evidence' : 'verify-image';
}

/** The write of the markers a verified release makes, and how a re-read shows it landed. */
export interface MarkerWrite {
  ops: JsonPatchOp[];
  /** the `verified` text the write sets */
  value: string;
}

/**
 * The hosts a node's roll is for: those it is stale for. A node selected while verified for every
 * host is rolled for all of them: a quarantined one (its containerd still runs the old credential,
 * whatever its marker says), or one whose marker landed after the listing selected it (the roll then
 * proves every host again rather than trust a marker it did not see being written).
 */
export function hostsToRoll(annotations: Readonly<Record<string, string>>, keys: AnnotationKeys, want: MarkerWant): HostToRoll[] {
  const stale = staleHosts(annotations, keys, want);
  if (stale.length > 0) return stale;
  const why =
    annotations[keys.quarantined] !== undefined
      ? 'the node is quarantined: its containerd may still hold the old credential'
      : 'verified after the listing selected the node: proven again';
  return want.hosts.map((host) => ({ host, why: `${host}: ${why}` }));
}

/**
 * The ops that record the run's proof, proven as `how`, for each of `hosts` (default: every host of the run) on a node
 * whose annotations were read as `annotations` (the release's fence read), keeping every other host's
 * entry as read:
 * - `verified` present: a `test` of its text as read, then the new text. A step that wrote its own
 *   entry since the read fails the test (422) and the caller reads again and rebuilds (nothing lost);
 * - absent: an `add` alone (JSON Patch cannot test for an absence): the caller's patch tests our claim
 *   (owner token), and a marker is written only by a verified release under a claim, so no other
 *   writer's entry can land between the read and this write;
 * - the old single-key marker, when present, removed behind a `test` of its value (read above).
 * An unreadable `verified` (not the JSON object this rule writes) is replaced: it proved no host.
 */
export function markerWrite(
  annotations: Readonly<Record<string, string>>,
  keys: AnnotationKeys,
  want: MarkerWant,
  at: string,
  how: ProofHow,
  hosts: readonly string[] = want.hosts,
): MarkerWrite {
  const read = readMarkers(annotations, keys);
  const next: Record<string, HostProof> = { ...read.byHost };
  // the image's host is judged over the run's hosts, not the node's (a node stale for one host only)
  const proved = imageHost(want);
  for (const host of hosts) {
    next[host] = { revision: want.revision, ...(host === proved ? { image: want.verifyImage } : {}), at, proof: how };
  }
  const value = JSON.stringify(
    Object.fromEntries(
      Object.keys(next)
        .sort(compareNames)
        .map((h) => [h, next[h]]),
    ),
  );
  const path = annotationPath(keys.verified);
  const ops: JsonPatchOp[] = [];
  if (read.raw !== undefined) ops.push({ op: 'test', path, value: read.raw });
  ops.push({ op: 'add', path, value });
  if (read.legacy !== undefined) {
    const legacy = annotationPath(keys.verifiedRevision);
    ops.push({ op: 'test', path: legacy, value: read.legacy }, { op: 'remove', path: legacy });
  }
  return { ops, value };
}
