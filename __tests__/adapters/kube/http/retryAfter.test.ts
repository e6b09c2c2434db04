// An answer's Retry-After reaches the one writer (src/pipeline/write.ts) through the error: the real
// `kubectl proxy` passes the header on, the client reads it into ToolError.retryAfterMs (whole seconds,
// as the API server writes it); a 429 and the 503 of an apiserver shutting down carry it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../../../src/adapters/exec.js';
import { HttpKube } from '../../../../src/adapters/kube/http/client.js';
import { retryAfterMs } from '../../../../src/adapters/kube/http/status.js';
import { ToolError } from '../../../../src/core/errors.js';
import { APISERVER_SHUTTING_DOWN } from '../../../../sim/kube/faults.js';
import { KubeSim } from '../../../../sim/kube/index.js';
import { findKubectl } from '../../../sim-kube/helpers.js';

let sim: KubeSim;
let kube: HttpKube;
let temp: string;

beforeAll(async () => {
  findKubectl();
  sim = await KubeSim.start({ heartbeatMs: 1000 });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  temp = mkdtempSync(join(tmpdir(), 'chan-'));
  kube = new HttpKube({ runner: new Runner(), kubeconfig: sim.kubeconfigPath, tempDir: temp });
});

afterAll(async () => {
  await kube?.close();
  await sim?.stop();
  rmSync(temp, { recursive: true, force: true });
});

const NODE = /^\/api\/v1\/nodes\/w-1$/;
const ADD = [{ op: 'add' as const, path: '/metadata/annotations/x.example~1a', value: 'v' }];

describe('Retry-After through the channel', () => {
  it('a 429 with Retry-After: 3 is too-many-requests with retryAfterMs 3000; the 503 of a restart server with 1000', async () => {
    sim.failNext(
      { method: 'PATCH', path: NODE },
      { status: 429, reason: 'TooManyRequests', message: 'Too many requests', retryAfterSeconds: 3 },
    );
    const e1 = await kube.patchNode('w-1', ADD).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(ToolError);
    expect(e1).toMatchObject({ kind: 'too-many-requests', retryAfterMs: 3000 });
    sim.failNext({ method: 'PATCH', path: NODE }, APISERVER_SHUTTING_DOWN);
    const e2 = await kube.patchNode('w-1', ADD).catch((e: unknown) => e);
    expect(e2).toMatchObject({ kind: 'server', retryAfterMs: 1000 });
  });

  it('an answer without one carries none; only whole seconds are read', async () => {
    sim.failNext({ method: 'PATCH', path: NODE }, { status: 500, reason: '', message: 'etcdserver: request timed out' });
    const e = (await kube.patchNode('w-1', ADD).catch((x: unknown) => x)) as ToolError;
    expect(e.kind).toBe('server');
    expect(e.retryAfterMs).toBeUndefined();
    expect(retryAfterMs({ retryAfter: 'Wed, 21 Oct 2026 07:28:00 GMT' })).toBeUndefined();
    expect(retryAfterMs({ retryAfter: ' 2 ' })).toBe(2000);
  });
});
