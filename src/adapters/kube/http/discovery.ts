// Which kinds the cluster serves, from the API server's discovery documents, as `kubectl
// api-resources` lists them: every resource (no subresource) of the core group's `v1` and of each named
// group's preferred version (`/api`, `/api/v1`, `/apis`, `/apis/G/V`). One group whose document fails
// (an aggregated API down: metrics-server) leaves the others listed, as kubectl does with its partial
// result: a gate over that group's kind is then named as not served (docs/gates.md).
import { ToolError } from '../../../core/errors.js';
import type { ServedKind } from '../../../core/model/gates.js';
import type { Json } from '../parse/json.js';
import type { KubeHttp } from './request.js';
import type { Answer } from './status.js';

type Get = (path: string) => Promise<Answer>;

function parse(path: string, a: Answer): Json {
  try {
    return JSON.parse(a.body) as Json;
  } catch {
    throw new ToolError({
      tool: 'kube-api',
      command: `GET ${path}`,
      kind: 'unparseable',
      exitCode: null,
      stderr: 'the answer is not JSON',
    });
  }
}

function kindsOf(list: Json, group: string, version: string): ServedKind[] {
  const resources = Array.isArray(list.resources) ? (list.resources as Json[]) : [];
  return resources
    .filter((r) => typeof r.name === 'string' && !r.name.includes('/') && typeof r.kind === 'string')
    .map((r) => ({ resource: r.name as string, group, version, namespaced: r.namespaced === true, kind: r.kind as string }));
}

export async function servedKindsFromDiscovery(get: Get, http: KubeHttp): Promise<ServedKind[]> {
  const must = async (path: string): Promise<Json> => {
    const a = await get(path);
    if (a.status < 200 || a.status > 299) throw http.refused({ method: 'GET', path }, a);
    return parse(path, a);
  };
  const [core, groups] = await Promise.all([must('/api/v1'), must('/apis')]);
  const out = kindsOf(core, '', 'v1');
  const preferred = (Array.isArray(groups.groups) ? (groups.groups as Json[]) : [])
    .map((g) => (g.preferredVersion as Json | undefined)?.groupVersion)
    .filter((gv): gv is string => typeof gv === 'string' && gv.includes('/'));
  const lists = await Promise.all(
    preferred.map(async (gv) => {
      const a = await get(`/apis/${gv}`);
      // a group that does not answer is left out (kubectl's partial discovery)
      return a.status >= 200 && a.status < 300 ? { gv, list: parse(`/apis/${gv}`, a) } : undefined;
    }),
  );
  for (const l of lists) {
    if (!l) continue;
    const [group, version] = l.gv.split('/');
    out.push(...kindsOf(l.list, group, version));
  }
  return out;
}
