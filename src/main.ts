// Inputs → config → adapters → rollout → report. Sets the outputs also when the step fails.
import * as core from '@actions/core';
import { Runner } from './adapters/exec.js';
import { Kubectl } from './adapters/kubectl.js';
import { openTalosClient } from './adapters/talos/open.js';
import { readConfig } from './config.js';
import { runFences } from './fences.js';
import { LeaseUnknownError, RunLock } from './lease.js';
import { readAuthPatch } from './credential.js';
import { errorMessage, RolloutError } from './errors.js';
import { annotationKeys } from './model.js';
import { formatOwnerToken, newOwnerToken } from './owner.js';
import { buildAnnotations } from './report/annotations.js';
import { formatCommandLine } from './report/log.js';
import { NodeLogs } from './report/nodeLog.js';
import { buildOutputs } from './report/outputs.js';
import { renderSummary } from './report/summary.js';
import { realClock } from './clock.js';
import type { RunLockLike } from './pipeline/context.js';
import { runRollout, type RolloutResult } from './pipeline/run.js';
import { saveAccess, saveHeld, saveLease } from './state.js';

export async function run(): Promise<void> {
  const runner = new Runner();
  let cancelled = false;
  const onSignal = (sig: string) => {
    // Stop starting steps, end the running tool, and let the post step clean up.
    core.warning(`received ${sig}: stopping after the current command`);
    cancelled = true;
    runner.cancel();
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));

  let config;
  let parsed;
  try {
    config = readConfig((name) => core.getInput(name));
    parsed = readAuthPatch(config.authPatch, config.registry, (s) => {
      core.setSecret(s);
      runner.addSecret(s);
    });
  } catch (e) {
    failBeforeAnything(e);
    return;
  }

  const stopPlainLog = runner.onCommand((rec) => core.info(formatCommandLine(rec)));

  if (config.mode === 'fences' || config.mode === 'recover-fences') {
    if (config.githubToken) core.setSecret(config.githubToken);
    const kubeForFences = new Kubectl({ runner, kubeconfig: config.kubeconfig, context: config.kubeContext });
    try {
      // Loaded only here: the GitHub client (octokit, undici) is most of the bundle's start-up cost,
      // and apply/plan never need it.
      const { GitHubRuns } = await import('./adapters/github.js');
      const res = await runFences({
        mode: config.mode,
        kube: kubeForFences,
        runs: new GitHubRuns(config.githubToken),
        config,
        clock: realClock,
      });
      for (const a of res.actions) core.info(a);
      for (const r of res.refused) core.warning(`${r.reason}`, { title: `${r.node}: fence left in place` });
      core.setOutput('result', res.ok ? (res.releasedNodes.length || res.leaseReleased ? 'processed' : 'clean') : 'failed');
      core.setOutput('decisions', JSON.stringify(res.rows));
      core.setOutput('rebooted', '0');
      core.setOutput('reboots-skipped', '0');
      core.setOutput('refused', String(res.refused.length));
      await core.summary.addRaw(res.summaryHtml).write();
      if (!res.ok) core.setFailed(`recover-fences: ${res.failures.join('; ')}`);
    } catch (e) {
      core.setOutput('result', 'failed');
      core.setFailed(errorMessage(e));
    }
    return;
  }
  const owner = formatOwnerToken(newOwnerToken(process.env));
  core.info(`claim token for this run: ${owner}`);
  // Before anything can be held: the post step acts with exactly these, never with its own defaults.
  saveAccess(core, { annotationPrefix: config.annotationPrefix, kubeconfig: config.kubeconfig, kubeContext: config.kubeContext });
  // Several nodes run at once: each node's lines (its commands included) are buffered and written as
  // one contiguous group when it ends; step starts are shown at once, prefixed with the node.
  const logs = new NodeLogs({ info: (l) => core.info(l), startGroup: (t) => core.startGroup(t), endGroup: () => core.endGroup() });
  stopPlainLog();
  runner.onCommand((rec) => logs.line(formatCommandLine(rec)));
  const kube = new Kubectl({ runner, kubeconfig: config.kubeconfig, context: config.kubeContext });
  // API reads when the talosconfig context has a client certificate, talosctl otherwise; a context
  // whose credentials are present but unusable, or an endpoint whose certificate is not apid's for
  // it, fails here, before anything is mutated.
  let opened;
  try {
    opened = await openTalosClient({ runner, path: config.talosconfig, serverName: config.talosServerName });
  } catch (e) {
    failBeforeAnything(e);
    return;
  }
  core.info(opened.describe);
  const talos = opened.client;

  let outcome: RolloutResult;
  try {
    outcome = await runRollout({
      kube,
      talos,
      config,
      desired: parsed.desired,
      owner,
      keys: annotationKeys(config.annotationPrefix),
      // Test and demo knobs (the twin is faster than a cluster); production uses the defaults.
      pollIntervalMs: Number(process.env.RAR_POLL_INTERVAL_MS) || undefined,
      relistPauseMs: process.env.RAR_RELIST_PAUSE_MS === undefined ? 5000 : Number(process.env.RAR_RELIST_PAUSE_MS),
      log: {
        info: (m) => logs.info(m),
        group: (title) => {
          core.startGroup(title);
          return () => core.endGroup();
        },
      },
      nodeLogs: logs,
      publishHeld: (held) => saveHeld(core, held),
      cancelled: () => cancelled,
      lock:
        config.mode === 'apply'
          ? trackedLock(
              new RunLock({
                kube,
                namespace: config.leaseNamespace,
                name: config.leaseName,
                owner,
                clock: realClock,
                log: (m) => core.info(m),
                renewEveryMs: Number(process.env.RAR_LEASE_RENEW_MS) || undefined,
              }),
              config.leaseNamespace,
              config.leaseName,
              owner,
            )
          : undefined,
    });
  } catch (e) {
    outcome = { result: 'failed', records: [], notReached: [], upToDate: [], error: e instanceof Error ? e : new Error(String(e)) };
  } finally {
    // the API connection would keep the process alive
    opened.close();
  }

  const { redactor } = runner;
  const outputs = buildOutputs(outcome.result, outcome.records, {
    redactor,
    left: outcome.notReached.length,
    inFlightMax: outcome.inFlightMax ?? 0,
  });
  for (const [k, v] of Object.entries(outputs)) core.setOutput(k, v);

  for (const a of buildAnnotations(outcome.records, { redactor })) {
    const props = { title: a.title };
    if (a.kind === 'notice') core.notice(a.message, props);
    else if (a.kind === 'warning') core.warning(a.message, props);
    else core.error(a.message, props);
  }

  try {
    const html = renderSummary(
      {
        mode: config.mode === 'plan' ? 'plan' : 'apply',
        registry: parsed.desired.host,
        revision: config.revision,
        result: outcome.result,
        records: outcome.records,
        notReached: outcome.notReached,
        upToDate: outcome.upToDate,
        error: outcome.error?.message,
        talosReads: opened.describe,
        notice: outcome.notice,
        inFlightMax: outcome.inFlightMax,
        maxUnavailable: outcome.maxUnavailable,
        topologyKey: config.topologyKey,
      },
      { redactor },
    );
    await core.summary.addRaw(html).write();
  } catch (e) {
    core.warning(`could not write the job summary: ${errorMessage(e)}`);
  }

  if (outcome.result === 'clean') core.info(`every selected node already verified revision ${config.revision}: nothing to do`);
  if (outcome.result === 'partial') {
    const message = `${outcome.notReached.length} node(s) left for the next run (${outcome.notice ?? 'the time budget stopped the roll'}); every node started ended released or verified, and a rerun continues with the rest`;
    if (config.failOnPartial) core.setFailed(`${message} (fail-on-partial: true)`);
    else core.notice(message, { title: 'time-budget reached' });
  }
  if (outcome.error) {
    const e = outcome.error;
    core.setFailed(runner.mask(e instanceof RolloutError ? `${e.message}\nNext step: ${e.nextStep}` : e.message));
  }
}

/** An input error before anything ran: the outputs still say `failed` (a later step may read them). */
function failBeforeAnything(e: unknown): void {
  for (const [k, v] of Object.entries(buildOutputs('failed', []))) core.setOutput(k, v);
  core.setFailed(errorMessage(e));
}

/** The Lease, with its holding recorded in the step state so the post step can release it. */
function trackedLock(lock: RunLock, namespace: string, name: string, owner: string): RunLockLike {
  return {
    checkNotHeldByAnother: () => lock.checkNotHeldByAnother(),
    acquire: async () => {
      // Saved before the create or take is sent: a run killed mid-request may hold the Lease, and the
      // post step's release is a CAS on our token, harmless when the Lease is not ours. Forgotten only
      // when the acquisition is known to have failed.
      saveLease(core, { namespace, name, owner });
      try {
        await lock.acquire();
      } catch (e) {
        if (!(e instanceof LeaseUnknownError)) saveLease(core, undefined);
        throw e;
      }
    },
    startRenewing: () => lock.startRenewing(),
    assertHeld: () => lock.assertHeld(),
    ref: lock.ref,
    confirm: (read) => lock.confirm(read),
    release: async () => {
      const r = await lock.release();
      saveLease(core, undefined);
      return r;
    },
    stop: () => lock.stop(),
  };
}
