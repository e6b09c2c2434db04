// Evidence rule: may the action skip the drain and reboot of a node?
//
// The second bug of the old script: it skipped the reboot when a desired-revision marker was present,
// which says nothing about what the running containerd loaded. containerd reads registry auth only
// when it starts (docs/talos-facts.md#t11-registry-auth-loaded-at-start), so the invariant to prove is:
//
//   the running containerd was started AFTER the CRI config it reads was last written,
//   and that config carries EXACTLY the desired credential.
//
// Asymmetric costs decide every ambiguity: a wasted reboot costs ~90 s, a wrongly skipped one cost a day
// of ImagePullBackOff. So the verdict is `skip` only when every rule below holds; anything missing,
// failed, ambiguous or unparseable is `reboot`, with the first failed rule as the reason.
// Pure: all instants arrive as arguments (epoch ms); nothing here reads a clock.
import { formatDuration } from '../format.js';
import type { AuthFields, ConfigFileReadings, DesiredCredential, EvidenceReadings, EvidenceValues, EvidenceVerdict } from '../model.js';
import { latestStartEvent } from './startEvent.js';

/** `(D ago)` is `time.Since(ts).Round(time.Second)`: the true age is within ±500 ms of D. */
const AGO_ROUNDING_MS = 500;
/** ServicePID `created` is RFC3339 truncated to the second and recorded just after the launch. */
const SERVICEPID_SLACK_MS = 1000;
/** Allowed disagreement between the start event and ServicePID, on top of the call's own duration. */
const START_AGREEMENT_MS = 2000;
/** etcfilestatus `updated` is truncated to the second: the write happened before `updated + 1 s`. */
const UPDATED_PRECISION_MS = 1000;

function iso(ms: number | undefined): string | undefined {
  if (ms === undefined || !Number.isFinite(ms)) return undefined;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

function sameAuth(a: AuthFields, b: AuthFields): boolean {
  // In memory only: the values never leave this function.
  return (
    (a.username ?? '') === (b.username ?? '') &&
    (a.password ?? '') === (b.password ?? '') &&
    (a.auth ?? '') === (b.auth ?? '') &&
    (a.identitytoken ?? '') === (b.identitytoken ?? '')
  );
}

interface StartInstant {
  pid: number;
  /** earliest instant containerd could have started (node clock) */
  earliestMs: number;
  /** latest instant it could have started (for the "not in the node's future" check) */
  latestMs: number;
  source: string;
}

interface WriteInstant {
  latestMs: number;
  path: string;
}

type Fail = (reason: string) => void;

/**
 * Rule 1 — cri must be Running with health OK: a stopped, restarting or failing containerd proves
 * nothing about what it will load next, and a reading we could not take proves nothing at all.
 */
function checkCriService(r: EvidenceReadings, values: EvidenceValues, fail: Fail): void {
  if (!r.criService.ok) {
    fail(`the cri service status could not be read: ${r.criService.error}`);
    return;
  }
  const c = r.criService.value;
  values.criState = c.state;
  values.criHealth = c.health;
  values.runnerWindow = {
    before: iso(c.clientBeforeMs) ?? String(c.clientBeforeMs),
    after: iso(c.clientAfterMs) ?? String(c.clientAfterMs),
  };
  if (c.state !== 'Running') fail(`the cri service is ${c.state || 'in an unknown state'}, not Running`);
  else if (c.health !== 'OK') fail(`the cri service is Running but its health is ${c.health || 'unknown'}, not OK`);
}

/**
 * Rule 2 — when containerd started, as the EARLIEST instant it could have been.
 *
 * - Start event: the latest event BY TIME matching `started with PID N` (latestStartEvent; the CLI
 *   lists newest first, the API oldest first) is the current process (the service is Running). talosctl printed its age D on the runner's clock at
 *   some moment in [clientBefore, clientAfter], rounded to the second, so the start was at or after
 *   clientBefore − D − 500 ms. (Client–node skew cancels: D = clientNow − nodeTs.)
 * - A negative D means the start lies in the runner's future: the node clock is ahead or stepped, so
 *   its timestamps cannot be ordered against anything → reboot.
 * - ServicePID (Talos ≥ 1.13, when the adapter read it): the reading must be ok (a failure is
 *   unexplained, not "absent" → reboot). `created` is truncated to the second and recorded just after
 *   the launch, so the start was at or after created − 1 s.
 * - Both present: the PIDs must match, and the two instants must agree within 2 s plus the call's own
 *   duration (the worst honest disagreement is 1.5 s + duration); otherwise two processes or a clock
 *   step are in play → reboot (ambiguous). The earlier of the two earliest instants is used.
 * - No start event in the 64-event history (health flapping can push it out): ServicePID alone, if read;
 *   otherwise reboot.
 */
function containerdStart(r: EvidenceReadings, values: EvidenceValues, fail: Fail): StartInstant | undefined {
  let event: { pid: number; earliestMs: number; latestMs: number; nominalMs: number } | undefined;
  let callMs = 0;
  if (r.criService.ok) {
    const c = r.criService.value;
    callMs = c.clientAfterMs - c.clientBeforeMs;
    const windowOk = Number.isFinite(callMs) && callMs >= 0;
    if (!windowOk) {
      callMs = 0;
      fail('the runner clock went backwards around `talosctl service cri`, so the start age cannot be placed');
    }
    // By time, not by position (see startEvent.ts); two start events that cannot be ordered → reboot.
    const pick = latestStartEvent(c.events);
    if (pick.kind === 'ambiguous') fail(`ambiguous containerd start: ${pick.reason}`);
    if (pick.kind === 'latest') {
      const { event: ev, pid } = pick;
      // Until this rule reasons on Instants, an event without a printed age reads as unparseable.
      const agoMs = ev.agoMs ?? Number.NaN;
      values.criEvent = { pid, agoMs };
      if (!windowOk) {
        // already failed above; an age measured against a stepping runner clock places nothing
      } else if (!Number.isFinite(agoMs)) {
        fail(`the age of the containerd start event (PID ${pid}) could not be parsed`);
      } else if (agoMs < 0) {
        fail(
          `the containerd start event (PID ${pid}) lies ${formatDuration(-agoMs)} in the runner's future: ` +
            `the node clock is ahead or stepped, so its timestamps cannot be ordered`,
        );
      } else {
        const nominalMs = c.clientBeforeMs - agoMs;
        event = {
          pid,
          nominalMs,
          earliestMs: nominalMs - AGO_ROUNDING_MS,
          latestMs: c.clientAfterMs - agoMs + AGO_ROUNDING_MS,
        };
      }
    }
  }

  let sp: { pid: number; createdMs: number } | undefined;
  if (r.servicePid !== undefined) {
    if (!r.servicePid.ok) {
      fail(`the cri ServicePID could not be read: ${r.servicePid.error}`);
    } else if (
      r.servicePid.value.createdMs === undefined ||
      !Number.isFinite(r.servicePid.value.createdMs) ||
      !Number.isInteger(r.servicePid.value.pid)
    ) {
      fail('the cri ServicePID could not be parsed');
    } else {
      sp = { pid: r.servicePid.value.pid, createdMs: r.servicePid.value.createdMs };
      values.servicePid = { pid: sp.pid, created: iso(sp.createdMs) ?? String(sp.createdMs) };
    }
  }

  let start: StartInstant | undefined;
  if (event && sp) {
    if (event.pid !== sp.pid) {
      fail(`ambiguous containerd start: the newest start event names PID ${event.pid} but ServicePID names PID ${sp.pid}`);
    } else {
      const apart = Math.abs(event.nominalMs - sp.createdMs);
      if (apart > START_AGREEMENT_MS + callMs) {
        fail(
          `ambiguous containerd start: the start event and ServicePID for PID ${sp.pid} disagree by ${formatDuration(apart)} ` +
            `(more than ${formatDuration(START_AGREEMENT_MS + callMs)})`,
        );
      }
    }
    start = {
      pid: event.pid,
      earliestMs: Math.min(event.earliestMs, sp.createdMs - SERVICEPID_SLACK_MS),
      latestMs: Math.max(event.latestMs, sp.createdMs + SERVICEPID_SLACK_MS - 1),
      source: 'start event + ServicePID',
    };
  } else if (event) {
    start = { pid: event.pid, earliestMs: event.earliestMs, latestMs: event.latestMs, source: 'start event' };
  } else if (sp) {
    start = {
      pid: sp.pid,
      earliestMs: sp.createdMs - SERVICEPID_SLACK_MS,
      latestMs: sp.createdMs + SERVICEPID_SLACK_MS - 1,
      source: values.criEvent ? 'ServicePID' : 'ServicePID (no start event in the cri history)',
    };
  } else if (r.criService.ok && values.criEvent === undefined) {
    fail(
      r.servicePid === undefined
        ? "no 'started with PID' event in the cri history (64 events kept) and the node offers no ServicePID"
        : "no 'started with PID' event in the cri history (64 events kept) and no usable ServicePID",
    );
  }

  if (start) {
    values.criPid = start.pid;
    values.criStartEarliest = iso(start.earliestMs);
    values.criStartSource = start.source;
  }
  return start;
}

/**
 * Rule 3 — when the CRI config was last written, as the LATEST instant it could have been.
 *
 * For every configured path: its listing must be ok (a failed `ls` is not "missing"). A missing file
 * is reported, not an error (01-registries.part is gone on Talos 1.14), and its etcfilestatus and
 * content are not consulted (there is nothing containerd could read). An existing file's LASTMOD is
 * truncated, so the write happened before mtime + precision: latest = mtimeMs + precisionMs − 1
 * (precision 1 s normally, 1 min beyond 180 days where `ls -l` drops the seconds). When an
 * etcfilestatus reading was taken it must be ok, and `updated` (1 s precision) raises the latest to
 * updated + 999 ms if later. The config's latest write is the max over existing files; at least one
 * must exist, or nothing says what containerd read.
 */
function configLastWrite(
  r: EvidenceReadings,
  values: EvidenceValues,
  fail: Fail,
  fileValues: Map<ConfigFileReadings, EvidenceValues['files'][number]>,
): { latest?: WriteInstant; perFile: WriteInstant[] } {
  const perFile: WriteInstant[] = [];
  let existing = 0;
  if (r.files.length === 0) fail('no CRI config paths were given, so nothing says what containerd read');

  for (const f of r.files) {
    const entry: EvidenceValues['files'][number] = { path: f.path };
    values.files.push(entry);
    fileValues.set(f, entry);
    if (!f.listing.ok) {
      fail(`listing ${f.path} failed: ${f.listing.error}`);
      continue;
    }
    const l = f.listing.value;
    entry.exists = l.exists;
    if (l.lastModText !== undefined) entry.lastMod = l.lastModText;
    if (!l.exists) continue;
    existing++;

    let latest: number | undefined;
    if (l.mtimeMs === undefined || !Number.isFinite(l.mtimeMs) || l.precisionMs === undefined || !(l.precisionMs > 0)) {
      fail(`the modification time of ${f.path} could not be parsed (${l.lastModText ?? 'missing'})`);
    } else {
      latest = l.mtimeMs + l.precisionMs - 1;
    }
    if (f.status !== undefined) {
      if (!f.status.ok) {
        fail(`the etcfilestatus of ${f.path} could not be read: ${f.status.error}`);
      } else if (f.status.value.updatedMs === undefined || !Number.isFinite(f.status.value.updatedMs)) {
        fail(`the etcfilestatus of ${f.path} could not be parsed`);
      } else {
        entry.updated = iso(f.status.value.updatedMs);
        const byStatus = f.status.value.updatedMs + UPDATED_PRECISION_MS - 1;
        latest = latest === undefined ? byStatus : Math.max(latest, byStatus);
      }
    }
    if (latest !== undefined) {
      entry.latestWrite = iso(latest);
      perFile.push({ latestMs: latest, path: f.path });
    }
  }

  if (r.files.length > 0 && existing === 0 && r.files.every((f) => f.listing.ok)) {
    fail(`none of the CRI config files exists (${r.files.map((f) => f.path).join(', ')})`);
  }
  let latest: WriteInstant | undefined;
  for (const w of perFile) if (!latest || w.latestMs > latest.latestMs) latest = w;
  if (latest) {
    values.configWrittenLatest = iso(latest.latestMs);
    values.configWrittenPath = latest.path;
  }
  return { latest, perFile };
}

/**
 * Rule 4 — the config carries exactly the desired credential.
 *
 * EVERY existing file must have been read and must carry an auth entry for `desired.tomlHost`
 * (`registry-1.docker.io` for docker.io) whose four fields equal the desired ones exactly:
 * - an entry that differs → "holds an old credential": whatever containerd loaded at its start, it was
 *   not the desired one. This closes the hole of a node rebooted for an unrelated reason AFTER the old
 *   credential was written, which "started after the last write" alone would skip.
 * - no entry for the host → reboot. Stricter than "at least one file agrees": containerd reads cri.toml,
 *   so a part file agreeing while cri.toml does not is not proof.
 * Compared in memory only; reasons and values say 'desired' | 'old' | 'absent' | 'unknown', never a value.
 */
function checkCredential(
  r: EvidenceReadings,
  desired: DesiredCredential,
  fail: Fail,
  fileValues: Map<ConfigFileReadings, EvidenceValues['files'][number]>,
): void {
  const host = desired.tomlHost;
  for (const f of r.files) {
    const entry = fileValues.get(f)!;
    const mustCarry = f.listing.ok && f.listing.value.exists;
    if (f.content === undefined) {
      if (mustCarry) {
        entry.credential = 'unknown';
        fail(`${f.path} exists but was not read, so its credential is unknown`);
      }
      continue;
    }
    if (!f.content.ok) {
      entry.credential = 'unknown';
      if (mustCarry) fail(`reading ${f.path} failed: ${f.content.error}`);
      continue;
    }
    if (!f.content.value.exists) {
      entry.credential = 'unknown';
      if (mustCarry) fail(`${f.path} was listed but not found when read`);
      continue;
    }
    const auth = f.content.value.auth;
    if (!Object.hasOwn(auth, host)) {
      entry.credential = 'absent';
      if (mustCarry) fail(`${f.path} has no auth entry for ${host}`);
    } else if (!sameAuth(auth[host], desired.fields)) {
      entry.credential = 'old';
      if (mustCarry) fail(`${f.path} holds an old credential for ${host}`);
    } else {
      entry.credential = 'desired';
    }
  }
}

/**
 * Rule 5 — the node clock gives no reason for doubt. cri does not wait for time sync, and NTP steps
 * offsets above 400 ms, so node timestamps taken across a step cannot be ordered (docs/talos-facts.md#t14-clocks):
 * - the time status must be read, synced, and at epoch 0 (epoch counts jumps > 15 min since boot);
 * - no file write or containerd start may lie later than the runner's clientAfter + margin: a node
 *   timestamp in the future means its clock is ahead or stepped back since — the dangerous direction,
 *   where a launch stamped too late makes a later write look older.
 */
function checkClock(
  r: EvidenceReadings,
  marginMs: number,
  start: StartInstant | undefined,
  writes: WriteInstant[],
  values: EvidenceValues,
  fail: Fail,
): void {
  if (!r.timeStatus.ok) {
    fail(`the node time status could not be read: ${r.timeStatus.error}`);
  } else {
    values.timeSynced = r.timeStatus.value.synced;
    values.timeEpoch = r.timeStatus.value.epoch;
    if (r.timeStatus.value.synced !== true) fail('the node clock is not synced');
    if (r.timeStatus.value.epoch !== 0) {
      fail(`the node clock jumped by more than 15 minutes since boot (time epoch ${r.timeStatus.value.epoch})`);
    }
  }
  if (!r.criService.ok) return; // no runner window to compare with; rule 1 already failed
  const limit = r.criService.value.clientAfterMs + marginMs;
  for (const w of writes) {
    if (w.latestMs > limit) {
      fail(
        `${w.path} was written up to ${iso(w.latestMs)}, after the runner's now (${iso(r.criService.value.clientAfterMs)}): the node clock is ahead or stepped`,
      );
    }
  }
  if (start && start.latestMs > limit) {
    fail(
      `containerd (PID ${start.pid}) started up to ${iso(start.latestMs)}, after the runner's now (${iso(r.criService.value.clientAfterMs)}): the node clock is ahead or stepped`,
    );
  }
}

/**
 * The verdict. `skip` iff rules 1–5 hold AND earliest start − latest write > margin (strictly):
 * an equal pair, or one within the margin (same second, the usual boot-time race on Talos ≤ 1.13),
 * cannot be ordered and means `reboot`. `values` carries everything read and compared, whatever the verdict.
 */
export function rebootEvidence(r: EvidenceReadings, desired: DesiredCredential, opts: { marginMs: number }): EvidenceVerdict {
  const marginMs = opts.marginMs;
  const values: EvidenceValues = { marginMs, files: [] };
  const failures: string[] = [];
  const fail: Fail = (reason) => {
    failures.push(reason);
  };
  if (r.talosVersion.ok) values.talosVersion = r.talosVersion.value;
  if (!Number.isFinite(marginMs) || marginMs < 0) fail(`the evidence margin (${marginMs} ms) is not a non-negative duration`);

  const fileValues = new Map<ConfigFileReadings, EvidenceValues['files'][number]>();
  checkCriService(r, values, fail);
  const start = containerdStart(r, values, fail);
  const { latest: write, perFile } = configLastWrite(r, values, fail, fileValues);
  checkCredential(r, desired, fail, fileValues);
  checkClock(r, Number.isFinite(marginMs) ? marginMs : 0, start, perFile, values, fail);

  // Rule 6 — the order itself.
  if (start && write) {
    const gapMs = start.earliestMs - write.latestMs;
    values.gapMs = gapMs;
    if (!(gapMs > marginMs)) {
      fail(
        gapMs <= 0
          ? `containerd (PID ${start.pid}) may have started before the last write of ${write.path} ` +
              `(start ≥ ${iso(start.earliestMs)}, write ≤ ${iso(write.latestMs)}), so it may run with an older config`
          : `containerd (PID ${start.pid}) started only ${formatDuration(gapMs)} after the last write of ${write.path}, ` +
              `not more than the ${formatDuration(marginMs)} margin, so the order cannot be proven`,
      );
    }
  }

  if (failures.length === 0 && start && write && values.gapMs !== undefined) {
    return {
      verdict: 'skip',
      reason:
        `containerd PID ${start.pid} started ${formatDuration(values.gapMs)} after the last config write ` +
        `(${write.path}) and the config carries the desired credential for ${desired.tomlHost}`,
      values,
    };
  }
  return { verdict: 'reboot', reason: failures[0] ?? 'the evidence is incomplete', values };
}

/**
 * Whether a `talosctl version` tag is at least `major.minor` (undefined = unparseable, which the
 * caller treats as "no": reboot without waiting).
 *
 * A pre-release suffix is ignored (`v1.14.0-rc.1` counts as 1.14): the only use is deciding whether
 * to WAIT for Talos to restart cri by itself after the patch. The evidence must still prove the
 * restart before a reboot is skipped, so a wrong "yes" costs at most `cri-restart-wait`, while a
 * wrong "no" costs a drain and a reboot.
 */
export function isTalosAtLeast(version: string, major: number, minor: number): boolean | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.exec(version.trim());
  if (!m) return undefined;
  const vMajor = Number(m[1]);
  const vMinor = Number(m[2]);
  return vMajor > major || (vMajor === major && vMinor >= minor);
}
