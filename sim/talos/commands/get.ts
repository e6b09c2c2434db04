// `talosctl get <type> [<id>] [-o table|yaml|json]` for the COSI resources the evidence rules read.
// The type is resolved once, on the first node (ResolveResourceKind); each node is then asked on its
// own, and per-node failures are gathered into a multierror without node names (v1.13.8 get.go).
import { Document } from 'yaml';
import { grpcError, multiError, rfc3339 } from '../format.js';
import { renderConfigText } from '../machineconfig.js';
import type { NodeRuntime } from '../state.js';
import type { CommandContext } from './context.js';
import { flag } from './context.js';

type SpecValue = string | number | boolean;

export interface CosiResource {
  id: string;
  version: number;
  owner: string;
  created: number;
  updated: number;
  /** in the spec's YAML field order */
  spec: Array<[string, SpecValue]>;
  /** metadata.annotations (cosi prints them after `updated` when there are any) */
  annotations?: Record<string, string>;
  /** a spec that marshals as ONE string scalar (the MachineConfig: v1alpha1Spec.MarshalYAML returns the config's bytes) */
  specText?: string;
}

export interface ResourceDefinition {
  type: string;
  namespace: string;
  display: string;
  aliases: string[];
  columns: Array<[string, string]>;
  list(rt: NodeRuntime): CosiResource[];
}

/** cosi meta spec: plural lower-case name, its suffix prefixes, singular, upper-letter abbreviations. */
function allAliases(type: string, display: string, explicit: string[]): string[] {
  const [name, ...suffix] = type.split('.');
  const out = [name.toLowerCase()];
  for (let i = 1; i < suffix.length; i++) out.push([name.toLowerCase(), ...suffix.slice(0, i)].join('.'));
  const aliases = [...explicit, display.toLowerCase()];
  const upper = name.replace(/[^A-Z]/g, '');
  if (upper.length > 1) {
    aliases.push(upper.toLowerCase());
    if (!upper.endsWith('S')) aliases.push(`${upper.toLowerCase()}s`);
  }
  return [...out, ...aliases];
}

function rd(
  type: string,
  namespace: string,
  display: string,
  explicit: string[],
  columns: Array<[string, string]>,
  list: (rt: NodeRuntime) => CosiResource[],
): ResourceDefinition {
  return { type, namespace, display, aliases: allAliases(type, display, explicit), columns, list };
}

export const RESOURCES: ResourceDefinition[] = [
  rd('ServicePIDs.runtime.talos.dev', 'runtime', 'ServicePID', [], [['PID', 'pid']], (rt) => {
    const p = rt.node.containerd.servicePid;
    if (!p) return [];
    return [
      {
        id: 'cri',
        version: p.version,
        owner: '',
        created: p.created,
        updated: p.updated,
        spec: [
          ['pid', p.pid],
          ['mountNamespace', p.mountNamespace],
        ],
      },
    ];
  }),
  rd(
    'Services.v1alpha1.talos.dev',
    'runtime',
    'Service',
    ['svc'],
    [
      ['RUNNING', 'running'],
      ['HEALTHY', 'healthy'],
      ['HEALTH UNKNOWN', 'unknown'],
    ],
    (rt) => {
      const out: CosiResource[] = [];
      const owner = 'v1alpha1.ServiceController';
      for (const s of rt.otherServices) {
        const ts = s.events[s.events.length - 1]?.ts ?? rt.node.bootedAtMs;
        out.push({
          id: s.id,
          version: s.health.unknown ? 1 : 2,
          owner,
          created: ts - 1000,
          updated: ts,
          spec: [
            ['running', true],
            ['healthy', s.health.healthy],
            ['unknown', s.health.unknown],
          ],
        });
      }
      const r = rt.node.containerd.serviceResource;
      if (r)
        out.push({
          id: 'cri',
          version: r.version,
          owner,
          created: r.created,
          updated: r.updated,
          spec: [
            ['running', r.running],
            ['healthy', r.healthy],
            ['unknown', r.unknown],
          ],
        });
      return out.sort((a, b) => (a.id < b.id ? -1 : 1));
    },
  ),
  rd('EtcFileStatuses.files.talos.dev', 'files', 'EtcFileStatus', [], [], (rt) =>
    [...rt.node.etcFileStatus.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([id, s]) => ({
        id,
        version: s.version,
        owner: 'files.EtcFileController',
        created: s.created,
        updated: s.updated,
        spec: [['specVersion', s.specVersion]],
      })),
  ),
  rd('TimeStatuses.v1alpha1.talos.dev', 'runtime', 'TimeStatus', [], [['SYNCED', 'synced']], (rt) => {
    const c = rt.node.clock;
    const created = rt.node.bootedAtMs + 1500;
    return [
      {
        id: 'node',
        version: 2 + c.epoch,
        owner: 'time.SyncController',
        created,
        updated: created + 2500,
        spec: [
          ['synced', c.synced],
          ['epoch', c.epoch],
          ['syncDisabled', false],
        ],
      },
    ];
  }),
  // The spec is the whole config as one string (pkg/machinery/resources/config/machine_config.go
  // v1alpha1Spec.MarshalYAML; NewMachineConfigWithID sets the `talos.dev/yaml-spec: "1"` annotation),
  // printed by `get -o yaml` as go-yaml encodes a multi-line string: a literal block
  // (cmd/talosctl/cmd/talos/output/yaml.go, v1.13.9). Only admins may read it (Sensitive).
  rd('MachineConfigs.config.talos.dev', 'config', 'MachineConfig', [], [], (rt) => {
    const mc = rt.node.machineConfig;
    return [
      {
        id: 'v1alpha1',
        version: mc.version,
        owner: '',
        created: rt.node.bootedAtMs,
        updated: rt.node.bootedAtMs,
        spec: [],
        annotations: { 'talos.dev/yaml-spec': '1' },
        specText: renderConfigText(mc),
      },
    ];
  }),
];

export function resolveType(name: string): ResourceDefinition | undefined {
  const n = name.toLowerCase();
  return RESOURCES.find((r) => r.type.toLowerCase() === n || r.aliases.includes(n));
}

/** go-yaml's choice between a plain and a double-quoted string scalar (as the node marshals specs). */
function yamlString(s: string): string {
  const plainLooksTyped =
    /^(|~|null|Null|NULL|true|True|TRUE|false|False|FALSE|y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|[-+]?(\.\d+|\d+(\.\d*)?)([eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$/.test(
      s,
    );
  const special = /^[\s\-?:,[\]{}#&*!|>'"%@`]|: | #|\s$/.test(s);
  return plainLooksTyped || special ? JSON.stringify(s) : s;
}

function yamlValue(v: SpecValue): string {
  return typeof v === 'string' ? yamlString(v) : String(v);
}

function yamlDoc(node: string, def: ResourceDefinition, r: CosiResource): string {
  let y = `node: ${node}\nmetadata:\n`;
  y += `    namespace: ${def.namespace}\n    type: ${def.type}\n    id: ${r.id}\n    version: ${r.version}\n`;
  y += r.owner ? `    owner: ${r.owner}\n` : '    owner:\n';
  y += `    phase: running\n    created: ${rfc3339(r.created)}\n    updated: ${rfc3339(r.updated)}\n`;
  // cosi-project/runtime pkg/resource/metadata.go MarshalYAML: labels, then annotations, after `updated`
  if (r.annotations && Object.keys(r.annotations).length > 0)
    y += `    annotations:\n${Object.entries(r.annotations)
      .map(([k, v]) => `        ${k}: ${yamlString(v)}\n`)
      .join('')}`;
  if (r.specText !== undefined) return y + new Document({ spec: r.specText }).toString({ indent: 4, lineWidth: 0, blockQuote: 'literal' });
  y += r.spec.length ? `spec:\n${r.spec.map(([k, v]) => `    ${k}: ${yamlValue(v)}\n`).join('')}` : 'spec: {}\n';
  return y;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v as object)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

function jsonDoc(node: string, def: ResourceDefinition, r: CosiResource): string {
  // output/json.go: YAML re-decoded into map[string]any, so keys come out sorted and an empty owner is null.
  const data = {
    metadata: {
      namespace: def.namespace,
      type: def.type,
      id: r.id,
      version: r.version,
      owner: r.owner === '' ? null : r.owner,
      phase: 'running',
      created: rfc3339(r.created),
      updated: rfc3339(r.updated),
      ...(r.annotations ? { annotations: r.annotations } : {}),
    },
    spec: r.specText ?? Object.fromEntries(r.spec),
    node,
  };
  return `${JSON.stringify(sortKeys(data), null, 4)}\n`;
}

export function getCommand(ctx: CommandContext): number {
  const output = flag<string>(ctx, 'output', 'table');
  if (flag(ctx, 'watch', false) || output.startsWith('jsonpath=')) {
    ctx.out.fail('talosctl simulator: get --watch and -o jsonpath are not simulated');
    return 1;
  }
  if (!['table', 'yaml', 'json'].includes(output)) {
    ctx.out.fail(`output format "${output}" is not supported`);
    return 1;
  }
  const [typeName, id] = ctx.req.args;
  const first = ctx.reach(ctx.req.nodes[0]);
  if (!first.ok) {
    ctx.out.fail(first.error);
    return 1;
  }
  const def = resolveType(typeName);
  if (!def) {
    ctx.out.fail(grpcError('NotFound', `resource "${typeName}" is not registered`));
    return 1;
  }
  const namespace = flag(ctx, 'namespace', '') || def.namespace;

  const errs: string[] = [];
  let table = output === 'table' ? `${['NODE', 'NAMESPACE', 'TYPE', 'ID', 'VERSION', ...def.columns.map(([h]) => h)].join('\t')}\n` : '';
  let docs = '';
  let docCount = 0;
  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (!a.ok) {
      errs.push(a.error);
      continue;
    }
    let items = namespace === def.namespace ? def.list(a.rt) : [];
    if (id !== undefined) {
      items = items.filter((r) => r.id === id);
      if (!items.length) {
        errs.push(grpcError('NotFound', `resource ${def.type}(${namespace}/${id}@undefined) doesn't exist`));
        continue;
      }
    }
    for (const r of items) {
      if (output === 'table') {
        const cols = def.columns.map(([, key]) => String(r.spec.find(([k]) => k === key)?.[1] ?? ''));
        table += `${[node, namespace, def.display, r.id, String(r.version), ...cols].join('\t')}\n`;
      } else if (output === 'yaml') {
        docs += (docCount++ ? '---\n' : '') + yamlDoc(node, def, r);
      } else {
        docs += jsonDoc(node, def, r);
      }
    }
  }
  if (output === 'table') ctx.out.table(table);
  else ctx.out.out(docs);
  if (errs.length) {
    ctx.out.fail(multiError(errs));
    return 1;
  }
  return 0;
}
