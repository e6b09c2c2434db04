// The GitHub runner's protocol, the part the action speaks: inputs from INPUT_* variables, workflow
// commands on stdout (`::error title=…::message`, `::add-mask::`, `::group::`), and the file commands
// (GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY). Written here instead of importing @actions/core
// because that package loads its OIDC client, and with it all of undici, at start-up: about 50 ms of CPU
// on every start of the main and the post step, for a function the action never calls.
//
// Behaviour is @actions/core 3.0.1's, line for line (lib/core.js, command.js, file-command.js,
// utils.js, summary.js; https://github.com/actions/toolkit/tree/main/packages/core), and the protocol
// is GitHub's: https://docs.github.com/actions/using-workflows/workflow-commands-for-github-actions.
// __tests__/action/runnerCommands.test.ts compares every function's effect with @actions/core's own.
import { randomUUID } from 'node:crypto';
import { appendFileSync, constants, existsSync, promises as fsp } from 'node:fs';
import { EOL } from 'node:os';

/** An annotation's properties as the action sets them. */
export interface AnnotationProps {
  title?: string;
}

/** The part of the runner's protocol the action uses (this file), or a recorder in tests; the masking port (src/action/masked.ts) wraps it. */
export interface CorePort {
  getInput(name: string): string;
  getState(name: string): string;
  setSecret(secret: string): void;
  info(message: string): void;
  notice(message: string, properties?: AnnotationProps): void;
  warning(message: string, properties?: AnnotationProps): void;
  error(message: string, properties?: AnnotationProps): void;
  startGroup(name: string): void;
  endGroup(): void;
  setOutput(name: string, value: string): void;
  setFailed(message: string): void;
  saveState(name: string, value: string): void;
  summary: { addRaw(text: string): { write(): Promise<unknown> } };
}

/** Values as @actions/core's toCommandValue makes them text. */
function commandValue(input: unknown): string {
  if (input === null || input === undefined) return '';
  if (typeof input === 'string' || input instanceof String) return String(input);
  return JSON.stringify(input);
}

function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/**
 * `::name key=value,…::message` on stdout. Properties with an empty value are left out, but the space
 * after the name is written whenever properties were given at all (`::error ::…` for an empty title),
 * as @actions/core writes it.
 */
export function commandLine(name: string, properties: Record<string, string | undefined>, message: string): string {
  const props = Object.entries(properties)
    .filter((e): e is [string, string] => Boolean(e[1]))
    .map(([k, v]) => `${k}=${escapeProperty(v)}`);
  const space = Object.keys(properties).length > 0 ? ' ' : '';
  return `::${name}${space}${props.join(',')}::${escapeData(commandValue(message))}`;
}

function issue(name: string, properties: Record<string, string | undefined>, message: string): void {
  process.stdout.write(commandLine(name, properties, message) + EOL);
}

/** `key<<ghadelimiter_<uuid>` … the value … the delimiter: a file command's multi-line form. */
export function keyValueMessage(key: string, value: string): string {
  const delimiter = `ghadelimiter_${randomUUID()}`;
  if (key.includes(delimiter)) throw new Error(`Unexpected input: name should not contain the delimiter "${delimiter}"`);
  if (value.includes(delimiter)) throw new Error(`Unexpected input: value should not contain the delimiter "${delimiter}"`);
  return `${key}<<${delimiter}${EOL}${value}${EOL}${delimiter}`;
}

function fileCommand(command: 'OUTPUT' | 'STATE', message: string): void {
  const path = process.env[`GITHUB_${command}`];
  if (!path) throw new Error(`Unable to find environment variable for file command ${command}`);
  if (!existsSync(path)) throw new Error(`Missing file at path: ${path}`);
  appendFileSync(path, `${message}${EOL}`, { encoding: 'utf8' });
}

/** A value the runner keeps: into its file when the runner names one, else the old stdout command. */
function keep(command: 'OUTPUT' | 'STATE', legacy: string, name: string, value: string): void {
  if (process.env[`GITHUB_${command}`]) return fileCommand(command, keyValueMessage(name, value));
  if (command === 'OUTPUT') process.stdout.write(EOL);
  issue(legacy, { name }, value);
}

async function appendSummary(text: string): Promise<void> {
  const path = process.env.GITHUB_STEP_SUMMARY;
  if (!path) {
    throw new Error(
      'Unable to find environment variable for $GITHUB_STEP_SUMMARY. Check if your runtime environment supports job summaries.',
    );
  }
  try {
    await fsp.access(path, constants.R_OK | constants.W_OK);
  } catch {
    throw new Error(`Unable to access summary file: '${path}'. Check if the file has correct read/write permissions.`);
  }
  await fsp.appendFile(path, text, { encoding: 'utf8' });
}

/** An annotation's properties as @actions/core's toCommandProperties gives them: none for an empty object. */
const annotation = (p: AnnotationProps | undefined): Record<string, string | undefined> =>
  p && Object.keys(p).length > 0 ? { title: p.title } : {};

/** The runner, as the action talks to it (no masking: src/action/masked.ts wraps this). */
export const runnerProtocol: CorePort = {
  getInput: (name) => (process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] || '').trim(),
  getState: (name) => process.env[`STATE_${name}`] || '',
  setSecret: (secret) => issue('add-mask', {}, secret),
  info: (message) => void process.stdout.write(message + EOL),
  notice: (message, p) => issue('notice', annotation(p), message),
  warning: (message, p) => issue('warning', annotation(p), message),
  error: (message, p) => issue('error', annotation(p), message),
  startGroup: (name) => issue('group', {}, name),
  endGroup: () => issue('endgroup', {}, ''),
  setOutput: (name, value) => keep('OUTPUT', 'set-output', name, commandValue(value)),
  setFailed: (message) => {
    process.exitCode = 1;
    issue('error', {}, message);
  },
  saveState: (name, value) => keep('STATE', 'save-state', name, commandValue(value)),
  summary: {
    addRaw: (text) => ({ write: () => appendSummary(text) }),
  },
};
