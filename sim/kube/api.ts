// The apiserver's request semantics, independent of HTTP: decode and normalize, strategies (status vs main
// resource), system metadata, optimistic concurrency, validation, no-op detection, patch types, graceful
// pod deletion and the eviction subresource. The HTTP layer and the simulated actors both write through here.
import { clone, goJson, isObject } from './json.js';
import { applyJsonPatch, decodeJsonPatch, JsonPatchApplyError, JsonPatchDecodeError, maxJsonPatchOperations } from './jsonpatch.js';
import { applyMergePatch, applyStrategicMergePatch, MergePatchError } from './mergepatch.js';
import { apiVersionOf, R, type ResourceDef } from './resources.js';
import { DecodeError, normalize, nowTime } from './schema.js';
import { sameJson } from './sameJson.js';
import { matchLabelSelector, parseFieldSelector, parseLabelSelector } from './selectors.js';
import {
  alreadyExists,
  ApiError,
  badRequest,
  conflict,
  failure,
  goValue,
  invalid,
  notFound,
  patchApplyFailed,
  success,
  type FieldError,
  type Status,
} from './status.js';
import type { Store } from './store.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface WriteOptions {
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
}

export interface WriteResult {
  code: number;
  body: any;
  warnings: string[];
}

export interface ListQuery {
  labelSelector?: string | null;
  fieldSelector?: string | null;
  limit?: number;
  continue?: string | null;
}

export type PatchType = 'json' | 'merge' | 'strategic';

export function patchTypeOf(contentType: string | undefined): PatchType | undefined {
  const t = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return (
    {
      'application/json-patch+json': 'json',
      'application/merge-patch+json': 'merge',
      'application/strategic-merge-patch+json': 'strategic',
    } as const
  )[t as 'application/json-patch+json'];
}

/** What the twin's controllers contribute to request handling. */
export interface ApiHooks {
  /** pod admission (service account, defaults) on create; mutates the pod */
  admitPod?(pod: any): void;
  /** a pod got its deletionTimestamp: kubelet finishes it, workload controllers replace it */
  podTerminating?(pod: any): void;
  /** an eviction of the pod was accepted (the twin's event log) */
  podEvicted?(pod: any): void;
}

export class Api {
  hooks: ApiHooks = {};

  constructor(readonly store: Store) {}

  mustGet(def: ResourceDef, ns: string, name: string): any {
    const obj = this.store.get(def, ns, name);
    if (!obj) throw notFound(def, name);
    return obj;
  }

  /**
   * The stored object itself, for a caller that only reads it (encodes it, patches a copy of it):
   * mustGet's deep copy was most of the cost of a GET and of every PATCH. Never mutate what it returns.
   */
  mustPeek(def: ResourceDef, ns: string, name: string): any {
    const obj = this.store.peek(def, ns, name);
    if (!obj) throw notFound(def, name);
    return obj;
  }

  list(def: ResourceDef, ns: string, q: ListQuery): any {
    const lm = parseLabelSelector(q.labelSelector);
    const fm = parseFieldSelector(q.fieldSelector, def.fields);
    let items = this.store.list(def, ns).filter((o) => lm(o.metadata.labels) && fm(o));
    if (q.continue) {
      let start: string;
      try {
        start = JSON.parse(Buffer.from(q.continue, 'base64').toString('utf8')).start;
        if (typeof start !== 'string') throw new Error();
      } catch {
        throw badRequest('continue key is not valid: illegal base64 data at input byte 0');
      }
      items = items.filter((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}` > start);
    }
    const metadata: Record<string, unknown> = { resourceVersion: String(this.store.revision) };
    if (q.limit && q.limit > 0 && items.length > q.limit) {
      const last = items[q.limit - 1];
      metadata.continue = Buffer.from(
        JSON.stringify({ rv: this.store.revision, start: `${last.metadata.namespace ?? ''}/${last.metadata.name}` }),
      ).toString('base64');
      metadata.remainingItemCount = items.length - q.limit;
      items = items.slice(0, q.limit);
    }
    return {
      kind: `${def.kind}List`,
      apiVersion: apiVersionOf(def),
      metadata,
      // Real list items omit kind/apiVersion; kubectl fills them in from the list kind. Each item is a
      // new top level over the stored object's own (never mutated) fields: a list is only encoded.
      items: items.map((o) => {
        const { kind: _kind, apiVersion: _apiVersion, ...item } = o;
        return item;
      }),
    };
  }

  /** Decode a full object as the typed codec would; `patched` selects the patch handler's error shape. */
  decode(def: ResourceDef, raw: unknown, mode: 'body' | 'patch', fv: FieldValidation): { obj: any; warnings: string[] } {
    if (!isObject(raw)) {
      if (mode === 'patch')
        throw invalidPatch(raw, `json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw} into Go value of type ${def.kind}`);
      throw badRequest(
        `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw} into Go value of type ${def.kind}`,
      );
    }
    if (
      mode === 'body' &&
      ((raw.kind !== undefined && raw.kind !== def.kind) || (raw.apiVersion !== undefined && raw.apiVersion !== apiVersionOf(def)))
    ) {
      throw badRequest(
        `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: the object provided is unrecognized (must be of type ${def.kind}): ${raw.apiVersion}, Kind=${raw.kind}`,
      );
    }
    let res;
    try {
      res = normalize(raw, def.schema);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      if (mode === 'patch') throw invalidPatch(raw, e.message);
      throw badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${e.message}`);
    }
    const obj = res.value;
    obj.kind = def.kind;
    obj.apiVersion = apiVersionOf(def);
    delete obj.metadata.managedFields;
    delete obj.metadata.selfLink;
    const unknown = res.unknown;
    if (unknown.length > 0 && fv === 'Strict') {
      throw badRequest(`strict decoding error: ${unknown.map((u) => `unknown field "${u}"`).join(', ')}`);
    }
    const warnings = fv === 'Ignore' ? [] : unknown.map((u) => `unknown field "${u}"`);
    return { obj: reorderTop(obj), warnings };
  }

  create(def: ResourceDef, ns: string, raw: unknown, opts: WriteOptions = {}): WriteResult {
    const { obj, warnings } = this.decode(def, raw, 'body', opts.fieldValidation ?? 'Warn');
    const m = obj.metadata;
    if (def.namespaced) {
      if (m.namespace && m.namespace !== ns)
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      m.namespace = ns;
      if (!this.store.peek(R.namespaces, '', ns)) throw notFound(R.namespaces, ns);
    } else {
      delete m.namespace;
    }
    if (m.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
    if (!m.name && m.generateName) m.name = m.generateName + randomSuffix();
    if (!m.name)
      throw invalid(def.kind, def.group, '', [
        { field: 'metadata.name', reason: 'FieldValueRequired', message: 'Required value: name or generateName is required' },
      ]);
    m.uid = this.store.newUid();
    m.creationTimestamp = nowTime();
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    if (def.generation) m.generation = 1;
    else delete m.generation;
    if (def === R.pods) {
      obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
      this.hooks.admitPod?.(obj);
    }
    if (def === R.namespaces) {
      obj.spec = { finalizers: ['kubernetes'] };
      obj.status = { phase: 'Active' };
    }
    const errs = def.validate?.(obj, undefined) ?? [];
    if (errs.length) throw invalid(def.kind, def.group, m.name, errs);
    if (this.store.peek(def, ns, m.name)) throw alreadyExists(def, m.name);
    const final = reorderTop(this.decode(def, obj, 'body', 'Ignore').obj);
    if (opts.dryRun) return { code: 201, body: final, warnings };
    return { code: 201, body: this.store.create(def, final), warnings };
  }

  /** PUT: the body replaces the object; Leases may be created this way. */
  update(def: ResourceDef, ns: string, name: string, sub: string | undefined, raw: unknown, opts: WriteOptions = {}): WriteResult {
    const { obj, warnings } = this.decode(def, raw, 'body', opts.fieldValidation ?? 'Warn');
    checkName(obj, name, def.namespaced ? ns : '');
    // the stored object: commit only reads it
    const old = this.store.peek(def, ns, name);
    if (!old) {
      if (!def.allowCreateOnUpdate || sub) throw notFound(def, name);
      const r = this.create(def, ns, obj, { ...opts, fieldValidation: 'Ignore' });
      return { ...r, warnings };
    }
    return answered(200, this.commit(def, old, obj, sub, opts), warnings);
  }

  patch(
    def: ResourceDef,
    ns: string,
    name: string,
    sub: string | undefined,
    type: PatchType,
    body: string,
    opts: WriteOptions = {},
  ): WriteResult {
    // the stored object: every patch applies to a copy of it (or copies what it changes), commit only reads it
    const old = this.mustPeek(def, ns, name);
    let patched: unknown;
    switch (type) {
      case 'json': {
        let ops;
        try {
          ops = decodeJsonPatch(body);
        } catch (e) {
          if (e instanceof JsonPatchDecodeError) throw badRequest(e.message);
          throw e;
        }
        if (ops.length > maxJsonPatchOperations) {
          throw new ApiError(
            failure(
              413,
              'RequestEntityTooLarge',
              `The allowed maximum operations in a JSON patch is ${maxJsonPatchOperations}, got ${ops.length}`,
            ),
          );
        }
        try {
          patched = applyJsonPatch(old, ops);
        } catch (e) {
          if (e instanceof JsonPatchApplyError) throw patchApplyFailed();
          throw e;
        }
        break;
      }
      case 'merge':
        try {
          patched = applyMergePatch(old, body);
        } catch (e) {
          if (e instanceof MergePatchError) throw badRequest(e.message);
          throw e;
        }
        break;
      case 'strategic':
        try {
          patched = applyStrategicMergePatch(old, body, def.smp);
        } catch (e) {
          if (e instanceof MergePatchError) throw new ApiError(failure(422, 'Invalid', e.message, {}));
          throw e;
        }
        break;
    }
    const { obj, warnings } = this.decode(def, patched, 'patch', opts.fieldValidation ?? 'Warn');
    checkName(obj, name, def.namespaced ? ns : '');
    return answered(200, this.commit(def, old, obj, sub, opts), warnings);
  }

  /**
   * Strategy, system metadata, RV precondition, validation, then the (possibly no-op) write. `old` is
   * read, never written. Answers a function giving the answer's body (made when first asked for).
   */
  private commit(def: ResourceDef, old: any, obj: any, sub: string | undefined, opts: WriteOptions): () => any {
    // The parts kept from the stored object: a real write only encodes obj (the store keeps its own
    // copy), so it may share them; a dry run's answer is the caller's to keep, so it gets copies.
    const kept = opts.dryRun ? clone : <T>(v: T): T => v;
    if (def.statusSubresource) {
      if (sub === 'status') {
        if (old.spec !== undefined) obj.spec = kept(old.spec);
        if (def === R.pods) {
          if (old.metadata.ownerReferences) obj.metadata.ownerReferences = kept(old.metadata.ownerReferences);
          else delete obj.metadata.ownerReferences;
        }
      } else if (old.status !== undefined) obj.status = kept(old.status);
      else delete obj.status;
    }
    const m = obj.metadata;
    const om = old.metadata;
    const errs: FieldError[] = [];
    if (!def.namespaced) delete m.namespace;
    if (!m.uid) m.uid = om.uid;
    else if (m.uid !== om.uid) errs.push({ field: 'metadata.uid', message: `Invalid value: ${goValue(m.uid)}: field is immutable` });
    m.creationTimestamp = om.creationTimestamp;
    if (om.deletionTimestamp) {
      m.deletionTimestamp = om.deletionTimestamp;
      if (om.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = om.deletionGracePeriodSeconds;
    } else if (m.deletionTimestamp) {
      errs.push({ field: 'metadata.deletionTimestamp', message: `Invalid value: ${goValue(m.deletionTimestamp)}: field is immutable` });
    }
    if (om.generation !== undefined) m.generation = om.generation;
    else delete m.generation;
    if (def.generation && !sameJson(obj.spec, old.spec)) m.generation = (om.generation ?? 0) + 1;
    if (m.resourceVersion && m.resourceVersion !== om.resourceVersion) throw conflict(def, om.name);
    m.resourceVersion = om.resourceVersion;
    errs.push(...(def.validate?.(obj, def === R.pods && sub !== 'status' ? old : undefined) ?? []));
    if (errs.length) throw invalid(def.kind, def.group, om.name, errs);
    const final = reorderTop(obj);
    if (opts.dryRun) return () => final;
    // final was decoded for this write alone (its kept parts are stored objects' own): the store may keep it
    const written = this.store.update(def, final, true);
    return () => written.obj;
  }

  /** DELETE. Pods terminate gracefully (kubelet finishes them); everything else goes at once. */
  delete(
    def: ResourceDef,
    ns: string,
    name: string,
    options: { gracePeriodSeconds?: number; preconditions?: { uid?: string; resourceVersion?: string } } = {},
    dryRun = false,
  ): { code: number; body: any } {
    const cur = this.mustGet(def, ns, name);
    const pre = options.preconditions ?? {};
    if (pre.uid && pre.uid !== cur.metadata.uid) {
      throw conflict(def, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.metadata.uid}`);
    }
    if (pre.resourceVersion && pre.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(
        def,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion}`,
      );
    }
    if (dryRun) return { code: 200, body: def.returnDeleted ? cur : success(200, deletedDetails(def, cur)) };
    if (def === R.pods) return { code: 200, body: this.deletePod(ns, name, options.gracePeriodSeconds) };
    const last = this.store.delete(def, ns, name);
    return { code: 200, body: def.returnDeleted ? last : success(200, deletedDetails(def, last)) };
  }

  /** Graceful pod deletion: unscheduled or finished pods go at once, others get a deletionTimestamp. */
  deletePod(ns: string, name: string, grace?: number): any {
    const pod = this.mustGet(R.pods, ns, name);
    const finished = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
    if (grace === 0 || !pod.spec?.nodeName || finished) {
      const last = this.store.delete(R.pods, ns, name);
      return last;
    }
    if (pod.metadata.deletionTimestamp) return pod;
    const g = grace ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    pod.metadata.deletionTimestamp = nowTime(Date.now() + g * 1000);
    pod.metadata.deletionGracePeriodSeconds = g;
    const stored = this.store.update(R.pods, pod).obj;
    this.hooks.podTerminating?.(stored);
    return stored;
  }

  /**
   * POST pods/P/eviction, per kubernetes pkg/registry/core/pod/storage/eviction.go. A dry run (`dryRun=All`
   * in the query or in the body's deleteOptions, merged as its propagateDryRun does) runs every check,
   * the PDB's included, and answers as the real one would, but changes nothing: no pod deleted, no PDB
   * status written (checkAndDecrement returns before its UpdateStatus), nothing in the twin's event log.
   */
  evict(
    ns: string,
    name: string,
    raw: unknown,
    queryDryRun: string[] = [],
  ): { code: number; body: Status; headers?: Record<string, string> } {
    if (!isObject(raw) || (raw.kind !== undefined && raw.kind !== 'Eviction')) {
      throw badRequest(`Eviction in version "v1" cannot be handled as a Eviction: the object provided is unrecognized`);
    }
    const bodyName = (raw.metadata as any)?.name;
    if (bodyName !== undefined && bodyName !== name) throw badRequest('name in URL does not match name in Eviction object');
    const bodyDryRun: string[] = Array.isArray((raw.deleteOptions as any)?.dryRun) ? (raw.deleteOptions as any).dryRun : [];
    if (bodyDryRun.length > 0 && queryDryRun.length > 0 && JSON.stringify(bodyDryRun) !== JSON.stringify(queryDryRun)) {
      // a plain fmt.Errorf in propagateDryRun: the apiserver answers it as a 500 with no reason
      return {
        code: 500,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `Non-matching dry-run options in request and content: [${queryDryRun.join(' ')}] and [${bodyDryRun.join(' ')}]`,
          code: 500,
        } as Status,
      };
    }
    const dryRun = (bodyDryRun.length > 0 ? bodyDryRun : queryDryRun).includes('All');
    const pod = this.mustGet(R.pods, ns, name);
    const grace = (raw.deleteOptions as any)?.gracePeriodSeconds as number | undefined;
    const phase = pod.status?.phase;
    if (pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending') {
      if (dryRun) return { code: 201, body: success(201) };
      this.hooks.podEvicted?.(pod);
      this.deletePod(ns, name, grace);
      return { code: 201, body: success(201) };
    }
    // policy/v1: an empty selector covers every pod of the namespace, an absent one none (eviction.go
    // honours the empty one since Kubernetes 1.29, kubernetes#119732)
    const pdbs = this.store.list(R.poddisruptionbudgets, ns).filter((b) => matchLabelSelector(b.spec?.selector, pod.metadata.labels));
    if (pdbs.length > 1) {
      return {
        code: 500,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
          code: 500,
        } as Status,
      };
    }
    if (pdbs.length === 1) {
      const pdb = clone(pdbs[0]);
      const st = pdb.status ?? {};
      if ((st.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) {
        throw new ApiError(
          failure(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
            causes: [
              { reason: 'DisruptionBudget', message: `The disruption budget ${pdb.metadata.name} is still being processed by the server.` },
            ],
            retryAfterSeconds: 10,
          }),
          { 'Retry-After': '10' },
        );
      }
      if ((st.disruptionsAllowed ?? 0) <= 0) {
        // No retryAfterSeconds, hence no Retry-After header: drain prints the message and sleeps 5 s itself.
        throw new ApiError(
          failure(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
            causes: [
              {
                reason: 'DisruptionBudget',
                message: `The disruption budget ${pdb.metadata.name} needs ${st.desiredHealthy ?? 0} healthy pods and has ${st.currentHealthy ?? 0} currently`,
              },
            ],
          }),
        );
      }
      if (dryRun) return { code: 201, body: success(201) };
      st.disruptionsAllowed -= 1;
      st.disruptedPods = { ...(st.disruptedPods ?? {}), [name]: nowTime() };
      pdb.status = st;
      this.store.update(R.poddisruptionbudgets, pdb);
    }
    if (dryRun) return { code: 201, body: success(201) };
    this.hooks.podEvicted?.(pod);
    this.deletePod(ns, name, grace);
    return { code: 201, body: success(201) };
  }
}

/**
 * A write's result whose body is made when first read (store.ts lazyAnswer): the HTTP front always
 * reads it, the twin's own controllers (a heartbeat every 2 s per node) hardly ever.
 */
function answered(code: number, body: () => any, warnings: string[]): WriteResult {
  return {
    code,
    get body() {
      return body();
    },
    warnings,
  };
}

function deletedDetails(def: ResourceDef, obj: any) {
  return { name: obj.metadata.name, ...(def.group ? { group: def.group } : {}), kind: def.plural, uid: obj.metadata.uid };
}

function checkName(obj: any, name: string, ns: string): void {
  const objName = obj.metadata?.name ?? '';
  if (objName !== name) throw badRequest(`the name of the object (${objName}) does not match the name on the URL (${name})`);
  const objNs = obj.metadata?.namespace;
  if (ns && objNs && objNs !== ns)
    throw badRequest(`the namespace of the object (${objNs}) does not match the namespace on the request (${ns})`);
  if (ns) obj.metadata.namespace = ns;
}

/** The patch handler's answer when the patched JSON no longer decodes into the type. */
function invalidPatch(patched: unknown, why: string): ApiError {
  const msg = `Invalid value: ${JSON.stringify(goJson(patched))}: ${why}`;
  return new ApiError(
    failure(422, 'Invalid', ` "" is invalid: patch: ${msg}`, { causes: [{ reason: 'FieldValueInvalid', message: msg, field: 'patch' }] }),
  );
}

/** kind, apiVersion, metadata, then the rest: Go's field order, so stored JSON reads naturally. */
function reorderTop(obj: any): any {
  const { kind, apiVersion, metadata, ...rest } = obj;
  return { kind, apiVersion, metadata, ...rest };
}

const suffixAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
export function randomSuffix(n = 5): string {
  let s = '';
  for (let i = 0; i < n; i++) s += suffixAlphabet[Math.floor(Math.random() * suffixAlphabet.length)];
  return s;
}
