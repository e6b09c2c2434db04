// /version, legacy (non-aggregated) discovery and a minimal OpenAPI v3, as kubectl needs them:
// docs/kubernetes-facts.md#k1-kubectl-dispatcher, docs/kubernetes-facts.md#k2-discovery.
import { apiVersionOf, resources, type ResourceDef } from './resources.js';

export const versionInfo = {
  major: '1',
  // The kubectl on PATH is a dispatcher that picks the real binary from this field; "32" runs its built-in v1.32.4.
  minor: '32',
  gitVersion: 'v1.32.0',
  gitCommit: '70d3cc986aa8221cd1dfb1121852688902d3bf53',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T17:59:15Z',
  goVersion: 'go1.23.3',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export function apiVersions(hostPort: string) {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: hostPort }] };
}

// A group's versions are those its kinds are served in (v1 for the built-in ones; a CRD's own, e.g.
// longhorn.io/v1beta2), the first the preferred one.
function groupEntry(group: string, all: readonly ResourceDef[]) {
  const versions = [...new Set(all.filter((r) => r.group === group).map((r) => r.version))].map((version) => ({
    groupVersion: `${group}/${version}`,
    version,
  }));
  return { name: group, versions, preferredVersion: versions[0] };
}

const namedGroups = (all: readonly ResourceDef[]) => [...new Set(all.map((r) => r.group))].filter((g) => g).sort();

export function apiGroupList(all: readonly ResourceDef[] = resources) {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: namedGroups(all).map((g) => groupEntry(g, all)) };
}

export function apiGroup(group: string, all: readonly ResourceDef[] = resources) {
  if (!namedGroups(all).includes(group)) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, all) };
}

function entries(r: ResourceDef) {
  const main: Record<string, unknown> = {
    name: r.plural,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: r.verbs,
    ...(r.shortNames ? { shortNames: r.shortNames } : {}),
  };
  const subs = Object.entries(r.subresources).map(([sub, s]) => ({
    name: `${r.plural}/${sub}`,
    singularName: '',
    namespaced: r.namespaced,
    // pods/eviction must say group policy, version v1, kind Eviction, or drain falls back to DELETE.
    ...(s.group !== undefined ? { group: s.group, version: s.version } : {}),
    kind: s.kind,
    verbs: s.verbs,
  }));
  return [main, ...subs];
}

export function apiResourceList(group: string, version: string, all: readonly ResourceDef[] = resources) {
  const rs = all.filter((r) => r.group === group && r.version === version);
  if (rs.length === 0) return undefined;
  const gv = group ? `${group}/${version}` : version;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources: rs.flatMap(entries) };
}

// --- OpenAPI v3 ----------------------------------------------------------------------------------------

const gvPaths = (all: readonly ResourceDef[]) => [
  ...new Set(all.map((r) => (r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`))),
];

export function openapiRoot(all: readonly ResourceDef[] = resources) {
  return { paths: Object.fromEntries(gvPaths(all).map((p) => [p, { serverRelativeURL: `/openapi/v3/${p}?hash=SIM0001` }])) };
}

/**
 * Just enough for kubectl's query-param verifier: one PATCH operation per kind carrying its GVK and a
 * `fieldValidation` parameter, so `kubectl create -f` skips client-side validation and sends fieldValidation=Strict.
 */
export function openapiGroupVersion(path: string, all: readonly ResourceDef[] = resources) {
  const rs = all.filter((r) => (r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`) === path);
  if (rs.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const r of rs) {
    const base = `/${path}/${r.namespaced ? 'namespaces/{namespace}/' : ''}${r.plural}/{name}`;
    const gvk = { group: r.group, version: r.version, kind: r.kind };
    const schemaName = `io.k8s.sim.${apiVersionOf(r).replace('/', '.')}.${r.kind}`;
    schemas[schemaName] = { type: 'object', 'x-kubernetes-group-version-kind': [gvk] };
    const op = (verb: string) => ({
      operationId: `${verb}${r.kind}`,
      parameters: [
        { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
        { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
        { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
      ],
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaName}` } } } },
      },
      'x-kubernetes-action': verb === 'patch' ? 'patch' : 'put',
      'x-kubernetes-group-version-kind': gvk,
    });
    paths[base] = { patch: op('patch'), put: op('replace') };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas } };
}
