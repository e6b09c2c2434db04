// Evidence rules 1 and 2: the running containerd, its cri service state and when it was launched, as
// bounds placed from the cri service's event history (and ServicePID where the node offers it).
import { isValidInstant } from '../../core/instants.js';
import type { EvidenceReadings, Instant, ReadPath, ServiceEvent } from '../../core/model/readings.js';
import type { EvidenceValues } from '../../core/model/verdict.js';
import { iso, type StartInstant } from './bounds.js';
import type { Collector } from './collector.js';

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

const byTime = (a: ServiceEvent, b: ServiceEvent): number => a.at.earliestMs - b.at.earliestMs || a.at.latestMs - b.at.latestMs;

/**
 * Rule 1 — cri must be Running with health OK: a stopped, restarting or failing containerd proves
 * nothing about what it will load next, and a reading we could not take proves nothing at all.
 * cri not Running contradicts (no containerd holds anything); Running but unhealthy only fails.
 */
export function checkCriService(r: EvidenceReadings, values: EvidenceValues, c: Collector): void {
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
export function containerdStart(r: EvidenceReadings, values: EvidenceValues, c: Collector): StartInstant | undefined {
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
