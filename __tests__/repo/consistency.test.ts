// The repository as a user meets it: action.yml, the README's tables, the CI workflows, the example
// workflows a user copies and deploy/rbac.yaml must agree with each other. Each check collects every
// mismatch it finds and fails once with the whole list, so one run shows everything to fix.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parseDocument } from 'yaml';

const ROOT = join(import.meta.dirname, '..', '..');
const ACTION_REF = /^devantler-tech\/talos-registry-auth-rollout@\S+$/i;

type Json = Record<string, unknown>;

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const asRecord = (v: unknown): Json => (isRecord(v) ? v : {});
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');
const rel = (file: string): string => relative(ROOT, file);

function filesUnder(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  const out: string[] = [];
  for (const name of readdirSync(abs).sort()) {
    const p = join(abs, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(relative(ROOT, p)));
    else out.push(p);
  }
  return out;
}

interface Parsed {
  file: string;
  text: string;
  data: Json;
}

/** Parses one YAML document; every parse error and warning becomes a problem. */
function parseYamlFile(file: string, problems: string[]): Parsed | undefined {
  if (!existsSync(file)) {
    problems.push(`${rel(file)}: missing`);
    return undefined;
  }
  const text = readFileSync(file, 'utf8');
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  for (const e of doc.errors) problems.push(`${rel(file)}: YAML error: ${e.message}`);
  for (const w of doc.warnings) problems.push(`${rel(file)}: YAML warning: ${w.message}`);
  if (doc.errors.length) return undefined;
  const data: unknown = doc.toJS();
  if (!isRecord(data)) {
    problems.push(`${rel(file)}: the document is not a mapping`);
    return undefined;
  }
  return { file, text, data };
}

function loadAction(problems: string[]): Parsed | undefined {
  return parseYamlFile(join(ROOT, 'action.yml'), problems);
}

interface ActionInput {
  required: boolean;
  default: string | undefined;
}

function actionInputs(action: Parsed): Map<string, ActionInput> {
  const out = new Map<string, ActionInput>();
  for (const [name, spec] of Object.entries(asRecord(action.data.inputs))) {
    const s = asRecord(spec);
    out.set(name, { required: s.required === true || s.required === 'true', default: 'default' in s ? str(s.default) : undefined });
  }
  return out;
}

const actionOutputs = (action: Parsed): string[] => Object.keys(asRecord(action.data.outputs));

/** The workflow's triggers as a list of event names (`on:` may be a string, a list or a map). */
function triggers(wf: Json): string[] {
  const on = wf.on;
  if (typeof on === 'string') return [on];
  if (Array.isArray(on)) return on.map(str);
  return Object.keys(asRecord(on));
}

interface Step {
  job: string;
  index: number;
  step: Json;
}

function steps(wf: Json): Step[] {
  const out: Step[] = [];
  for (const [job, spec] of Object.entries(asRecord(wf.jobs))) {
    asArray(asRecord(spec).steps).forEach((s, index) => out.push({ job, index, step: asRecord(s) }));
  }
  return out;
}

const stepName = (s: Step): string =>
  `jobs.${s.job}.steps[${s.index}]${typeof s.step.id === 'string' ? ` (id ${s.step.id})` : typeof s.step.name === 'string' ? ` (${s.step.name})` : ''}`;
const usesAction = (s: Step): boolean => {
  const uses = str(s.step.uses).trim();
  return ACTION_REF.test(uses) || uses === './' || uses === '.';
};

function workflowFiles(problems: string[]): Parsed[] {
  const files = [...filesUnder('.github/workflows'), ...filesUnder('examples')];
  if (!files.some((f) => rel(f).startsWith('.github/workflows/'))) problems.push('.github/workflows/: no workflow files');
  if (!files.some((f) => rel(f).startsWith('examples/'))) problems.push('examples/: no example workflows');
  const out: Parsed[] = [];
  for (const f of files) {
    if (!/\.ya?ml$/.test(f)) {
      problems.push(`${rel(f)}: not a .yml/.yaml file`);
      continue;
    }
    const p = parseYamlFile(f, problems);
    if (p) out.push(p);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// README tables

/** Splits a markdown table row into trimmed cells; `|` inside backticks or escaped as `\|` is kept. */
function splitRow(line: string): string[] {
  const cells: string[] = [];
  let cur = '';
  let inCode = false;
  const body = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\' && body[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (c === '`') {
      inCode = !inCode;
      cur += c;
    } else if (c === '|' && !inCode) {
      cells.push(cur.trim());
      cur = '';
    } else {
      cur += c;
    }
  }
  cells.push(cur.trim());
  return cells;
}

interface Table {
  header: string[];
  rows: Array<{ line: number; cells: string[] }>;
}

/** The first markdown table whose header row starts with `| <first>` (case-insensitive). */
function findTable(markdown: string, first: string): Table | undefined {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^\\|\\s*${first}\\b`, 'i').test(l.trim()));
  if (start < 0) return undefined;
  const header = splitRow(lines[start]).map((h) => h.toLowerCase());
  const rows: Table['rows'] = [];
  for (let i = start + 2; i < lines.length && lines[i].trim().startsWith('|'); i++) rows.push({ line: i + 1, cells: splitRow(lines[i]) });
  return { header, rows };
}

const backticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

/** The values a default cell gives literally: one backticked value, or a comma-separated list of them. */
function literalDefault(cell: string): string[] | undefined {
  const t = cell.trim();
  if (!/^`[^`]*`(\s*,\s*`[^`]*`)*$/.test(t)) return undefined;
  return [...t.matchAll(/`([^`]*)`/g)].map((m) => m[1]);
}

/** A multi-line default (e.g. cri-config-paths) is a list of its non-blank lines. */
const defaultValues = (d: string): string[] =>
  d.includes('\n')
    ? d
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
    : [d];

function missingAndExtra(what: string, documented: string[], declared: string[], problems: string[]): void {
  const seen = new Set<string>();
  for (const n of documented) {
    if (seen.has(n)) problems.push(`README ${what} table lists \`${n}\` twice`);
    seen.add(n);
  }
  for (const n of declared) if (!seen.has(n)) problems.push(`README ${what} table is missing \`${n}\` (declared in action.yml)`);
  for (const n of seen) if (!declared.includes(n)) problems.push(`README ${what} table lists \`${n}\`, which action.yml does not declare`);
}

// ---------------------------------------------------------------------------------------------------

describe('action.yml', () => {
  it('parses and declares the node24 runtime with the main and post steps', () => {
    const problems: string[] = [];
    const action = loadAction(problems);
    if (action) {
      const runs = asRecord(action.data.runs);
      const want: Record<string, string> = { using: 'node24', main: 'dist/index.js', post: 'dist/cleanup.js', 'post-if': 'always()' };
      for (const [k, v] of Object.entries(want)) {
        if (str(runs[k]) !== v) problems.push(`action.yml: runs.${k} is ${JSON.stringify(runs[k] ?? null)}, expected ${JSON.stringify(v)}`);
      }
      for (const k of ['main', 'post']) {
        const target = str(runs[k]);
        if (target && !existsSync(join(ROOT, target))) problems.push(`action.yml: runs.${k} ${target} does not exist (run npm run build)`);
      }
      if (actionInputs(action).size === 0) problems.push('action.yml: no inputs');
      if (actionOutputs(action).length === 0) problems.push('action.yml: no outputs');
      for (const kind of ['inputs', 'outputs'] as const) {
        for (const [name, spec] of Object.entries(asRecord(action.data[kind]))) {
          if (!str(asRecord(spec).description).trim()) problems.push(`action.yml: ${kind}.${name} has no description`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('README', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  it('inputs table lists exactly the inputs of action.yml, with their defaults', () => {
    const problems: string[] = [];
    const action = loadAction(problems);
    const table = findTable(readme, 'input');
    if (!table) problems.push('README.md: no table whose header starts with `| input`');
    if (action && table) {
      const inputs = actionInputs(action);
      const defaultCol = table.header.indexOf('default');
      const documented: string[] = [];
      for (const row of table.rows) {
        const names = backticked(row.cells[0] ?? '');
        if (names.length === 0) problems.push(`README.md:${row.line}: inputs row without a backticked input name`);
        documented.push(...names);
        if (defaultCol < 0) continue;
        const cell = row.cells[defaultCol] ?? '';
        const saysRequired = /\brequired\b/i.test(cell);
        const literal = literalDefault(cell);
        for (const name of names) {
          const input = inputs.get(name);
          if (!input) continue;
          if (saysRequired !== input.required) {
            problems.push(
              `README.md:${row.line}: \`${name}\` is ${saysRequired ? '' : 'not '}marked required in the README but action.yml says required: ${String(input.required)}`,
            );
          }
          if (literal) {
            const want = input.default === undefined ? undefined : defaultValues(input.default);
            if (!want || JSON.stringify(want) !== JSON.stringify(literal)) {
              problems.push(
                `README.md:${row.line}: default of \`${name}\` is ${literal.map((v) => `\`${v}\``).join(', ')} in the README but ${want ? want.map((v) => `\`${v}\``).join(', ') : 'none'} in action.yml`,
              );
            }
          }
        }
      }
      if (defaultCol < 0) problems.push('README.md: the inputs table has no `default` column');
      missingAndExtra('inputs', documented, [...inputs.keys()], problems);
    }
    expect(problems).toEqual([]);
  });

  it('outputs table lists exactly the outputs of action.yml', () => {
    const problems: string[] = [];
    const action = loadAction(problems);
    const table = findTable(readme, 'output');
    if (!table) problems.push('README.md: no table whose header starts with `| output`');
    if (action && table) {
      const documented: string[] = [];
      for (const row of table.rows) {
        const names = backticked(row.cells[0] ?? '');
        if (names.length === 0) problems.push(`README.md:${row.line}: outputs row without a backticked output name`);
        documented.push(...names);
      }
      missingAndExtra('outputs', documented, actionOutputs(action), problems);
    }
    expect(problems).toEqual([]);
  });
});

describe('workflows and examples', () => {
  it('every file parses as YAML and is a workflow with triggers and jobs', () => {
    const problems: string[] = [];
    for (const wf of workflowFiles(problems)) {
      if (triggers(wf.data).length === 0) problems.push(`${rel(wf.file)}: no \`on:\` triggers`);
      if (Object.keys(asRecord(wf.data.jobs)).length === 0) problems.push(`${rel(wf.file)}: no jobs`);
    }
    expect(problems).toEqual([]);
  });

  it('every input passed to the action exists in action.yml, every required one is passed, every output read exists', () => {
    const problems: string[] = [];
    const action = loadAction(problems);
    const workflows = workflowFiles(problems);
    if (action) {
      const inputs = actionInputs(action);
      const outputs = new Set(actionOutputs(action));
      for (const wf of workflows) {
        for (const s of steps(wf.data).filter(usesAction)) {
          const where = `${rel(wf.file)} ${stepName(s)}`;
          const withKeys = Object.keys(asRecord(s.step.with));
          for (const k of withKeys) if (!inputs.has(k)) problems.push(`${where}: passes \`${k}\`, which is not an input of action.yml`);
          for (const [name, spec] of inputs) {
            if (spec.required && !withKeys.includes(name)) problems.push(`${where}: does not pass the required input \`${name}\``);
          }
          if (typeof s.step.id === 'string') {
            const id = s.step.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
            for (const m of wf.text.matchAll(new RegExp(`steps\\.${id}\\.outputs\\.([A-Za-z0-9_-]+)`, 'g'))) {
              if (!outputs.has(m[1])) problems.push(`${where}: reads output \`${m[1]}\`, which action.yml does not declare`);
            }
          }
        }
      }
    }
    for (const name of ['examples/merge-queue-deploy.yml', 'examples/manual-rerun.yml']) {
      const wf = workflows.find((w) => rel(w.file) === name);
      if (!wf) problems.push(`${name}: missing`);
      else if (!steps(wf.data).some(usesAction)) problems.push(`${name}: no step uses devantler-tech/talos-registry-auth-rollout`);
    }
    expect(problems).toEqual([]);
  });

  it('every `inputs.<name>` a dispatchable workflow reads is declared', () => {
    const problems: string[] = [];
    for (const wf of workflowFiles(problems)) {
      const on = asRecord(wf.data.on);
      const declared = new Set([
        ...Object.keys(asRecord(asRecord(on.workflow_dispatch).inputs)),
        ...Object.keys(asRecord(asRecord(on.workflow_call).inputs)),
      ]);
      for (const m of wf.text.matchAll(/\binputs\.([A-Za-z0-9_-]+)/g)) {
        if (!declared.has(m[1])) problems.push(`${rel(wf.file)}: reads \`inputs.${m[1]}\`, which the workflow does not declare`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every action is pinned to a version, and every npm script and shell script a workflow runs exists', () => {
    const problems: string[] = [];
    const pkg = asRecord(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as unknown);
    const scripts = asRecord(pkg.scripts);
    for (const wf of workflowFiles(problems)) {
      const ours = rel(wf.file).startsWith('.github/workflows/');
      for (const s of steps(wf.data)) {
        const uses = str(s.step.uses).trim();
        if (uses && !uses.startsWith('./') && uses !== '.' && !uses.startsWith('docker://')) {
          const ref = uses.split('@')[1] ?? '';
          if (!/^v\d+(\.\d+){0,2}$/.test(ref) && !/^[0-9a-f]{40}$/.test(ref)) {
            problems.push(`${rel(wf.file)} ${stepName(s)}: \`${uses}\` is not pinned to a version tag (vN) or a commit SHA`);
          }
        }
        // The examples run in the user's repository; only this repository's workflows run its scripts.
        if (!ours) continue;
        const run = str(s.step.run);
        for (const m of run.matchAll(/\bnpm run ([A-Za-z0-9:_-]+)/g)) {
          if (!(m[1] in scripts))
            problems.push(`${rel(wf.file)} ${stepName(s)}: runs \`npm run ${m[1]}\`, but package.json has no such script`);
        }
        if (/\bnpm (test|t)\b/.test(run) && !('test' in scripts))
          problems.push(`${rel(wf.file)} ${stepName(s)}: runs \`npm test\`, but package.json has no test script`);
        for (const m of run.matchAll(/\bbash ((?:scripts|\.ci)\/[A-Za-z0-9_./-]+)/g)) {
          if (!existsSync(join(ROOT, m[1]))) problems.push(`${rel(wf.file)} ${stepName(s)}: runs \`bash ${m[1]}\`, which does not exist`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('ci.yml runs on merge_group, pull_request and push, on Node 20 and 24, with read-only permissions', () => {
    const problems: string[] = [];
    const ci = parseYamlFile(join(ROOT, '.github/workflows/ci.yml'), problems);
    if (ci) {
      const on = triggers(ci.data);
      for (const t of ['merge_group', 'pull_request', 'push']) if (!on.includes(t)) problems.push(`ci.yml: does not trigger on ${t}`);
      const versions = new Set<string>();
      for (const [jobId, job] of Object.entries(asRecord(ci.data.jobs))) {
        const matrix = asRecord(asRecord(asRecord(job).strategy).matrix);
        for (const s of asArray(asRecord(job).steps).map(asRecord)) {
          if (!/^actions\/setup-node@/.test(str(s.uses))) continue;
          const v = str(asRecord(s.with)['node-version']);
          const ref = /^\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}$/.exec(v.trim());
          const values = ref
            ? [...asArray(matrix[ref[1]]), ...asArray(matrix.include).map((i) => asRecord(i)[ref[1]])].map(str).filter(Boolean)
            : [v];
          if (ref && values.length === 0)
            problems.push(`ci.yml: jobs.${jobId} sets node-version from matrix.${ref[1]}, which has no values`);
          for (const x of values) versions.add(x.replace(/\.x$/, ''));
        }
      }
      for (const want of ['20', '24'])
        if (!versions.has(want))
          problems.push(`ci.yml: no actions/setup-node step on Node ${want} (found: ${[...versions].join(', ') || 'none'})`);
      const runs = steps(ci.data)
        .map((s) => str(s.step.run))
        .join('\n');
      for (const cmd of ['npm ci', 'npm run lint', 'npm run format:check', 'npx tsc --noEmit', 'npm run test:all']) {
        if (!runs.includes(cmd)) problems.push(`ci.yml: no step runs \`${cmd}\``);
      }
      const perms = ci.data.permissions;
      if (!isRecord(perms) || perms.contents !== 'read' || Object.values(perms).some((v) => v === 'write')) {
        problems.push(`ci.yml: top-level permissions should be { contents: read }, found ${JSON.stringify(perms ?? null)}`);
      }
      if (!isRecord(ci.data.concurrency) && typeof ci.data.concurrency !== 'string') problems.push('ci.yml: no concurrency group');
    }
    const dist = parseYamlFile(join(ROOT, '.github/workflows/check-dist.yml'), problems);
    if (dist) {
      const on = triggers(dist.data);
      for (const t of ['merge_group', 'pull_request', 'push'])
        if (!on.includes(t)) problems.push(`check-dist.yml: does not trigger on ${t}`);
      const all = steps(dist.data);
      if (!all.some((s) => str(s.step.run).includes('bash scripts/check-dist.sh')))
        problems.push('check-dist.yml: no step runs `bash scripts/check-dist.sh`');
      const upload = all.find((s) => /^actions\/upload-artifact@/.test(str(s.step.uses)));
      if (!upload) problems.push('check-dist.yml: does not upload the rebuilt dist/');
      else if (!str(upload.step.if).includes('failure()')) problems.push('check-dist.yml: the dist/ upload should run only on failure');
    }
    expect(problems).toEqual([]);
  });

  it('the examples: a merge_group deploy and a workflow_dispatch rerun with mode, nodes and reboot', () => {
    const problems: string[] = [];
    const deploy = parseYamlFile(join(ROOT, 'examples/merge-queue-deploy.yml'), problems);
    const rerun = parseYamlFile(join(ROOT, 'examples/manual-rerun.yml'), problems);
    for (const wf of [deploy, rerun]) {
      if (!wf) continue;
      const perms = asRecord(wf.data.permissions);
      if (perms.contents !== 'read' || perms.actions !== 'read' || Object.keys(perms).length !== 2) {
        problems.push(
          `${rel(wf.file)}: permissions should be exactly { contents: read, actions: read }, found ${JSON.stringify(wf.data.permissions ?? null)}`,
        );
      }
      if (!wf.data.concurrency) problems.push(`${rel(wf.file)}: no concurrency group (two rolls must not overlap)`);
    }
    if (deploy && !triggers(deploy.data).includes('merge_group'))
      problems.push('examples/merge-queue-deploy.yml: does not trigger on merge_group');
    if (rerun) {
      const dispatch = asRecord(asRecord(rerun.data.on).workflow_dispatch);
      if (!triggers(rerun.data).includes('workflow_dispatch'))
        problems.push('examples/manual-rerun.yml: does not trigger on workflow_dispatch');
      const inputs = asRecord(dispatch.inputs);
      const choice = (name: string, options: string[]): void => {
        const spec = asRecord(inputs[name]);
        const got = asArray(spec.options).map(str);
        if (spec.type !== 'choice' || JSON.stringify([...got].sort()) !== JSON.stringify([...options].sort())) {
          problems.push(
            `examples/manual-rerun.yml: input \`${name}\` should be a choice of ${options.join(', ')}, found ${JSON.stringify(spec)}`,
          );
        }
      };
      choice('mode', ['plan', 'apply', 'fences', 'recover-fences']);
      choice('reboot', ['evidence', 'always']);
      if (asRecord(inputs.nodes).type !== 'string') problems.push('examples/manual-rerun.yml: input `nodes` should be a string');
      const step = steps(rerun.data).find(usesAction);
      const passed = asRecord(step?.step.with);
      for (const name of ['mode', 'nodes', 'reboot']) {
        if (!new RegExp(`\\$\\{\\{\\s*(github\\.event\\.)?inputs\\.${name}\\s*\\}\\}`).test(str(passed[name]))) {
          problems.push(
            `examples/manual-rerun.yml: the action step should pass \`${name}: \${{ inputs.${name} }}\`, found ${JSON.stringify(passed[name] ?? null)}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('deploy/rbac.yaml', () => {
  interface Rule {
    apiGroups: string[];
    resources: string[];
    verbs: string[];
    resourceNames: string[];
  }
  const load = (problems: string[]): { objects: Json[]; rules: Array<{ kind: string; name: string; namespace: string; rule: Rule }> } => {
    const file = join(ROOT, 'deploy/rbac.yaml');
    if (!existsSync(file)) {
      problems.push('deploy/rbac.yaml: missing');
      return { objects: [], rules: [] };
    }
    const objects: Json[] = [];
    for (const [i, doc] of parseAllDocuments(readFileSync(file, 'utf8'), { uniqueKeys: true }).entries()) {
      for (const e of doc.errors) problems.push(`deploy/rbac.yaml document ${i + 1}: YAML error: ${e.message}`);
      const data: unknown = doc.toJS();
      if (data === null || data === undefined) continue;
      if (!isRecord(data)) problems.push(`deploy/rbac.yaml document ${i + 1}: not a mapping`);
      else objects.push(data);
    }
    const rules = objects
      .filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')
      .flatMap((o) =>
        asArray(o.rules).map((r) => {
          const x = asRecord(r);
          return {
            kind: str(o.kind),
            name: str(asRecord(o.metadata).name),
            namespace: str(asRecord(o.metadata).namespace),
            rule: {
              apiGroups: asArray(x.apiGroups).map(str),
              resources: asArray(x.resources).map(str),
              verbs: asArray(x.verbs).map(str),
              resourceNames: asArray(x.resourceNames).map(str),
            },
          };
        }),
      );
    return { objects, rules };
  };
  const grants = (rules: Array<{ rule: Rule }>, group: string, resource: string, verb: string): boolean =>
    rules.some(({ rule }) => rule.apiGroups.includes(group) && rule.resources.includes(resource) && rule.verbs.includes(verb));

  it('parses and grants what the action needs: eviction, node patch, the Lease', () => {
    const problems: string[] = [];
    const { objects, rules } = load(problems);
    const cluster = rules.filter((r) => r.kind === 'ClusterRole');
    if (!grants(cluster, '', 'pods/eviction', 'create')) problems.push('deploy/rbac.yaml: no ClusterRole grants create on pods/eviction');
    // the storage gate's one listing (src/rules/gates.ts STORAGE_GATES)
    for (const [group, resource] of [
      ['', 'persistentvolumes'],
      ['', 'persistentvolumeclaims'],
      ['storage.k8s.io', 'volumeattachments'],
      ['longhorn.io', 'volumes'],
    ]) {
      if (!grants(cluster, group, resource, 'list'))
        problems.push(`deploy/rbac.yaml: no ClusterRole grants list on ${resource} (storage-gate)`);
    }
    if (!grants(cluster, '', 'nodes', 'patch')) problems.push('deploy/rbac.yaml: no ClusterRole grants patch on nodes');
    for (const verb of ['get', 'list'])
      if (!grants(cluster, '', 'nodes', verb)) problems.push(`deploy/rbac.yaml: no ClusterRole grants ${verb} on nodes`);
    for (const verb of ['get', 'list'])
      if (!grants(cluster, '', 'pods', verb))
        problems.push(`deploy/rbac.yaml: no ClusterRole grants ${verb} on pods (kubectl drain lists the node's pods)`);
    if (!grants(cluster, 'policy', 'poddisruptionbudgets', 'list'))
      problems.push('deploy/rbac.yaml: no ClusterRole grants list on poddisruptionbudgets (undrainable: quarantine names the PDB)');
    if (!grants(cluster, 'apps', 'daemonsets', 'get'))
      problems.push('deploy/rbac.yaml: no ClusterRole grants get on daemonsets (kubectl drain --ignore-daemonsets)');
    if (!grants(cluster, 'apps', 'daemonsets', 'list'))
      problems.push("deploy/rbac.yaml: no ClusterRole grants list on daemonsets (mode: plan's drain forecast)");
    if (rules.some(({ rule }) => rule.verbs.includes('*') || rule.resources.includes('*') || rule.apiGroups.includes('*'))) {
      problems.push('deploy/rbac.yaml: a rule uses a wildcard; least privilege names every verb and resource');
    }

    // The Lease rules must match the action's lease defaults.
    const action = loadAction(problems);
    if (action) {
      const inputs = actionInputs(action);
      const ns = inputs.get('lease-namespace')?.default ?? '';
      const name = inputs.get('lease-name')?.default ?? '';
      const leaseRules = rules.filter(
        (r) =>
          r.kind === 'Role' &&
          r.namespace === ns &&
          r.rule.apiGroups.includes('coordination.k8s.io') &&
          r.rule.resources.includes('leases'),
      );
      for (const verb of ['get', 'create', 'patch']) {
        if (!grants(leaseRules, 'coordination.k8s.io', 'leases', verb))
          problems.push(`deploy/rbac.yaml: no Role in ${ns || '(lease-namespace)'} grants ${verb} on leases`);
      }
      for (const r of leaseRules) {
        const named = r.rule.verbs.filter((v) => v !== 'create');
        if (named.length && !r.rule.resourceNames.includes(name)) {
          problems.push(`deploy/rbac.yaml: Role ${r.name} grants ${named.join('/')} on leases without resourceNames [${name}]`);
        }
      }
    }

    // The verify probe's pod create/delete is granted in verify-namespace only, never cluster-wide: an
    // identity that may create pods in every namespace may run any image with any service account.
    if (grants(cluster, '', 'pods', 'create') || grants(cluster, '', 'pods', 'delete'))
      problems.push('deploy/rbac.yaml: a ClusterRole grants create/delete on pods (the verify pod needs them in verify-namespace only)');
    if (action) {
      const verifyNs = actionInputs(action).get('verify-namespace')?.default ?? '';
      const verifyRules = rules.filter((r) => r.kind === 'Role' && r.namespace === verifyNs);
      for (const verb of ['create', 'delete'])
        if (!grants(verifyRules, '', 'pods', verb))
          problems.push(`deploy/rbac.yaml: no Role in ${verifyNs || '(verify-namespace)'} grants ${verb} on pods (the verify pod)`);
    }

    // Every binding refers to a role defined in the file and binds someone.
    const defined = new Set(
      objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role').map((o) => `${str(o.kind)}/${str(asRecord(o.metadata).name)}`),
    );
    const bindings = objects.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding');
    for (const kind of ['ClusterRole', 'Role']) {
      for (const role of [...defined].filter((d) => d.startsWith(`${kind}/`))) {
        if (!bindings.some((b) => `${str(asRecord(b.roleRef).kind)}/${str(asRecord(b.roleRef).name)}` === role))
          problems.push(`deploy/rbac.yaml: ${role} is not bound`);
      }
    }
    for (const b of bindings) {
      const ref = `${str(asRecord(b.roleRef).kind)}/${str(asRecord(b.roleRef).name)}`;
      if (!defined.has(ref))
        problems.push(
          `deploy/rbac.yaml: ${str(b.kind)} ${str(asRecord(b.metadata).name)} refers to ${ref}, which the file does not define`,
        );
      if (asArray(b.subjects).length === 0)
        problems.push(`deploy/rbac.yaml: ${str(b.kind)} ${str(asRecord(b.metadata).name)} has no subjects`);
    }
    expect(problems).toEqual([]);
  });
});
