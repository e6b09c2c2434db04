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
//
// Every instant arrives as an Instant: the bounds of the reading that produced it (nanosecond-exact
// over the Talos API, second-rounded through talosctl; docs/talos-evidence-timing.md). The rule
// compares bounds only, so one rule judges both read paths and a coarse reading can never pass for a
// precise one. Besides the verdict it classifies a `reboot` as CONTRADICTED (the readings prove the
// running containerd lacks the desired credential) or merely UNPROVEN (undecidable / unknown): after
// a reboot only the first is a failed roll.
// Pure: all instants arrive as arguments; nothing here reads a clock.
import { formatDuration } from '../core/format.js';
import { formatGap, isValidInstant } from '../core/instants.js';
import type { AuthFields, DesiredCredential } from '../core/model/credential.js';
import type { ConfigFileReadings, EvidenceReadings, Instant, ReadPath, ServiceEvent } from '../core/model/readings.js';
import type { CriLaunch, EvidenceOrdering, EvidenceValues, EvidenceVerdict } from '../core/model/verdict.js';

/** The cri service event logged right AFTER the containerd process was launched (process runner). */
const START_EVENT = /started with PID (\d+)/;
/**
 * Service events the service runner logs BEFORE it launches the process, in this order for one run:
 * "Starting service", "Waiting for …" (while the start condition does not hold), "Running pre state",
 * "Creating service runner" (service_runner.go). Each is strictly earlier than that run's launch.
 * Only their instants count, never their text: "Waiting for …" is logged on entry with every
 * condition named, even those already holding (a 1.14 run names the /etc files though they exist).
 */
const PRE_LAUNCH_EVENT = /^(Starting service|Waiting for .*|Running pre state|Creating service runner)$/s;
/**
 * How far a node instant may lie past the runner's clock after the read before the node clock is
 * called "ahead or stepped". Both clocks are NTP-disciplined to well under this; an exact API instant
 * of an event a few ms old must not fail on ordinary skew, a node clock seconds ahead must.
 */
const NODE_FUTURE_TOLERANCE_MS = 1000;

function iso(ms: number | undefined): string | undefined {
  if (ms === undefined || !Number.isFinite(ms)) return undefined;
  const d = new Date(Math.floor(ms));
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
  /** strict lower bound of the launch: the earliest the newest pre-launch event of the run can be */
  earliestMs: number;
  /** upper bound of the launch: ServicePID `created` and the start event are both logged after it */
  latestMs: number;
  source: string;
  via: ReadPath[];
}

interface WriteInstant {
  /** the last write happened no earlier than this (the newest file's mtime) */
  earliestMs: number;
  /** the last write happened no later than this (EtcFileStatus updated; on the CLI path also the mtime) */
  latestMs: number;
  path: string;
  via: ReadPath[];
}

/** How a failed check counts for the post-reboot decision (see EvidenceVerdict.contradicts). */
interface Collector {
  /** a check that could not prove its part: reboot, but nothing is disproven */
  fail: (reason: string) => void;
  /** the readings prove the running containerd does not hold the desired credential */
  contradict: (reason: string) => void;
  /** the node clock cannot be trusted: no ordering of its instants, either way */
  doubtClock: (reason: string) => void;
  /**
   * a reading the rule needs is not there: not taken, failed, or of a file not there yet (listed but
   * not read, read but not found, no EtcFileStatus yet). The check fails too; the verdict says the
   * reading is incomplete (EvidenceVerdict.incomplete), so a reading after a reboot is read again.
   */
  missing: (reason: string) => void;
}

const byTime = (a: ServiceEvent, b: ServiceEvent): number => a.at.earliestMs - b.at.earliestMs || a.at.latestMs - b.at.latestMs;

/**
 * Rule 1 — cri must be Running with health OK: a stopped, restarting or failing containerd proves
 * nothing about what it will load next, and a reading we could not take proves nothing at all.
 * cri not Running contradicts (no containerd holds anything); Running but unhealthy only fails.
 */
function checkCriService(r: EvidenceReadings, values: EvidenceValues, c: Collector): void {
  if (!r.criService.ok) {
    c.missing(`the cri service status could not be read: ${r.criService.error}`);
    return;
  }
  const s = r.criService.value;
  values.criState = s.state;
  values.criHealth = s.health;
  values.runnerWindow = {
    before: iso(s.clientBeforeMs) ?? String(s.clientBeforeMs),
    after: iso(s.clientAfterMs) ?? String(s.clientAfterMs),
  };
  if (s.state !== 'Running') c.contradict(`the cri service is ${s.state || 'in an unknown state'}, not Running`);
  else if (s.health !== 'OK') c.fail(`the cri service is Running but its health is ${s.health || 'unknown'}, not OK`);
}

/**
 * Rule 2 — when the running containerd was launched, as bounds.
 *
 * - The launch of the CURRENT run is the start event ("… started with PID N") that is newest BY TIME
 *   (the CLI lists events newest first, the API oldest first: position means nothing). Another start
 *   event whose instant overlaps it with another PID leaves "which process runs" open → reboot.
 * - Lower bound (strict): the newest pre-launch event of that run ("Creating service runner", else
 *   "Running pre state", "Waiting for …", "Starting service"), all logged before the launch. Pre-launch
 *   events provably older than the PREVIOUS start event belong to an older run and do not count: with
 *   none left, the launch has no lower bound → reboot. (The old rule took the start event's own time
 *   minus a slack, which is an upper bound of the launch, not a lower one.)
 * - Upper bound: the start event and ServicePID `created` (Talos ≥ 1.13), both recorded after the launch.
 * - Cross-checks: ServicePID must be readable when the node offers it, name the same PID, and lie
 *   between the run's pre-launch event and its start event; otherwise two processes or a clock step
 *   are in play → reboot (ambiguous).
 */
function containerdStart(r: EvidenceReadings, values: EvidenceValues, c: Collector): StartInstant | undefined {
  if (!r.criService.ok) return undefined; // rule 1 said why
  const s = r.criService.value;
  if (!(Number.isFinite(s.clientBeforeMs) && Number.isFinite(s.clientAfterMs) && s.clientAfterMs >= s.clientBeforeMs)) {
    c.doubtClock('the runner clock went backwards around the cri service read, so its instants cannot be placed');
    return undefined;
  }
  const bad = s.events.find((e) => !isValidInstant(e.at));
  if (bad) {
    c.fail(`the instant of the cri event "${bad.message}" could not be parsed (${bad.at?.text ?? 'missing'})`);
    return undefined;
  }
  const starts = s.events.filter((e) => START_EVENT.test(e.message)).sort(byTime);
  const current = starts.reduce<ServiceEvent | undefined>(
    (best, e) =>
      !best || e.at.latestMs > best.at.latestMs || (e.at.latestMs === best.at.latestMs && e.at.earliestMs > best.at.earliestMs) ? e : best,
    undefined,
  );
  let sp: { pid: number; created: Instant } | undefined;
  if (r.servicePid !== undefined) {
    if (!r.servicePid.ok) c.missing(`the cri ServicePID could not be read: ${r.servicePid.error}`);
    else if (!Number.isInteger(r.servicePid.value.pid) || !isValidInstant(r.servicePid.value.created))
      c.fail('the cri ServicePID could not be parsed');
    else {
      sp = { pid: r.servicePid.value.pid, created: r.servicePid.value.created };
      values.servicePid = { pid: sp.pid, created: iso(sp.created.earliestMs) ?? sp.created.text };
    }
  }
  if (!current) {
    c.fail("no 'started with PID' event in the cri history (64 events kept), so the launch of the running containerd cannot be placed");
    return undefined;
  }
  const pid = Number(START_EVENT.exec(current.message)![1]);
  values.criPid = pid;
  values.criEvent = { pid, at: iso(current.at.earliestMs) ?? current.at.text, text: current.at.text };
  const rival = starts.find(
    (e) => e !== current && e.at.latestMs >= current.at.earliestMs && Number(START_EVENT.exec(e.message)![1]) !== pid,
  );
  if (rival) {
    c.fail(
      `ambiguous containerd start: start events for PID ${pid} and PID ${START_EVENT.exec(rival.message)![1]} cannot be ordered ` +
        `(${current.at.text} vs ${rival.at.text})`,
    );
    return undefined;
  }
  // the newest start event provably older than the current one: the launch of the previous run
  const previous = starts.filter((e) => e.at.latestMs < current.at.earliestMs).pop();
  const pre = s.events
    .filter((e) => PRE_LAUNCH_EVENT.test(e.message))
    .filter((e) => e.at.earliestMs <= current.at.latestMs) // not provably after this launch
    .filter((e) => !previous || !(e.at.latestMs < previous.at.earliestMs)) // not provably before the previous launch
    .sort(byTime)
    .pop();
  if (!pre) {
    c.fail(
      `no pre-launch event of the current cri run (PID ${pid}) in the history ("Creating service runner", "Running pre state", …), ` +
        'so the launch has no lower bound',
    );
    return undefined;
  }
  let latestMs = current.at.latestMs;
  const via: ReadPath[] = [pre.at.via, current.at.via];
  let source = `"${pre.message}" … start event`;
  if (sp) {
    if (sp.pid !== pid) {
      c.fail(`ambiguous containerd start: the newest start event names PID ${pid} but ServicePID names PID ${sp.pid}`);
      return undefined;
    }
    if (sp.created.latestMs < pre.at.earliestMs || sp.created.earliestMs > current.at.latestMs) {
      c.fail(
        `ambiguous containerd start: ServicePID for PID ${pid} was recorded at ${sp.created.text}, outside its run ` +
          `(pre-launch ${pre.at.text}, start event ${current.at.text}): another process or a clock step`,
      );
      return undefined;
    }
    latestMs = Math.min(latestMs, sp.created.latestMs);
    via.push(sp.created.via);
    source = `"${pre.message}" … ServicePID`;
  }
  return { pid, earliestMs: pre.at.earliestMs, latestMs: Math.max(latestMs, pre.at.earliestMs), source, via };
}

/**
 * Rule 2b (readings after the credential patch only) — the containerd judged was launched after the
 * patch. Talos's ApplyConfiguration returns before its controllers write cri.toml, and 1.14 restarts
 * cri only after that write: until then the containerd that ran before the patch still runs, holding
 * the old credential. The readings are taken so that a write between them errs toward reboot
 * (src/pipeline/readEvidence.ts), but a skip after the patch must not rest on that alone: the launch must be
 * another process than the one the reading before the patch placed (another PID) and provably later
 * (its earliest bound after that launch's latest bound). Both instants are the node's clock, never the
 * runner's, which may be skewed. Rules 3–6 then order this launch after the write that carries the
 * desired credential. A reading before the patch that placed no launch gives no anchor: no launch
 * after the patch can be proven new, so the answer is reboot.
 */
function launchedAfterPatch(start: StartInstant | undefined, before: CriLaunch | undefined, values: EvidenceValues, c: Collector): void {
  if (!before) {
    c.fail('the reading before the patch placed no containerd launch, so no launch can be proven to follow the patch');
    return;
  }
  values.launchBeforePatch = { pid: before.pid, latest: iso(before.latestMs) ?? String(before.latestMs) };
  if (!start) return; // rule 2 said why
  if (start.pid === before.pid) {
    c.fail(`containerd PID ${start.pid} is the one that ran before the patch: Talos has not restarted cri since`);
  } else if (!(start.earliestMs > before.latestMs)) {
    c.fail(
      `containerd PID ${start.pid} (launched from ${iso(start.earliestMs)}) is not provably launched after PID ${before.pid}, ` +
        `which ran before the patch (launched by ${iso(before.latestMs)})`,
    );
  }
}

/** The launch a verdict's reading placed, for `afterPatch` of a later reading; undefined when it placed none. */
export function placedLaunch(v: EvidenceVerdict): CriLaunch | undefined {
  const { criPid, criStart } = v.values;
  if (criPid === undefined || !criStart) return undefined;
  return { pid: criPid, earliestMs: criStart.earliestMs, latestMs: criStart.latestMs };
}

/**
 * Rule 3 — when the CRI config was last written, as bounds.
 *
 * For every configured path the listing must be ok (a failed `ls` is not "missing"). A missing file is
 * reported, not an error (01-registries.part is gone on Talos 1.14); its status and content are not
 * consulted. For an existing file:
 * - EtcFileStatus `updated` is recorded after the controller wrote the file: the write's LATEST.
 *   A status reading that was taken must be ok.
 * - The mtime is the write itself, truncated: the write's EARLIEST, and on the CLI path (whole-second
 *   readings everywhere) also a latest (mtime + precision − 1), the later of the two counting.
 * - On the API path the whole-second mtime never orders anything; it only contradicts: an mtime
 *   provably later than the status means something other than the controller wrote the file after
 *   the status → reboot. With no status there, nothing bounds the write finely → reboot.
 * The config's last write is the newest over existing files; at least one must exist.
 */
function configLastWrite(
  r: EvidenceReadings,
  values: EvidenceValues,
  c: Collector,
  fileValues: Map<ConfigFileReadings, EvidenceValues['files'][number]>,
): { latest?: WriteInstant; perFile: WriteInstant[] } {
  const perFile: WriteInstant[] = [];
  let existing = 0;
  let complete = true;
  if (r.files.length === 0) c.fail('no CRI config paths were given, so nothing says what containerd read');

  for (const f of r.files) {
    const entry: EvidenceValues['files'][number] = { path: f.path };
    values.files.push(entry);
    fileValues.set(f, entry);
    if (!f.listing.ok) {
      c.missing(`listing ${f.path} failed: ${f.listing.error}`);
      complete = false;
      continue;
    }
    const l = f.listing.value;
    entry.exists = l.exists;
    if (l.lastModText !== undefined) entry.lastMod = l.lastModText;
    else if (l.mtime) entry.lastMod = l.mtime.text;
    if (!l.exists) continue;
    existing++;
    const printed = l.lastModText ?? l.mtime?.text ?? 'missing';
    if (!isValidInstant(l.mtime)) {
      c.fail(`the modification time of ${f.path} could not be parsed (${printed})`);
      complete = false;
      continue;
    }
    const mtime = l.mtime;
    let status: Instant | undefined;
    if (f.status !== undefined) {
      if (!f.status.ok) c.missing(`the etcfilestatus of ${f.path} could not be read: ${f.status.error}`);
      else if (!isValidInstant(f.status.value.updated)) c.fail(`the etcfilestatus of ${f.path} could not be parsed`);
      else {
        status = f.status.value.updated;
        entry.updated = status.text;
      }
      if (!status) {
        complete = false;
        continue;
      }
    }
    let latestMs: number;
    const via: ReadPath[] = [mtime.via];
    if (status?.via === 'api') {
      via.splice(0, 1, 'api');
      if (mtime.earliestMs > status.latestMs) {
        c.fail(
          `${f.path} was modified at ${mtime.text}, after its EtcFileStatus was recorded (${status.text}): ` +
            'something other than the Talos controller wrote it, so its last write is not bounded',
        );
        complete = false;
        continue;
      }
      latestMs = status.latestMs;
    } else if (mtime.via === 'api' && !status) {
      c.missing(`${f.path} has no EtcFileStatus reading, and its whole-second modification time cannot order the write`);
      complete = false;
      continue;
    } else {
      latestMs = status ? Math.max(mtime.latestMs, status.latestMs) : mtime.latestMs;
      if (status) via.push(status.via);
    }
    const w: WriteInstant = { earliestMs: Math.min(mtime.earliestMs, latestMs), latestMs, path: f.path, via };
    entry.latestWrite = iso(w.latestMs);
    perFile.push(w);
  }

  if (r.files.length > 0 && existing === 0 && r.files.every((f) => f.listing.ok)) {
    c.missing(`none of the CRI config files exists (${r.files.map((f) => f.path).join(', ')})`);
  }
  if (!complete || perFile.length === 0) return { perFile };
  // the newest write over all files: its latest is the max of the latests, its earliest the max of the earliests
  const newest = perFile.reduce((a, b) => (b.latestMs > a.latestMs ? b : a));
  const latest: WriteInstant = {
    earliestMs: Math.max(...perFile.map((w) => w.earliestMs)),
    latestMs: newest.latestMs,
    path: newest.path,
    via: perFile.flatMap((w) => w.via),
  };
  values.configWrittenLatest = iso(latest.latestMs);
  values.configWrittenEarliest = iso(latest.earliestMs);
  values.configWrittenPath = latest.path;
  values.configWrite = { earliestMs: latest.earliestMs, latestMs: latest.latestMs };
  return { latest, perFile };
}

/**
 * Rule 4 — the config carries exactly the desired credential.
 *
 * EVERY existing file must have been read and must carry an auth entry for `desired.tomlHost`
 * (`registry-1.docker.io` for docker.io) whose four fields equal the desired ones exactly:
 * - an entry that differs → "holds an old credential": whatever containerd loaded at its start, it was
 *   not the desired one (contradicts). This closes the hole of a node rebooted for an unrelated reason
 *   AFTER the old credential was written, which "started after the last write" alone would skip.
 * - no entry for the host → reboot (contradicts: the file containerd reads lacks the credential).
 *   Stricter than "at least one file agrees": containerd reads cri.toml, so a part file agreeing while
 *   cri.toml does not is not proof.
 * - a file that could not be read → reboot (unproven, not contradicted).
 * Compared in memory only; reasons and values say 'desired' | 'old' | 'absent' | 'unknown', never a value.
 */
function checkCredential(
  r: EvidenceReadings,
  desired: DesiredCredential,
  c: Collector,
  fileValues: Map<ConfigFileReadings, EvidenceValues['files'][number]>,
): void {
  const host = desired.tomlHost;
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
    if (!Object.hasOwn(auth, host)) {
      entry.credential = 'absent';
      if (mustCarry) c.contradict(`${f.path} has no auth entry for ${host}`);
    } else if (!sameAuth(auth[host], desired.fields)) {
      entry.credential = 'old';
      if (mustCarry) c.contradict(`${f.path} holds an old credential for ${host}`);
    } else {
      entry.credential = 'desired';
    }
  }
}

/**
 * Rule 5 — the node clock gives no reason for doubt. Every instant compared is machined's wall clock,
 * and Talos's time sync STEPS the clock when the offset exceeds 400 ms (slewing below that, which
 * never reverses the order of two instants): a backward step between a launch and a later write can
 * stamp the launch after the write. No margin covers a step (its size is unbounded up to 15 min), so:
 * - the time status must be read, synced, and at epoch 0 (the epoch counts jumps > 15 min);
 * - no instant may lie in the node's future: later than the runner's clock after the read plus a
 *   tolerance for ordinary skew. A node clock ahead of the runner is the one that will step back.
 * A doubted clock makes the ordering undecidable, in both directions: it never skips and never
 * proves "before" either.
 */
function checkClock(
  r: EvidenceReadings,
  start: StartInstant | undefined,
  writes: WriteInstant[],
  values: EvidenceValues,
  c: Collector,
): void {
  if (!r.timeStatus.ok) {
    c.doubtClock(`the node time status could not be read: ${r.timeStatus.error}`);
    c.missing(`the node time status could not be read: ${r.timeStatus.error}`);
  } else {
    values.timeSynced = r.timeStatus.value.synced;
    values.timeEpoch = r.timeStatus.value.epoch;
    if (r.timeStatus.value.synced !== true) c.doubtClock('the node clock is not synced');
    if (r.timeStatus.value.epoch !== 0) {
      c.doubtClock(`the node clock jumped by more than 15 minutes since boot (time epoch ${r.timeStatus.value.epoch})`);
    }
  }
  if (!r.criService.ok) return; // no runner window to compare with; rule 1 already failed
  const after = r.criService.value.clientAfterMs;
  const limit = after + NODE_FUTURE_TOLERANCE_MS;
  for (const w of writes) {
    if (w.latestMs > limit) {
      c.doubtClock(
        `${w.path} was written up to ${iso(w.latestMs)}, after the runner's now (${iso(after)}): the node clock is ahead or stepped`,
      );
    }
  }
  if (start && start.latestMs > limit) {
    c.doubtClock(
      `containerd (PID ${start.pid}) started up to ${iso(start.latestMs)}, after the runner's now (${iso(after)}): the node clock is ahead or stepped`,
    );
  }
}

function readPathOf(paths: ReadPath[]): ReadPath | 'mixed' | undefined {
  const set = new Set(paths);
  if (set.size === 0) return undefined;
  return set.size === 1 ? paths[0] : 'mixed';
}

/**
 * The verdict. `skip` iff rules 1–5 (and 2b for a reading after the credential patch) hold AND start.earliest − write.latest > margin (strictly): a
 * pair within the margin, a tie, or overlapping bounds cannot be ordered and means `reboot`. The gap
 * is reported as the whole range the bounds allow, [start.earliest − write.latest, start.latest −
 * write.earliest], with the path that read it. `ordering` and `contradicts` say, for a `reboot`,
 * whether the readings disprove the credential being loaded or merely fail to prove it.
 * `values` carries everything read and compared, whatever the verdict.
 */
export function rebootEvidence(
  r: EvidenceReadings,
  desired: DesiredCredential,
  opts: {
    marginMs: number;
    /** set on a reading after the credential patch: the launch the reading before the patch placed (rule 2b) */
    afterPatch?: { before: CriLaunch | undefined };
  },
): EvidenceVerdict {
  const marginMs = opts.marginMs;
  const values: EvidenceValues = { marginMs, files: [] };
  const failures: string[] = [];
  let contradicts = false;
  let clockDoubted = false;
  let incomplete: string | undefined;
  const c: Collector = {
    fail: (reason) => failures.push(reason),
    contradict: (reason) => {
      contradicts = true;
      failures.push(reason);
    },
    doubtClock: (reason) => {
      clockDoubted = true;
      failures.push(reason);
    },
    missing: (reason) => {
      incomplete ??= reason;
      if (!failures.includes(reason)) failures.push(reason);
    },
  };
  if (r.talosVersion.ok) values.talosVersion = r.talosVersion.value;
  if (!Number.isFinite(marginMs) || marginMs < 0) c.fail(`the evidence margin (${marginMs} ms) is not a non-negative duration`);

  const fileValues = new Map<ConfigFileReadings, EvidenceValues['files'][number]>();
  checkCriService(r, values, c);
  const start = containerdStart(r, values, c);
  if (start) {
    values.criStartEarliest = iso(start.earliestMs);
    values.criStartLatest = iso(start.latestMs);
    values.criStartSource = start.source;
    values.criStart = { earliestMs: start.earliestMs, latestMs: start.latestMs };
  }
  if (opts.afterPatch) launchedAfterPatch(start, opts.afterPatch.before, values, c);
  const { latest: write, perFile } = configLastWrite(r, values, c, fileValues);
  checkCredential(r, desired, c, fileValues);
  checkClock(r, start, perFile, values, c);

  // Rule 6 — the order itself.
  let ordering: EvidenceOrdering = 'unknown';
  if (start && write) {
    const lowMs = start.earliestMs - write.latestMs;
    const highMs = start.latestMs - write.earliestMs;
    values.gapMs = lowMs;
    values.gap = { lowMs, highMs };
    values.readPath = readPathOf([...start.via, ...write.via]);
    const gap = `${formatGap(lowMs, highMs)} (read via ${values.readPath})`;
    if (clockDoubted) {
      ordering = 'undecidable';
    } else if (lowMs > marginMs) {
      ordering = 'after';
    } else if (highMs < 0) {
      ordering = 'before';
      c.contradict(
        `containerd (PID ${start.pid}) started before the last write of ${write.path} (start − write ${gap}), so it runs with an older config`,
      );
    } else {
      ordering = 'undecidable';
      c.fail(
        `containerd (PID ${start.pid}) started ${gap} after the last write of ${write.path}: not provably more than the ` +
          `${formatDuration(marginMs)} margin, so the order cannot be proven`,
      );
    }
  }

  if (failures.length === 0 && start && write && ordering === 'after') {
    return {
      verdict: 'skip',
      reason:
        `containerd PID ${start.pid} started ${formatGap(values.gap!.lowMs, values.gap!.highMs)} after the last config write ` +
        `(${write.path}, read via ${values.readPath}) and the config carries the desired credential for ${desired.tomlHost}`,
      values,
      ordering,
      contradicts: false,
    };
  }
  const verdict: EvidenceVerdict = {
    verdict: 'reboot',
    reason: failures[0] ?? 'the evidence is incomplete',
    values,
    ordering,
    contradicts,
  };
  if (incomplete !== undefined) verdict.incomplete = incomplete;
  return verdict;
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
