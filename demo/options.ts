// The demo's command line: one table of options (the parser and --help are both built from it), the
// scenarios listed from demo/scenarios.ts, and `--input name=value` checked against action.yml's
// inputs. Every mistake is a `UsageError` naming what was wrong, before a twin is started.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../runner/runAction.js';
import type { Scenario } from './scenarios.js';

/** A mistake on the command line: printed with a pointer to --help, exit status 2. */
export class UsageError extends Error {}

export interface DemoOptions {
  mode: string;
  scenario: string;
  /** the cluster's size: undefined for the default six nodes */
  nodes?: number;
  verbose: boolean;
  keep: boolean;
  maxUnavailable: string;
  topologyKey?: string;
  /** action inputs from --input, applied over the scenario's */
  inputs: Record<string, string>;
}

interface OptionRow {
  name: string;
  short?: string;
  type: 'string' | 'boolean';
  multiple?: boolean;
  value?: string;
  help: string;
}

const OPTIONS: OptionRow[] = [
  { name: 'scenario', type: 'string', value: 'NAME', help: 'the situation to run (below); default: default, or plan with --mode plan' },
  { name: 'mode', type: 'string', value: 'MODE', help: 'the action input mode: apply (default), plan or fences' },
  { name: 'nodes', type: 'string', value: 'N', help: 'a bigger cluster: 3 control planes and N-3 workers (4-500)' },
  { name: 'max-unavailable', type: 'string', value: 'N|P%', help: 'nodes rolled at once (the input of the same name; default 1)' },
  { name: 'topology-key', type: 'string', value: 'KEY', help: 'workers spread over 3 zones under KEY, one zone out at a time' },
  {
    name: 'input',
    type: 'string',
    multiple: true,
    value: 'NAME=VALUE',
    help: "any input of action.yml, over the scenario's and the options above (repeatable)",
  },
  { name: 'verbose', type: 'boolean', help: 'every line the action writes, every command with its duration' },
  { name: 'keep', type: 'boolean', help: 'after the run, keep the twin up to try kubectl and talosctl on it, until Ctrl-C' },
  { name: 'help', short: 'h', type: 'boolean', help: 'this text' },
];

/** The --help text: usage, the options, each scenario on one line. */
export function helpText(scenarios: Record<string, Scenario>): string {
  const flag = (o: OptionRow) => `${o.short ? `-${o.short}, ` : '    '}--${o.name}${o.value ? ` ${o.value}` : ''}`;
  const width = Math.max(...OPTIONS.map((o) => flag(o).length));
  const nameWidth = Math.max(...Object.keys(scenarios).map((n) => n.length));
  return [
    'usage: npm run demo -- [options]',
    '',
    'Starts the cluster twin (a simulated kube-apiserver driven by the real kubectl, the Talos API),',
    'runs the bundled action (dist/index.js) on it as a GitHub runner would, and prints what a user sees.',
    '',
    'options:',
    ...OPTIONS.map((o) => `  ${flag(o).padEnd(width)}  ${o.help}`),
    '',
    'scenarios:',
    ...Object.entries(scenarios).map(([name, s]) => `  ${name.padEnd(nameWidth)}  ${scenarioLine(s)}`),
    '',
    'More: docs/demo.md',
    '',
  ].join('\n');
}

/** A scenario on one line: its summary, or the start of its description. */
function scenarioLine(s: Scenario): string {
  if (s.summary) return s.summary;
  const first = s.description.split(/: |; /)[0];
  return first.length <= 100 ? first : `${first.slice(0, 99)}…`;
}

/** The inputs action.yml declares, in its order. */
export function actionInputNames(): string[] {
  const action = parseYaml(readFileSync(join(repoRoot, 'action.yml'), 'utf8')) as { inputs?: Record<string, unknown> };
  return Object.keys(action.inputs ?? {});
}

/**
 * The command line → the demo's options, or 'help'. Throws a `UsageError` naming the option, scenario
 * or input that is wrong.
 */
export function parseDemoArgs(argv: string[], scenarios: Record<string, Scenario>, inputNames: string[]): DemoOptions | 'help' {
  let values: Record<string, string | boolean | Array<string | boolean> | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: Object.fromEntries(
        OPTIONS.map((o) => [o.name, { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) }]),
      ),
    }));
  } catch (e) {
    // node:util's messages name the option ("Unknown option '--kep'"); its stack is of no use to a user
    throw new UsageError((e as Error).message.replace(/\. To specify a positional argument starting with a '-'.*$/s, ''));
  }
  if (values.help) return 'help';
  const inputs: Record<string, string> = {};
  for (const pair of (values.input as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--input "${pair}": expected NAME=VALUE`);
    const name = pair.slice(0, eq);
    if (!inputNames.includes(name))
      throw new UsageError(`--input ${name}: not an input of action.yml (its inputs: ${inputNames.join(', ')})`);
    inputs[name] = pair.slice(eq + 1);
  }
  // --input mode=… is the mode, as --mode is: it picks the default scenario too
  const mode = inputs.mode ?? (values.mode as string | undefined) ?? 'apply';
  if (!['apply', 'plan', 'fences'].includes(mode)) throw new UsageError(`--mode must be apply, plan or fences (got "${mode}")`);
  const scenario = (values.scenario as string | undefined) ?? (mode === 'plan' ? 'plan' : 'default');
  if (!Object.hasOwn(scenarios, scenario))
    throw new UsageError(`--scenario ${scenario}: no such scenario (known: ${Object.keys(scenarios).join(', ')})`);
  const nodesText = values.nodes as string | undefined;
  const nodes = nodesText === undefined ? undefined : Number(nodesText);
  if (nodes !== undefined && (!/^\d+$/.test(nodesText!) || nodes < 4 || nodes > 500))
    throw new UsageError(`--nodes must be a whole number from 4 to 500 (got "${nodesText}")`);
  return {
    mode,
    scenario,
    nodes,
    verbose: values.verbose === true,
    keep: values.keep === true,
    maxUnavailable: (values['max-unavailable'] as string | undefined) ?? '1',
    topologyKey: values['topology-key'] as string | undefined,
    inputs,
  };
}
