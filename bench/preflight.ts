// 7. What the pre-flight check costs a run: the registry adapter's token flow (src/adapters/registry/
// tokenFlow.ts, as src/action/main.ts runs it) against the registry twin (sim/registry/: HTTPS on
// loopback, its own CA), with a manifest HEAD (three requests: /v2/, the token endpoint, the HEAD) and
// login only (two). It runs once per run, before the Lease, and never per node. The twin answers on
// loopback, so the figure is the action's own cost (TLS handshakes, JSON); a real registry adds its
// round trips, which the request count says how to add.
import { performance } from 'node:perf_hooks';
import { checkRegistry } from '../src/adapters/registry/tokenFlow.js';
import { parseImageRef } from '../src/core/imageRef.js';
import { judgePreflight } from '../src/rules/preflight.js';
import { RegistrySim } from '../sim/registry/server.js';
import { median, round } from './lib.js';

export interface PreflightCost {
  /** median ms of one check of one host */
  ms: number | null;
  /** HTTP requests of one check */
  requests: number;
}

export interface PreflightResult {
  withImage: PreflightCost;
  loginOnly: PreflightCost;
  runs: number;
  /** processes the check starts: none (undici, in this process) */
  processes: 0;
}

const CREDENTIAL = { username: 'ci-bot', password: 'bench-secret-0001', auth: '', identitytoken: '' };

export async function benchPreflight(progress: (msg: string) => void, runs = 20): Promise<PreflightResult> {
  const reg = await RegistrySim.start({
    username: CREDENTIAL.username,
    password: CREDENTIAL.password,
    repositories: { 'acme/app': ['1.4.2'] },
  });
  try {
    const http = { ca: reg.caPem, timeoutMs: 15_000 };
    const image = parseImageRef('preflight-image', `${reg.host}/acme/app:1.4.2`);
    const cost = async (withImage: boolean): Promise<PreflightCost> => {
      const target = { host: reg.host, apiHost: reg.host, credential: CREDENTIAL, ...(withImage ? { image } : {}) };
      const once = async () => {
        const before = reg.count();
        const t0 = performance.now();
        const check = await checkRegistry(target, http);
        const ms = performance.now() - t0;
        const v = judgePreflight(check);
        if (v.verdict !== 'ok') throw new Error(`the pre-flight bench's check was not ok: ${v.answered}`);
        return { ms, requests: reg.count() - before };
      };
      await once(); // warm: the first TLS context and JIT
      const all = [];
      for (let i = 0; i < runs; i++) all.push(await once());
      return { ms: round(median(all.map((a) => a.ms))), requests: all[0]!.requests };
    };
    const withImage = await cost(true);
    const loginOnly = await cost(false);
    progress(`pre-flight: ${withImage.ms} ms (${withImage.requests} requests) with a manifest HEAD, ${loginOnly.ms} ms login only`);
    return { withImage, loginOnly, runs, processes: 0 };
  } finally {
    await reg.stop();
  }
}
