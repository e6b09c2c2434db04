// Evidence rule 4: the config content match, every existing CRI config file carrying exactly the
// desired credential. The values are compared in memory and never leave this file.
import type { AuthFields, DesiredCredential } from '../../core/model/credential.js';
import type { ConfigFileReadings, EvidenceReadings } from '../../core/model/readings.js';
import type { EvidenceValues } from '../../core/model/verdict.js';
import type { Collector } from './collector.js';

function sameAuth(a: AuthFields, b: AuthFields): boolean {
  // In memory only: the values never leave this function.
  return (
    (a.username ?? '') === (b.username ?? '') &&
    (a.password ?? '') === (b.password ?? '') &&
    (a.auth ?? '') === (b.auth ?? '') &&
    (a.identitytoken ?? '') === (b.identitytoken ?? '')
  );
}

/**
 * Rule 4 — the config carries exactly the desired credential, for every host the node's roll is for.
 *
 * EVERY existing file must have been read and must carry, for each host, an auth entry for its
 * `tomlHost` (`registry-1.docker.io` for docker.io) whose four fields equal the desired ones exactly:
 * - an entry that differs → "holds an old credential": whatever containerd loaded at its start, it was
 *   not the desired one (contradicts). This closes the hole of a node rebooted for an unrelated reason
 *   AFTER the old credential was written, which "started after the last write" alone would skip.
 * - no entry for the host → reboot (contradicts: the file containerd reads lacks the credential).
 *   Stricter than "at least one file agrees": containerd reads cri.toml, so a part file agreeing while
 *   cri.toml does not is not proof.
 * - a file that could not be read → reboot (unproven, not contradicted).
 * Several hosts: the evidence holds only when it holds for every one (a node stale for two hosts is
 * rolled once, and skips its reboot only when containerd provably loaded both). A file's `credential`
 * is then the worst of its hosts' (old, absent, unknown, desired) and `byHost` says each one's.
 * Compared in memory only; reasons and values say 'desired' | 'old' | 'absent' | 'unknown', never a value.
 */
export function checkCredential(
  r: EvidenceReadings,
  desired: readonly DesiredCredential[],
  c: Collector,
  fileValues: Map<ConfigFileReadings, EvidenceValues['files'][number]>,
): void {
  for (const f of r.files) {
    const entry = fileValues.get(f)!;
    const mustCarry = f.listing.ok && f.listing.value.exists;
    if (f.content === undefined) {
      if (mustCarry) {
        entry.credential = 'unknown';
        c.missing(`${f.path} exists but was not read, so its credential is unknown`);
      }
      continue;
    }
    if (!f.content.ok) {
      entry.credential = 'unknown';
      if (mustCarry) c.missing(`reading ${f.path} failed: ${f.content.error}`);
      continue;
    }
    if (!f.content.value.exists) {
      entry.credential = 'unknown';
      if (mustCarry) c.missing(`${f.path} was listed but not found when read`);
      continue;
    }
    const auth = f.content.value.auth;
    const byHost: Record<string, CredentialState> = {};
    for (const d of desired) {
      const host = d.tomlHost;
      if (!Object.hasOwn(auth, host)) {
        byHost[d.host] = 'absent';
        if (mustCarry) c.contradict(`${f.path} has no auth entry for ${host}`);
      } else if (!sameAuth(auth[host], d.fields)) {
        byHost[d.host] = 'old';
        if (mustCarry) c.contradict(`${f.path} holds an old credential for ${host}`);
      } else {
        byHost[d.host] = 'desired';
      }
    }
    entry.credential = worst(Object.values(byHost));
    if (desired.length > 1) entry.byHost = byHost;
  }
}

type CredentialState = 'desired' | 'old' | 'absent';

/** The state a file shows when its hosts disagree: any old or absent entry outweighs the desired ones. */
function worst(states: CredentialState[]): CredentialState {
  return states.includes('old') ? 'old' : states.includes('absent') ? 'absent' : 'desired';
}
