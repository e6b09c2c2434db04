// The action's own port of the runner protocol (src/action/runnerCommands.ts) against @actions/core
// itself (a dev dependency kept for this comparison): the same stdout, the same file commands, the same
// inputs and states, the same errors, for texts that need every escape.
import * as core from '@actions/core';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runnerProtocol } from '../../src/action/runnerCommands.js';
import type { CorePort } from '../../src/action/masked.js';

const NASTY = 'line 1\nline 2\r\n100% done: a,b::c';
const ENV_KEYS = ['GITHUB_OUTPUT', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY', 'INPUT_DRAIN_TIMEOUT', 'STATE_held'];

let dir: string;
let saved: Record<string, string | undefined>;
let out: string[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rar-protocol-'));
  saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  out = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(dir, { recursive: true, force: true });
  process.exitCode = undefined;
});

/** What `act` writes through `port`: stdout, the three files (their delimiters made one), the exit code. */
async function effects(port: CorePort, act: (p: CorePort) => unknown | Promise<unknown>, files = true) {
  const names = ['GITHUB_OUTPUT', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY'] as const;
  for (const n of names) {
    if (files) {
      const f = join(dir, n);
      writeFileSync(f, '');
      process.env[n] = f;
    } else delete process.env[n];
  }
  out = [];
  process.exitCode = undefined;
  let thrown: string | undefined;
  try {
    await act(port);
  } catch (e) {
    thrown = (e as Error).message;
  }
  const sameDelimiter = (t: string) => t.replace(/ghadelimiter_[0-9a-f-]{36}/g, 'ghadelimiter_X');
  const written = files ? names.map((n) => sameDelimiter(readFileSync(join(dir, n), 'utf8'))) : [];
  return { stdout: out.join(''), written, exitCode: process.exitCode, thrown };
}

const real = core as unknown as CorePort;

describe("the runner protocol is @actions/core's", () => {
  const cases: Array<[string, (p: CorePort) => unknown]> = [
    ['info', (p) => p.info(NASTY)],
    ['notice with a title', (p) => p.notice(NASTY, { title: 'a: b, c' })],
    ['warning without properties', (p) => p.warning(NASTY)],
    ['warning with no title', (p) => p.warning(NASTY, {})],
    ['error with an empty title', (p) => p.error(NASTY, { title: '' })],
    ['a group', (p) => (p.startGroup(NASTY), p.endGroup())],
    ['add-mask', (p) => p.setSecret('s3cr%t\nx')],
    ['setFailed', (p) => p.setFailed(NASTY)],
    ['an output', (p) => p.setOutput('decisions', NASTY)],
    ['a state', (p) => p.saveState('held', NASTY)],
    ['the summary', (p) => p.summary.addRaw(`<table>${NASTY}</table>`).write()],
  ];
  for (const [name, act] of cases) {
    it(`${name}: the same stdout, files and exit code`, async () => {
      const ours = await effects(runnerProtocol, act);
      const theirs = await effects(real, act);
      expect(ours).toEqual(theirs);
      expect(ours.stdout + ours.written.join('')).not.toBe('');
    });
  }

  it('without the file-command variables: the legacy stdout commands, and the same summary error', async () => {
    for (const act of [(p: CorePort) => p.setOutput('result', NASTY), (p: CorePort) => p.saveState('held', 'x')]) {
      expect(await effects(runnerProtocol, act, false)).toEqual(await effects(real, act, false));
    }
    // @actions/core's summary remembers its file once found (a singleton), so its text is compared
    // with summary.js's message rather than with a second call
    const ours = await effects(runnerProtocol, (p) => p.summary.addRaw('x').write(), false);
    expect(ours.thrown).toBe(
      'Unable to find environment variable for $GITHUB_STEP_SUMMARY. Check if your runtime environment supports job summaries.',
    );
  });

  it('an output file that is gone: the same error', async () => {
    const gone = async (p: CorePort) => {
      process.env.GITHUB_OUTPUT = join(dir, 'missing');
      p.setOutput('x', 'y');
    };
    const ours = await effects(runnerProtocol, gone);
    expect(ours.thrown).toMatch(/Missing file at path/);
    expect(ours.thrown).toBe((await effects(real, gone)).thrown);
  });

  it('inputs (spaces to underscores, upper case, trimmed) and states', () => {
    process.env['INPUT_DRAIN_TIMEOUT'] = '  15m \n';
    process.env.STATE_held = '{"n":1}';
    for (const name of ['drain-timeout', 'drain timeout', 'Drain_Timeout', 'absent']) {
      expect(runnerProtocol.getInput(name)).toBe(core.getInput(name));
    }
    expect(runnerProtocol.getInput('drain timeout')).toBe('15m');
    expect(runnerProtocol.getState('held')).toBe(core.getState('held'));
    expect(runnerProtocol.getState('none')).toBe('');
  });
});
