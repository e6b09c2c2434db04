// End to end: a tool error that echoes the credential. `talosctl patch machineconfig` fails and its
// error text carries the patch file and forms derived from the credential in it; none of them may
// reach the log, the job summary, the outputs, the annotations or the saved state, in any form.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CREDENTIAL, type SimCluster } from '../../sim/cluster.js';
import { SIM_CLUSTER_SECRET, SIM_MACHINE_TOKEN } from '../../sim/talos/machineconfig.js';
import { act, byName, node, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const { username, password } = NEW_CREDENTIAL;
const FORMS: Record<string, string> = {
  password,
  'base64(password)': b64(password),
  'user:password': `${username}:${password}`,
  'base64(user:password)': b64(`${username}:${password}`),
  // over the API the failing call was sent the node's whole config, and its error echoes it: the
  // cluster's other credentials, read back from the node, must not leak either
  'the machine token': SIM_MACHINE_TOKEN,
  'the cluster secret': SIM_CLUSTER_SECRET,
};

describe('e2e: tool error text never carries the credential', () => {
  it('a failing patch whose error echoes the patch file and the derived forms: everything the run writes is redacted', async () => {
    const cluster = (c = await startCluster());
    const ip = cluster.talos.node('worker-1').ip;
    cluster.talos.failNext(
      { command: 'patch' },
      {
        exitCode: 1,
        // A validation error quoting the document it could not apply, and the auth it derived from it.
        stderrFrom: ({ patches }) =>
          `error patching machine config: 1 error occurred:\n\t* ${ip}: rpc error: code = InvalidArgument desc = ` +
          `failed to decode patch: yaml: unmarshal errors:\n${patches.join('\n')}\n` +
          `derived auth ${FORMS['base64(user:password)']} (${FORMS['user:password']}), token ${FORMS['base64(password)']}\n\n`,
      },
    );
    const run = await act(cluster, { nodes: 'worker-1' });

    // The failure itself is reported, with the tool's text (redacted) where a user looks for it.
    expect(run.exitCode, run.stdout).toBe(1);
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('failed');
    expect(d.reason).toContain('failed to decode patch');
    expect(d.reason).toContain('***');
    expect(run.summary).toContain('failed to decode patch');
    expect(run.annotations.some((a) => a.title.startsWith('worker-1') && a.message.includes('failed to decode patch'))).toBe(true);
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();

    // `::add-mask::` is how core.setSecret registers a value with the runner (which swallows the line).
    const stdout = run.stdout
      .split('\n')
      .filter((l) => !l.startsWith('::add-mask::'))
      .join('\n');
    const sinks: Record<string, string> = {
      stdout,
      stderr: run.stderr,
      summary: run.summary,
      outputs: JSON.stringify(run.outputs),
      annotations: JSON.stringify(run.annotations),
      state: JSON.stringify(run.state),
    };
    const leaks = Object.entries(sinks).flatMap(([sink, text]) =>
      Object.entries(FORMS)
        .filter(([, value]) => text.includes(value))
        .map(([form]) => `${form} in ${sink}`),
    );
    expect(leaks).toEqual([]);
  });
});
