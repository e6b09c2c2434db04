// The twin puts its fake talosctl on PATH only where the action may need it: a talosconfig without a
// client certificate (api: false), or a test that asks for it (a patch of another form). With the API,
// the action's environment has no talosctl at all, so an e2e roll proves it never needs one.
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { SimCluster } from '../../sim/cluster.js';

let c: SimCluster | undefined;
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const whichTalosctl = (path: string) =>
  spawnSync('sh', ['-c', 'command -v talosctl'], { env: { PATH: path }, encoding: 'utf8' }).stdout.trim();

describe('the twin and talosctl on PATH', () => {
  it.each([
    { opts: {}, found: false },
    { opts: { api: false }, found: true },
    { opts: { talosctl: true }, found: true },
  ])('$opts: talosctl found $found', async ({ opts, found }) => {
    c = await SimCluster.start({ heartbeatMs: 60_000, ...opts });
    const which = whichTalosctl(c.env().PATH);
    if (found) expect(which).toBe(`${c.talos.binDir}/talosctl`);
    // a talosctl installed on the machine may still be found: never the twin's
    else expect(which).not.toBe(`${c.talos.binDir}/talosctl`);
  });
});
