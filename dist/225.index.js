export const id = 225;
export const ids = [225];
export const modules = {

/***/ 8225:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {


// EXPORTS
__webpack_require__.d(__webpack_exports__, {
  TalosApi: () => (/* reexport */ TalosApi),
  TalosConnection: () => (/* reexport */ TalosConnection)
});

// EXTERNAL MODULE: ./src/core/async.ts
var core_async = __webpack_require__(3787);
// EXTERNAL MODULE: ./src/core/errors.ts
var errors = __webpack_require__(4296);
// EXTERNAL MODULE: ./src/adapters/talos/criToml.ts + 9 modules
var criToml = __webpack_require__(7404);
// EXTERNAL MODULE: ./src/adapters/parseError.ts
var parseError = __webpack_require__(8473);
// EXTERNAL MODULE: ./node_modules/yaml/dist/index.js
var dist = __webpack_require__(8815);
// EXTERNAL MODULE: ./src/core/redact.ts
var redact = __webpack_require__(2258);
// EXTERNAL MODULE: ./src/core/authPatch.ts
var authPatch = __webpack_require__(5531);
;// CONCATENATED MODULE: ./src/adapters/talos/machineConfig/documents.ts
// A node's machine config as Talos reads it: its documents (ints read as Go's YAML reads them, so
// `0644` is 420), each document's own text and label, the legacy auth map's place, a credential's
// fields and each host's effective credential (its RegistryAuthConfig document over the legacy map,
// container.RegistryAuthConfigs). What the credential patch (patch.ts), its plan
// (plan.ts) and its checks (verify.ts) read a config with. Pure (no I/O). The config holds
// every credential of the cluster: no error here quotes its text, only document numbers, kinds, names
// and line/column positions.


const isObj = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Why a config could not be patched here; `document` names the document (kind/name or its position). */
class MachineConfigError extends Error {
    document;
    constructor(message, document) {
        super(message);
        this.document = document;
        this.name = 'MachineConfigError';
    }
}
/** The text of document i: from its start to the next one's (trailing comments and `...` included). */
function pieceOf(text, docs, i) {
    // the first piece starts at the text's start: a comment before the first document is the config's too
    return text.slice(i === 0 ? 0 : (0,authPatch/* documentStart */.Qf)(docs[i]), i + 1 < docs.length ? (0,authPatch/* documentStart */.Qf)(docs[i + 1]) : text.length);
}
/** How a document is named in messages: `RegistryAuthConfig/ghcr.io`, `v1alpha1` or its position. */
function labelOf(v, i) {
    if (isObj(v) && typeof v.kind === 'string')
        return `${v.kind}${typeof v.name === 'string' ? `/${v.name}` : ''}`;
    if (isObj(v) && v.kind === undefined && (v.version === 'v1alpha1' || v.machine !== undefined))
        return 'v1alpha1';
    return `document ${i + 1}`;
}
/**
 * YAML 1.1's octal int, as Go's YAML reads it (`0644` is 420: yaml/go-yaml resolve.go, ParseInt base
 * 0); the core schema would read 644. Values are compared as Talos reads them (verifyPatched).
 */
const GO_OCTAL = {
    identify: () => false,
    default: true,
    tag: 'tag:yaml.org,2002:int',
    format: 'OCT',
    test: /^[-+]?0[0-7_]+$/,
    resolve: (s) => parseInt(s.replace(/_/g, ''), 8),
};
/** The config's documents and their values, ints read as Go's YAML reads them (as Talos does). */
function documents_parseConfig(text, what = "the node's machine config") {
    const docs = (0,dist/* parseAllDocuments */.hR)(text, { customTags: (tags) => [GO_OCTAL, ...tags] });
    const values = [];
    for (const [i, doc] of docs.entries()) {
        if (doc.errors.length > 0) {
            // the parser's message quotes the source line, which may hold any credential of the cluster
            const pos = doc.errors[0].linePos?.[0];
            throw new MachineConfigError(`${what} document ${i + 1} is not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`, `document ${i + 1}`);
        }
        values.push(doc.toJS());
    }
    return { docs, values };
}
function v1alpha1Index(values) {
    return values.findIndex((v) => isObj(v) && v.kind === undefined && (v.version === 'v1alpha1' || isObj(v.machine)));
}
const LEGACY_PATH = (host) => ['machine', 'registries', 'config', host, 'auth'];
function legacyAuthOf(v, host) {
    let at = v;
    for (const k of LEGACY_PATH(host))
        at = isObj(at) ? at[k] : undefined;
    return at;
}
function documentIndex(values, name) {
    return values.findIndex((v) => isObj(v) && v.kind === 'RegistryAuthConfig' && v.name === name);
}
const AUTH_FIELDS = ['username', 'password', 'auth', 'identityToken'];
function fieldsOf(v) {
    if (!isObj(v))
        return undefined;
    const out = {};
    for (const k of AUTH_FIELDS) {
        const x = v[k];
        const s = typeof x === 'string' ? x : typeof x === 'number' || typeof x === 'boolean' ? String(x) : '';
        if (s)
            out[k] = s;
    }
    return out;
}
function sameFields(a, b) {
    return a !== undefined && b !== undefined && AUTH_FIELDS.every((k) => (a[k] ?? '') === (b[k] ?? ''));
}
const documents_documentLabel = (host) => `RegistryAuthConfig/${host}`;
const documents_legacyLabel = (host) => `v1alpha1 machine.registries.config.${host}.auth`;
/**
 * Each host's credential as Talos reads it from a config: its RegistryAuthConfig document when there
 * is one, else the legacy map (container.RegistryAuthConfigs), with the place it comes from.
 */
function effectiveCredentials(configText) {
    return effectiveOf(documents_parseConfig(configText).values);
}
function effectiveOf(values) {
    const out = new Map();
    for (const [host, entry] of Object.entries(configMap(values) ?? {})) {
        const f = fieldsOf(isObj(entry) ? entry.auth : undefined);
        if (f)
            out.set(host, { fields: f, from: documents_legacyLabel(host) });
    }
    for (const v of values) {
        if (isObj(v) && v.kind === 'RegistryAuthConfig' && typeof v.name === 'string')
            out.set(v.name, { fields: fieldsOf(v) ?? {}, from: documents_documentLabel(v.name) });
    }
    return out;
}
function configMap(values) {
    const v = values[v1alpha1Index(values)];
    const m = isObj(v) ? v.machine : undefined;
    const r = isObj(m) ? m.registries : undefined;
    const c = isObj(r) ? r.config : undefined;
    return isObj(c) ? c : undefined;
}
function withNewline(s) {
    return s.endsWith('\n') ? s : `${s}\n`;
}
/** The config's documents by label, in order (for messages: never their content). */
function documentLabels(configText) {
    const { values } = documents_parseConfig(configText);
    return values.map(labelOf);
}

// EXTERNAL MODULE: ./src/core/text.ts
var core_text = __webpack_require__(2020);
;// CONCATENATED MODULE: ./src/adapters/talos/machineConfig/secrets.ts
// The secrets of a machine config, as Talos itself defines them: the fields its config documents'
// own `Redact(replacement)` replaces (pkg/machinery/config, the v1alpha1 document and every
// multi-doc document implementing config.SecretDocument, as of v1.11–v1.14; the list and where each
// entry comes from: docs/secrets.md). Only these are registered for masking: a value that merely sits
// under a secret-looking key (a certSAN, a kubelet flag's "true", a registry username, a CA's
// certificate) is no secret, and masking it would wreck every text that happens to contain it.
// The registry credentials keep every derived form (core/redact.ts secretForms). Pure (no I/O);
// an error never quotes the config's text.




const secrets_isObj = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
/** The v1alpha1 document's secret fields (v1alpha1_provider.go `(*Config).Redact`), the registry auth maps aside. */
const V1ALPHA1_SECRETS = [
    'machine.token',
    'machine.ca.key',
    'machine.registries.config.*.tls.clientIdentity.key',
    'machine.network.interfaces[].wireguard.privateKey',
    'machine.network.interfaces[].vip.equinixMetal.apiToken',
    'machine.network.interfaces[].vip.hcloud.apiToken',
    'machine.network.interfaces[].vlans[].vip.equinixMetal.apiToken',
    'machine.network.interfaces[].vlans[].vip.hcloud.apiToken',
    'machine.systemDiskEncryption.state.keys[].static.passphrase',
    'machine.systemDiskEncryption.ephemeral.keys[].static.passphrase',
    'cluster.secret',
    'cluster.token',
    'cluster.aescbcEncryptionSecret',
    'cluster.secretboxEncryptionSecret',
    'cluster.serviceAccount.key',
    'cluster.ca.key',
    'cluster.aggregatorCA.key',
    'cluster.etcd.ca.key',
];
/** The multi-doc documents' secret fields by kind (each kind's `Redact`), the RegistryAuthConfig credential aside. */
const DOCUMENT_SECRETS = {
    RegistryTLSConfig: ['clientIdentity.key'],
    WireguardConfig: ['privateKey', 'peers[].presharedKey'],
    HCloudVIPConfig: ['apiToken'],
    SideroLinkConfig: ['apiUrl?jointoken', 'uniqueToken'],
    VolumeConfig: ['encryption.keys[].static.passphrase'],
    UserVolumeConfig: ['encryption.keys[].static.passphrase'],
    RawVolumeConfig: ['encryption.keys[].static.passphrase'],
    SwapVolumeConfig: ['encryption.keys[].static.passphrase'],
    DiscoveryIdentityConfig: ['clusterSecret'],
    KubeAPIServerCAConfig: ['issuingCA.key'],
    KubeAggregatorCAConfig: ['issuingCA.key'],
    KubeServiceAccountConfig: ['issuer.privateKey'],
    KubeEtcdEncryptionConfig: ['config.**.secret'],
};
/** The strings at `path` in `v` (never a number, a boolean or a map). */
function valuesAt(v, path) {
    const out = [];
    const walk = (node, parts) => {
        if (parts.length === 0) {
            if (typeof node === 'string' && node)
                out.push(node);
            return;
        }
        const [part, ...rest] = parts;
        if (part === '**') {
            // this map and every map below it, through lists too (KubeEtcdEncryptionConfig's Redact)
            walk(node, rest);
            const below = secrets_isObj(node) ? Object.values(node) : Array.isArray(node) ? node : [];
            for (const child of below)
                if (secrets_isObj(child) || Array.isArray(child))
                    walk(child, parts);
            return;
        }
        if (!secrets_isObj(node))
            return;
        const query = /^(.+)\?(\w+)$/.exec(part);
        if (query) {
            const url = node[query[1]];
            if (typeof url !== 'string')
                return;
            try {
                const token = new URL(url).searchParams.get(query[2]);
                if (token)
                    out.push(token, encodeURIComponent(token));
            }
            catch {
                // not a URL: no token in it
            }
            return;
        }
        const key = part.endsWith('[]') ? part.slice(0, -2) : part;
        const children = key === '*' ? Object.values(node) : [node[key]];
        for (const child of children) {
            if (part.endsWith('[]')) {
                if (Array.isArray(child))
                    for (const item of child)
                        walk(item, rest);
            }
            else
                walk(child, rest);
        }
    };
    walk(v, path.split('.'));
    return out;
}
// Talos serves the config it marshalled: a secret is a string there (Go quotes "1234" and "true").
/** A registry auth map or RegistryAuthConfig document → the fields secretForms takes (the username only to form `user:password`). */
function authFields(a) {
    return {
        username: (0,core_text/* stringOrEmpty */.m)(a.username),
        password: (0,core_text/* stringOrEmpty */.m)(a.password),
        auth: (0,core_text/* stringOrEmpty */.m)(a.auth),
        identitytoken: (0,core_text/* stringOrEmpty */.m)(a.identityToken),
    };
}
/**
 * The values of a machine config to mask wherever text leaves the action: Talos's secret fields of
 * every document, and every form of every registry credential in it (the legacy auth maps and the
 * RegistryAuthConfig documents). The config holds every credential of the cluster, not only the one
 * this run rolls. Throws MachineConfigError (a position, never the text) when it is not YAML.
 */
function configSecrets(configText) {
    const out = new Set();
    const auths = [];
    for (const [i, doc] of (0,dist/* parseAllDocuments */.hR)(configText).entries()) {
        if (doc.errors.length > 0) {
            const pos = doc.errors[0].linePos?.[0];
            throw new MachineConfigError(`the node's machine config document ${i + 1} is not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`, `document ${i + 1}`);
        }
        const v = doc.toJS();
        if (!secrets_isObj(v))
            continue;
        if (v.kind === undefined) {
            for (const path of V1ALPHA1_SECRETS)
                for (const s of valuesAt(v, path))
                    out.add(s);
            const config = secrets_isObj(v.machine) && secrets_isObj(v.machine.registries) ? v.machine.registries.config : undefined;
            if (secrets_isObj(config))
                for (const e of Object.values(config))
                    if (secrets_isObj(e) && secrets_isObj(e.auth))
                        auths.push(authFields(e.auth));
            continue;
        }
        if (v.kind === 'RegistryAuthConfig')
            auths.push(authFields(v));
        const paths = typeof v.kind === 'string' && Object.hasOwn(DOCUMENT_SECRETS, v.kind) ? DOCUMENT_SECRETS[v.kind] : [];
        for (const path of paths)
            for (const s of valuesAt(v, path))
                out.add(s);
    }
    for (const f of (0,redact/* secretForms */.eo)(auths))
        out.add(f);
    return [...out];
}

;// CONCATENATED MODULE: ./src/adapters/talos/machineConfig/plan.ts

/** Per host, the patch's credential: its document's when it gives one, else its legacy map's (Talos's own order). */
function desiredOf(changes) {
    const out = new Map();
    const entry = (host) => out.get(host) ?? out.set(host, { host, fields: {}, legacy: false }).get(host);
    for (const c of changes) {
        if (c.form !== 'legacy')
            continue;
        const d = entry(c.host);
        d.legacy = true;
        d.fields = fieldsOf(c.auth) ?? {};
    }
    for (const c of changes) {
        if (c.form !== 'document')
            continue;
        const d = entry(c.name);
        d.document = c.text;
        d.fields = fieldsOf(c.value) ?? {};
    }
    return [...out.values()];
}
/** Every place the patch writes on this config: the forms it gives and the forms the node carries for each host. */
function planFor(values, changes) {
    const v1 = values[v1alpha1Index(values)];
    const out = [];
    for (const d of desiredOf(changes)) {
        const i = documentIndex(values, d.host);
        const legacy = fieldsOf(legacyAuthOf(v1, d.host));
        if (d.document !== undefined || i >= 0) {
            out.push({
                form: 'document',
                desired: d,
                label: documents_documentLabel(d.host),
                before: i >= 0 ? fieldsOf(values[i]) : undefined,
                because: d.document !== undefined
                    ? 'the patch gives this document'
                    : `the node carries this document, which Talos reads for ${d.host} over machine.registries: it must carry the new credential`,
            });
        }
        if (d.legacy || legacy !== undefined) {
            out.push({
                form: 'legacy',
                desired: d,
                label: documents_legacyLabel(d.host),
                before: legacy,
                because: d.legacy
                    ? 'the patch gives this form'
                    : `the node carries this form for ${d.host} too: written with the new credential, so the old one is not left behind`,
            });
        }
    }
    return out;
}
const isPending = (p) => !sameFields(p.before, p.desired.fields);
function editOf(p) {
    const after = p.desired.fields;
    const before = p.before ?? {};
    const fields = AUTH_FIELDS.filter((k) => before[k] !== undefined || after[k] !== undefined).map((name) => ({
        name,
        change: before[name] === undefined
            ? 'added'
            : after[name] === undefined
                ? 'removed'
                : before[name] === after[name]
                    ? 'unchanged'
                    : 'changed',
    }));
    return { target: p.label, action: p.before === undefined ? 'added' : 'replaced', fields, because: p.because };
}
/** The changes the config does not carry yet, by label (`RegistryAuthConfig/<name>`, `v1alpha1 machine.registries.config.<host>.auth`). */
function pendingChanges(configText, changes) {
    const { values } = documents_parseConfig(configText);
    return planFor(values, changes)
        .filter(isPending)
        .map((p) => p.label);
}
function changeLabel(c) {
    return c.form === 'document' ? documentLabel(c.name) : legacyLabel(c.host);
}

;// CONCATENATED MODULE: ./src/adapters/talos/machineConfig/verify.ts


/**
 * The checks a plan (and every apply, before it sends) makes on the patched text without the node:
 * every document parses; the documents are the config's own, in its order, each with its own text
 * unless written here (appended ones last); the v1alpha1 document reads as before but for the auth
 * maps written; and each host's effective credential is the desired one. Returns one line per check;
 * throws MachineConfigError naming the document when one fails (a defect of the edit: nothing is sent).
 */
function verifyPatched(beforeText, afterText, changes) {
    return verifyParsed(beforeText, parseConfig(beforeText), afterText, parseConfig(afterText, 'the patched machine config'), changes);
}
function verifyParsed(beforeText, before, afterText, after, changes) {
    const fail = (why, doc) => {
        throw new MachineConfigError(`the patched machine config fails a check (nothing was sent): ${why}`, doc);
    };
    const desired = desiredOf(changes);
    const written = new Set(planFor(before.values, changes)
        .filter(isPending)
        .map((p) => p.label));
    const v1 = v1alpha1Index(before.values);
    for (const [i, v] of before.values.entries()) {
        const label = labelOf(v, i);
        if (labelOf(after.values[i], i) !== label)
            fail(`document ${i + 1} is no longer ${label}`, label);
        const ours = i === v1 ? desired.some((d) => written.has(documents_legacyLabel(d.host))) : written.has(label);
        if (!ours && withNewline(pieceOf(beforeText, before.docs, i)) !== withNewline(pieceOf(afterText, after.docs, i)))
            fail(`${label} changed`, label);
    }
    for (const [i, v] of after.values.slice(before.values.length).entries()) {
        const label = labelOf(v, before.values.length + i);
        if (!written.has(label))
            fail(`${label} was added`, label);
    }
    if (v1 >= 0) {
        const expected = structuredClone(before.values[v1]);
        for (const d of desired)
            if (written.has(documents_legacyLabel(d.host)))
                setPlain(expected, LEGACY_PATH(d.host), { ...d.fields });
        if (!same(expected, after.values[v1]))
            fail('the v1alpha1 document reads differently outside the auth maps written', 'v1alpha1');
    }
    const effective = effectiveOf(after.values);
    const lines = [`the patched config parses: ${after.values.length} documents, each other one byte for byte as it was`];
    for (const d of desired) {
        const e = effective.get(d.host);
        if (!e || !sameFields(e.fields, d.fields))
            fail(`Talos would not read the new credential for ${d.host}`, e?.from ?? documents_documentLabel(d.host));
        lines.push(`${d.host}: Talos will read the new credential from ${e.from}${e.from === documents_documentLabel(d.host) ? ' (a RegistryAuthConfig document wins over machine.registries)' : ''}`);
    }
    lines.push('nothing else changes: every byte outside the places written is the config’s own');
    return lines;
}
function setPlain(root, path, value) {
    let at = root;
    for (const k of path.slice(0, -1)) {
        if (!isObj(at[k]))
            at[k] = {};
        at = at[k];
    }
    at[path[path.length - 1]] = value;
}
/** Deep equality of plain YAML values, key order ignored. */
function same(a, b) {
    if (Array.isArray(a) || Array.isArray(b)) {
        return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
    }
    if (isObj(a) || isObj(b)) {
        if (!isObj(a) || !isObj(b))
            return false;
        const ka = Object.keys(a);
        return ka.length === Object.keys(b).length && ka.every((k) => k in b && same(a[k], b[k]));
    }
    return a === b;
}
/**
 * The documents whose text differs between the config sent and the config read back (by label; a
 * document only one of them has is named too). Talos keeps the bytes an apply sent
 * (container.NewReadonly), so anything here is another writer's.
 */
function readBackDrift(sentText, afterText) {
    if (sentText === afterText)
        return [];
    let after;
    const sent = documents_parseConfig(sentText, 'the machine config sent');
    try {
        after = documents_parseConfig(afterText, 'the machine config read back');
    }
    catch {
        return ['the whole config (the text read back is not valid YAML)'];
    }
    const out = [];
    const n = Math.max(sent.docs.length, after.docs.length);
    for (let i = 0; i < n; i++) {
        const a = i < sent.docs.length ? pieceOf(sentText, sent.docs, i) : undefined;
        const b = i < after.docs.length ? pieceOf(afterText, after.docs, i) : undefined;
        if (a !== b)
            out.push(labelOf(i < after.values.length ? after.values[i] : sent.values[i], i));
    }
    // texts that differ only outside every document (a trailing newline, a comment before the first)
    return out.length > 0 ? out : ['the text around the documents'];
}

;// CONCATENATED MODULE: ./src/adapters/talos/machineConfig/yamlEdit.ts
// The smallest text edit that sets one mapping path of a YAML document to a map of strings, keeping
// every other byte. Why not parse, set and re-render: Talos reads its config with Go's YAML, which
// keeps YAML 1.1's octals (`permissions: 0644` is 420), while a YAML 1.2 library reads `0644` as
// 644 and writes it back so: a re-rendered document would change a file's mode, and every comment,
// quote and indentation the operator wrote (docs/talos-api.md, "The edit keeps every other byte").
// - The value at the path exists: its own source range is replaced, in its own style (a block map
//   by block lines at its column, whole lines; anything else by a flow map).
// - A key on the path is missing: the smallest new entry is inserted at the end of the deepest map
//   that exists, as a block at its keys' column (or as a flow pair inside a flow map); an empty value
//   (`registries:`, `registries: {}`) becomes a block below its key.
// A value is written plain when every reader, Go's YAML included, reads it back as the same string
// (an unchanged username keeps its line byte for byte), else double-quoted (a JSON string is a YAML
// double-quoted scalar). Pure; the error never quotes the text.

/** Why the edit could not be made; names the path, never a value. */
class YamlEditError extends Error {
    constructor(message) {
        super(message);
        this.name = 'YamlEditError';
    }
}
/** `docText` with the mapping at `path` set to `value` (replaced whole); every byte outside the edit kept. */
function setMapAt(docText, path, value) {
    if (path.length === 0)
        throw new YamlEditError('an empty path');
    const doc = (0,dist/* parseDocument */.Tp)(docText);
    if (doc.errors.length > 0)
        throw new YamlEditError('the document is not valid YAML');
    if (!(0,dist/* isMap */.jh)(doc.contents))
        throw new YamlEditError('the document is not a mapping');
    const eol = docText.includes('\r\n') ? '\r\n' : '\n';
    const step = indentStep(docText, doc.contents);
    let map = doc.contents;
    for (let i = 0; i < path.length; i++) {
        const here = path.slice(0, i + 1).join('.');
        const pair = map.items.find((p) => (0,dist/* isScalar */.jn)(p.key) && String(p.key.value) === path[i]);
        const rest = nest(path.slice(i + 1), value);
        if (!pair)
            return insertPair(docText, map, path[i], rest, eol, step);
        const v = pair.value;
        if (i === path.length - 1 || isEmptyValue(v))
            return replaceValue(docText, pair, rest, eol, step);
        if (!(0,dist/* isMap */.jh)(v))
            throw new YamlEditError(`${here} is not a mapping`);
        map = v;
    }
    /* c8 ignore next */
    throw new YamlEditError('unreachable');
}
function nest(rest, value) {
    return rest.reduceRight((inner, key) => ({ [key]: inner }), value);
}
/** `key:` with nothing, `~`, `null` or `{}`: a value the edit may replace by the new entry. */
function isEmptyValue(v) {
    if (v === null || v === undefined)
        return true;
    if ((0,dist/* isScalar */.jn)(v))
        return v.value === null;
    return (0,dist/* isMap */.jh)(v) && v.flow === true && v.items.length === 0;
}
/** Sets the pair's value to `obj`: a block map keeps its lines' column, an empty value becomes a block below the key. */
function replaceValue(text, pair, obj, eol, step) {
    const v = pair.value;
    const keyStart = pair.key.range[0];
    const col = column(text, keyStart);
    if ((0,dist/* isMap */.jh)(v) && !v.flow) {
        const start = v.range[0];
        const end = lineEnd(text, contentEnd(v));
        return splice(text, start, end, blockLines(obj, column(text, start), step).join(eol).trimStart());
    }
    const colon = colonAfter(text, pair.key.range[1]);
    const valueEnd = v?.range ? v.range[1] : colon + 1;
    // a comment after the value on its line would end up after the new block: stay on the line (flow)
    const blockOk = isEmptyValue(v) && text.slice(valueEnd, lineEnd(text, valueEnd)).trim() === '';
    if (blockOk)
        return splice(text, colon + 1, valueEnd, eol + blockLines(obj, col + step, step).join(eol));
    const start = v?.range ? v.range[0] : colon + 1;
    return splice(text, start, valueEnd, `${start === colon + 1 ? ' ' : ''}${flow(obj)}`);
}
/** Adds `key: obj` to the map: a block line after its last entry, or a flow pair before its `}`. */
function insertPair(text, map, key, obj, eol, step) {
    const entry = { [key]: obj };
    if (map.flow) {
        const close = text.lastIndexOf('}', map.range[1] - 1);
        if (close < map.range[0])
            throw new YamlEditError(`the flow map holding ${key} has no closing brace`);
        const inner = flow(entry).slice(1, -1);
        return splice(text, close, close, map.items.length > 0 ? `, ${inner}` : inner);
    }
    const at = lineEnd(text, contentEnd(map));
    return splice(text, at, at, eol + blockLines(entry, column(text, map.range[0]), step).join(eol));
}
/** Where a block collection's content ends: the end of its last entry's value (trailing comments excluded). */
function contentEnd(node) {
    if ((0,dist/* isMap */.jh)(node) && !node.flow && node.items.length > 0) {
        const last = node.items[node.items.length - 1];
        return last.value === null || last.value === undefined ? last.key.range[1] : contentEnd(last.value);
    }
    if ((0,dist/* isSeq */.oP)(node) && !node.flow && node.items.length > 0)
        return contentEnd(node.items[node.items.length - 1]);
    return node.range[1];
}
function colonAfter(text, keyEnd) {
    const i = text.indexOf(':', keyEnd);
    if (i < 0)
        throw new YamlEditError('a key without its colon');
    return i;
}
function lineEnd(text, at) {
    // a range may end after the line's newline already (a block scalar's, a map's)
    const from = at > 0 && text[at - 1] === '\n' ? at - 1 : at;
    const i = text.indexOf('\n', from);
    const end = i < 0 ? text.length : i;
    return end > 0 && text[end - 1] === '\r' ? end - 1 : end;
}
function column(text, at) {
    return at - (text.lastIndexOf('\n', at - 1) + 1);
}
function splice(text, start, end, insert) {
    return text.slice(0, start) + insert + text.slice(end);
}
/** The indentation the document's author uses: the first nested block map's, else 2. */
function indentStep(text, root) {
    const rootCol = root.range ? column(text, root.range[0]) : 0;
    for (const p of root.items) {
        const v = p.value;
        if ((0,dist/* isMap */.jh)(v) && !v.flow && v.range) {
            const d = column(text, v.range[0]) - rootCol;
            if (d > 0)
                return d;
        }
    }
    return 2;
}
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_.\-/]*$/;
const key = (k) => (PLAIN_KEY.test(k) && !/^(true|false|null|yes|no|on|off|y|n|~)$/i.test(k) ? k : JSON.stringify(k));
// Plain only when no YAML reader types it otherwise: starts with a letter, no indicator, not a bool/null
// word of YAML 1.1 or 1.2 (a digit first could be an int, a float, an octal or a timestamp).
const PLAIN_VALUE = /^[A-Za-z][A-Za-z0-9._/+=@-]*$/;
const TYPED_WORD = /^(true|false|null|yes|no|on|off|y|n)$/i;
const scalar = (s) => (PLAIN_VALUE.test(s) && !TYPED_WORD.test(s) ? s : JSON.stringify(s));
function blockLines(obj, indent, step) {
    const pad = ' '.repeat(indent);
    const out = [];
    for (const [k, v] of Object.entries(obj)) {
        if (typeof v === 'string')
            out.push(`${pad}${key(k)}: ${scalar(v)}`);
        else if (Object.keys(v).length === 0)
            out.push(`${pad}${key(k)}: {}`);
        else
            out.push(`${pad}${key(k)}:`, ...blockLines(v, indent + step, step));
    }
    return out;
}
function flow(obj) {
    if (typeof obj === 'string')
        return scalar(obj);
    return `{${Object.entries(obj)
        .map(([k, v]) => `${key(k)}: ${flow(v)}`)
        .join(', ')}}`;
}

;// CONCATENATED MODULE: ./src/adapters/talos/machineConfig/patch.ts




/**
 * Applies the changes to the config text: each place planFor names is written with the host's desired
 * credential. A RegistryAuthConfig document is replaced by the patch's own document (or, when the
 * patch gives the host in the legacy form only, by a document rendered from its fields), or appended;
 * the legacy map is set in the v1alpha1 document's text, its own span only. Every other document
 * keeps its exact text and order. The result is checked (verifyPatched) before it is returned.
 * Throws MachineConfigError when the config is not YAML, has no v1alpha1 document for a legacy
 * change, cannot take the edit, or the patched text fails a check.
 */
function applyCredentialChanges(configText, changes) {
    const before = documents_parseConfig(configText);
    const { docs, values } = before;
    const pending = planFor(values, changes).filter(isPending);
    if (pending.length === 0)
        return { changed: [], edits: [], checks: [] };
    const pieces = docs.map((_d, i) => pieceOf(configText, docs, i));
    const appended = [];
    for (const p of pending) {
        if (p.form === 'document') {
            const doc = p.desired.document ?? renderDocument(p.desired);
            const i = documentIndex(values, p.desired.host);
            if (i >= 0)
                pieces[i] = `${i > 0 || pieces[0].startsWith('---') ? '---\n' : ''}${withNewline(doc)}`;
            else
                appended.push(`---\n${withNewline(doc)}`);
            continue;
        }
        const i = v1alpha1Index(values);
        if (i < 0)
            throw new MachineConfigError(`the node's machine config has no v1alpha1 document to carry ${p.label}`, 'v1alpha1');
        try {
            pieces[i] = setMapAt(pieces[i], LEGACY_PATH(p.desired.host), p.desired.fields);
        }
        catch (e) {
            if (e instanceof YamlEditError)
                throw new MachineConfigError(`the node's v1alpha1 document cannot take ${p.label}: ${e.message}`, 'v1alpha1');
            throw e;
        }
    }
    let text = pieces.map(withNewline).join('');
    if (appended.length > 0)
        text = withNewline(text) + appended.join('');
    const checks = verifyParsed(configText, before, text, documents_parseConfig(text, 'the patched machine config'), changes);
    return { text, changed: pending.map((p) => p.label), edits: pending.map(editOf), checks };
}
/** A RegistryAuthConfig document carrying the host's desired credential (values double-quoted). */
function renderDocument(d) {
    const q = (s) => JSON.stringify(s);
    return [
        'apiVersion: v1alpha1',
        'kind: RegistryAuthConfig',
        `name: ${q(d.host)}`,
        ...AUTH_FIELDS.filter((k) => d.fields[k] !== undefined).map((k) => `${k}: ${q(d.fields[k])}`),
        '',
    ].join('\n');
}

// EXTERNAL MODULE: external "node:tls"
var external_node_tls_ = __webpack_require__(1692);
// EXTERNAL MODULE: ./node_modules/@grpc/grpc-js/build/src/index.js
var src = __webpack_require__(3033);
// EXTERNAL MODULE: ./src/adapters/talos/talosErrors.ts
var talosErrors = __webpack_require__(4920);
// EXTERNAL MODULE: ./node_modules/protobufjs/index.js
var protobufjs = __webpack_require__(3928);
var protobufjs_default = /*#__PURE__*/__webpack_require__.n(protobufjs);
;// CONCATENATED MODULE: ./src/adapters/talos/api/proto.ts
// The subset of the Talos machine API and the COSI State API that the API adapter (and the twin's
// server) speak. Message and field numbers are copied from the published .proto files (sources in
// docs/talos-api.md); only the fields we read or send are declared: protobuf skips unknown fields,
// so a newer server's additions are harmless. Kept as text in a module (parsed once at run time)
// so the bundler ships it without asset files.

const GOOGLE = `
syntax = "proto3";
package google.protobuf;
message Timestamp { int64 seconds = 1; int32 nanos = 2; }
message Empty {}
`;
// siderolabs/talos api/common/common.proto
const COMMON = `
syntax = "proto3";
package common;
message Metadata { string hostname = 1; string error = 2; }
message Data { Metadata metadata = 1; bytes bytes = 2; }
`;
// siderolabs/talos api/machine/machine.proto
const MACHINE = `
syntax = "proto3";
package machine;
message VersionInfo { string tag = 1; string sha = 2; string built = 3; string go_version = 4; string os = 5; string arch = 6; }
message Version { common.Metadata metadata = 1; VersionInfo version = 2; }
message VersionResponse { repeated Version messages = 1; }

message ServiceEvent { string msg = 1; string state = 2; google.protobuf.Timestamp ts = 3; }
message ServiceEvents { repeated ServiceEvent events = 1; }
message ServiceHealth { bool unknown = 1; bool healthy = 2; string last_message = 3; google.protobuf.Timestamp last_change = 4; }
message ServiceInfo { string id = 1; string state = 2; ServiceEvents events = 3; ServiceHealth health = 4; }
message ServiceList { common.Metadata metadata = 1; repeated ServiceInfo services = 2; }
message ServiceListResponse { repeated ServiceList messages = 1; }

message ListRequest { string root = 1; bool recurse = 2; int32 recursion_depth = 3; }
message FileInfo {
  common.Metadata metadata = 1; string name = 2; int64 size = 3; uint32 mode = 4; int64 modified = 5;
  bool is_dir = 6; string error = 7; string link = 8; string relative_name = 9;
}
message ReadRequest { string path = 1; }

message EtcdMemberStatus {
  string storage_version = 11; uint64 member_id = 10; string protocol_version = 1; int64 db_size = 2; int64 db_size_in_use = 3;
  uint64 leader = 4; uint64 raft_index = 5; uint64 raft_term = 6; uint64 raft_applied_index = 7; repeated string errors = 8; bool is_learner = 9;
}
message EtcdStatus { common.Metadata metadata = 1; EtcdMemberStatus member_status = 2; }
message EtcdStatusResponse { repeated EtcdStatus messages = 1; }
message EtcdMemberAlarm {
  enum AlarmType { NONE = 0; NOSPACE = 1; CORRUPT = 2; }
  uint64 member_id = 1; AlarmType alarm = 2;
}
message EtcdAlarm { common.Metadata metadata = 1; repeated EtcdMemberAlarm member_alarms = 2; }
message EtcdAlarmListResponse { repeated EtcdAlarm messages = 1; }
message EtcdMemberListRequest { bool query_local = 1; }
message EtcdMember { uint64 id = 2; string hostname = 3; repeated string peer_urls = 4; repeated string client_urls = 5; bool is_learner = 6; }
message EtcdMembers { common.Metadata metadata = 1; repeated string legacy_members = 2; repeated EtcdMember members = 3; }
message EtcdMemberListResponse { repeated EtcdMembers messages = 1; }
`;
// siderolabs/talos api/machine/machine.proto: the reboot (MachineService.Reboot) the API path sends
const MACHINE_REBOOT = `
syntax = "proto3";
package machine;
message RebootRequest { enum Mode { DEFAULT = 0; POWERCYCLE = 1; FORCE = 2; } Mode mode = 1; }
message Reboot { common.Metadata metadata = 1; string actor_id = 2; }
message RebootResponse { repeated Reboot messages = 1; }
`;
// cosi-project/specification proto/v1alpha1/resource.proto and state.proto
const COSI = `
syntax = "proto3";
package cosi.resource;
message Metadata {
  string namespace = 1; string type = 2; string id = 3; string version = 4; string owner = 5; string phase = 6;
  google.protobuf.Timestamp created = 7; google.protobuf.Timestamp updated = 8;
  map<string, string> annotations = 11;
}
message Spec { bytes proto_spec = 1; string yaml_spec = 2; }
message Resource { Metadata metadata = 1; Spec spec = 2; }
message GetOptions {}
message GetRequest { string namespace = 1; string type = 2; string id = 3; GetOptions options = 4; }
message GetResponse { Resource resource = 1; }
`;
// siderolabs/talos api/resource/definitions/{runtime,files,time,v1alpha1}/*.proto
const SPECS = [
    `syntax = "proto3"; package talos.resource.definitions.runtime; message ServicePIDSpec { int32 pid = 1; string mount_namespace = 2; }`,
    `syntax = "proto3"; package talos.resource.definitions.files; message EtcFileStatusSpec { string spec_version = 1; }`,
    `syntax = "proto3"; package talos.resource.definitions.time; message StatusSpec { bool synced = 1; int64 epoch = 2; bool sync_disabled = 3; }`,
    `syntax = "proto3"; package talos.resource.definitions.v1alpha1; message ServiceSpec { bool running = 1; bool healthy = 2; bool unknown = 3; }`,
];
// --- applying the machine config (ApplyConfiguration; the MachineConfig resource's spec) ---
// siderolabs/talos api/machine/machine.proto (ApplyConfiguration) and api/resource/config/config.proto
const APPLY = [
    `syntax = "proto3"; package machine;
message ApplyConfigurationRequest {
  enum Mode { REBOOT = 0; AUTO = 1; NO_REBOOT = 2; STAGED = 3; TRY = 4; }
  bytes data = 1; Mode mode = 4; bool dry_run = 5;
}
message ApplyConfiguration { common.Metadata metadata = 1; repeated string warnings = 2; ApplyConfigurationRequest.Mode mode = 3; string mode_details = 4; }
message ApplyConfigurationResponse { repeated ApplyConfiguration messages = 1; }`,
    `syntax = "proto3"; package resource.config; message MachineConfigSpec { bytes yaml_marshalled = 1; }`,
];
// --- end of applying the machine config ---
let root;
/** The parsed subset; field names as in the .proto files (snake_case). */
function talosProto() {
    if (!root) {
        const r = new (protobufjs_default()).Root();
        for (const src of [GOOGLE, COMMON, MACHINE, MACHINE_REBOOT, COSI, ...SPECS, ...APPLY])
            protobufjs_default().parse(src, r, { keepCase: true });
        r.resolveAll();
        root = r;
    }
    return root;
}
function messageType(name) {
    return talosProto().lookupType(name);
}
/** The RPCs the adapter calls: full method path, request and response message names. */
const RPC = {
    version: { path: '/machine.MachineService/Version', req: 'google.protobuf.Empty', res: 'machine.VersionResponse' },
    serviceList: { path: '/machine.MachineService/ServiceList', req: 'google.protobuf.Empty', res: 'machine.ServiceListResponse' },
    list: { path: '/machine.MachineService/List', req: 'machine.ListRequest', res: 'machine.FileInfo' },
    read: { path: '/machine.MachineService/Read', req: 'machine.ReadRequest', res: 'common.Data' },
    etcdStatus: { path: '/machine.MachineService/EtcdStatus', req: 'google.protobuf.Empty', res: 'machine.EtcdStatusResponse' },
    etcdAlarmList: { path: '/machine.MachineService/EtcdAlarmList', req: 'google.protobuf.Empty', res: 'machine.EtcdAlarmListResponse' },
    etcdMemberList: {
        path: '/machine.MachineService/EtcdMemberList',
        req: 'machine.EtcdMemberListRequest',
        res: 'machine.EtcdMemberListResponse',
    },
    cosiGet: { path: '/cosi.resource.State/Get', req: 'cosi.resource.GetRequest', res: 'cosi.resource.GetResponse' },
    applyConfiguration: {
        path: '/machine.MachineService/ApplyConfiguration',
        req: 'machine.ApplyConfigurationRequest',
        res: 'machine.ApplyConfigurationResponse',
    },
    reboot: { path: '/machine.MachineService/Reboot', req: 'machine.RebootRequest', res: 'machine.RebootResponse' },
};
/** Plain-object view of a decoded message: 64-bit integers as decimal strings, enums as names, defaults filled. */
function toPlain(type, bytes) {
    return type.toObject(type.decode(bytes), { longs: String, enums: String, bytes: Buffer, defaults: true, arrays: true });
}
/** The inverse of toPlain (64-bit integers may be decimal strings). */
function encodePlain(type, value) {
    return Buffer.from(type.encode(type.fromObject(value)).finish());
}

// EXTERNAL MODULE: external "node:net"
var external_node_net_ = __webpack_require__(7030);
;// CONCATENATED MODULE: ./src/adapters/talos/api/serverIdentity.ts
// Is the server's certificate apid's certificate for the endpoint we dialed? The chain is verified
// against the talosconfig CA by TLS itself; these are the checks after it, on the certificate's
// facts only (no I/O), as talosctl makes them (docs/talos-api.md, "Server identity"):
// - the name: the dialed host (or the `talos-server-name` input) against the certificate's SANs,
//   by Go's crypto/x509 rules (VerifyHostname): an IP address only against IP SANs, a name only
//   against DNS SANs (case-insensitive, a wildcard only as the whole left-most label), never the CN;
// - the use: ExtKeyUsage serverAuth, and not clientAuth as well. Every apid certificate Talos 1.3+
//   issues is serverAuth only; one that is also a client certificate (a talosconfig certificate made
//   before Talos 1.3 carries both, and no SAN) is a key a client holds, so it cannot vouch for a server.

const SERVER_AUTH_OID = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';
/**
 * The TLS server name sent when the name to verify is an IP address. An IP address is no TLS server
 * name (RFC 6066; Node warns with DEP0123 when one is sent); apid serves one certificate whatever
 * the SNI, so this never changes what comes back, and the identity is checked against the IP itself.
 */
const IP_ENDPOINT_SNI = 'talos-apid';
/** The name the certificate must be valid for: `talos-server-name` when given, else the dialed host. */
function expectedServerName(host, serverName) {
    return serverName || host;
}
/** The SNI to send for that name. */
function sniFor(name) {
    return (0,external_node_net_.isIP)(unbracket(name)) ? IP_ENDPOINT_SNI : name;
}
/** Every reason the certificate is not apid's for `name`; empty when it is. */
function serverCertificateProblems(cert, name) {
    const problems = [];
    const eku = cert.ext_key_usage ?? [];
    if (!eku.includes(SERVER_AUTH_OID))
        problems.push('it is not a TLS server certificate (no ExtKeyUsage serverAuth)');
    if (eku.includes(CLIENT_AUTH_OID)) {
        problems.push('it is a client certificate too (ExtKeyUsage serverAuth and clientAuth; Talos issues apid certificates with serverAuth only, ' +
            'and a talosconfig certificate made before Talos 1.3 carries both), so whoever holds a client key of the cluster could present it');
    }
    const mismatch = hostnameMismatch(parseSubjectAltName(cert.subjectaltname), name);
    if (mismatch)
        problems.push(mismatch);
    return problems;
}
/** Node's `subjectaltname` text → DNS and IP entries (other kinds are not matched by talosctl). */
function parseSubjectAltName(text) {
    const out = { dns: [], ips: [] };
    if (!text)
        return out;
    // Node quotes (as a JSON string, commas escaped) a value that holds characters unsafe in this list.
    for (const entry of text.split(', ')) {
        const m = /^(DNS|IP Address):(.*)$/.exec(entry);
        if (!m)
            continue;
        const value = m[2].startsWith('"') ? unquote(m[2]) : m[2];
        if (value === undefined)
            continue;
        (m[1] === 'DNS' ? out.dns : out.ips).push(value);
    }
    return out;
}
/** Go's Certificate.VerifyHostname (crypto/x509/verify.go), as a reason or undefined. */
function hostnameMismatch(sans, host) {
    const candidateIp = unbracket(host);
    const ip = canonicalIp(candidateIp);
    if (ip) {
        if (sans.ips.some((s) => canonicalIp(s) === ip))
            return undefined;
        if (sans.ips.length === 0)
            return `it names no IP address (no IP SANs), so it cannot be valid for ${candidateIp}`;
        return `it is valid for ${sans.ips.map(showIp).join(', ')}, not ${candidateIp}`;
    }
    const candidate = lowerAscii(host);
    const validCandidate = validHostname(candidate, false);
    for (const pattern of sans.dns) {
        const ok = validCandidate && validHostname(pattern, true) ? matchHostnames(pattern, candidate) : matchExactly(pattern, candidate);
        if (ok)
            return undefined;
    }
    if (sans.dns.length === 0)
        return `it names no DNS name (no DNS SANs), so it cannot be valid for ${host}`;
    return `it is valid for ${sans.dns.join(', ')}, not ${host}`;
}
function unquote(s) {
    try {
        const v = JSON.parse(s);
        return typeof v === 'string' ? v : undefined;
    }
    catch {
        return undefined;
    }
}
function unbracket(h) {
    return h.length >= 3 && h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}
/** Go's validHostname: labels of [A-Za-z0-9_-] (no leading `-`), a pattern may start with the label `*`. */
function validHostname(host, isPattern) {
    const h = isPattern ? host : host.replace(/\.$/, '');
    if (h.length === 0)
        return false;
    return h.split('.').every((part, i) => {
        if (part === '')
            return false;
        if (isPattern && i === 0 && part === '*')
            return true;
        return /^[A-Za-z0-9_][A-Za-z0-9_-]*$/.test(part);
    });
}
function matchExactly(a, b) {
    if (a === '' || a === '.' || b === '' || b === '.')
        return false;
    return lowerAscii(a) === lowerAscii(b);
}
function matchHostnames(pattern, host) {
    const p = lowerAscii(pattern);
    const h = lowerAscii(host.replace(/\.$/, ''));
    if (p.length === 0 || h.length === 0)
        return false;
    const pp = p.split('.');
    const hp = h.split('.');
    if (pp.length !== hp.length)
        return false;
    return pp.every((part, i) => (i === 0 && part === '*') || part === hp[i]);
}
function lowerAscii(s) {
    return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}
/**
 * One spelling per address, so Node's uncompressed upper-case IPv6 and a dialed compressed one
 * compare equal, and an IPv4 address equals its IPv4-mapped IPv6 form, as Go's net.IP.Equal has it.
 */
function canonicalIp(text) {
    const kind = (0,external_node_net_.isIP)(text);
    if (kind === 0)
        return undefined;
    return new URL(`http://[${kind === 4 ? `::ffff:${text}` : text}]/`).hostname;
}
/** An IP SAN for a message: IPv4 (also when mapped) dotted, IPv6 compressed. */
function showIp(text) {
    const c = canonicalIp(text) ?? text;
    const mapped = /^\[::ffff:([0-9a-f]+):([0-9a-f]+)\]$/.exec(c);
    if (!mapped)
        return c.replace(/^\[|\]$/g, '');
    const n = (parseInt(mapped[1], 16) << 16) | parseInt(mapped[2], 16);
    return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
}

;// CONCATENATED MODULE: ./src/adapters/talos/api/refusals.ts



/**
 * Refused certificates in a row, on reconnections, that make the refusal the run's: about this many
 * seconds of dials (one per RECONNECT_MS) with no certificate naming the endpoint, well past the
 * moment apid's certificate is re-issued for an address that moved (its controllers act within a
 * second of the address change).
 */
const MAX_REFUSALS = 10;
class ServerRefusals {
    endpoint;
    serverName;
    /** the refusal that is the run's (on the first connection, or MAX_REFUSALS in a row); every later call fails with it */
    identityFailure;
    /** a certificate was accepted once: from then on a refused one is a reconnection's */
    accepted = false;
    /** refused certificates since the last accepted one, and the latest */
    refusals = 0;
    lastRefusal;
    /** calls waiting for the next dial after a refused reconnection; cancelled when the refusal becomes the run's */
    redialing = new Set();
    constructor(
    /** `host:port` as dialed */
    endpoint, 
    /** the name the certificate must be valid for */
    serverName) {
        this.endpoint = endpoint;
        this.serverName = serverName;
    }
    /** The refusal that is the run's, as it stands now (a method: read again after every await). */
    runRefusal() {
        return this.identityFailure;
    }
    /** The latest refused certificate since the last accepted one. */
    get last() {
        return this.lastRefusal;
    }
    /** The first connection's verdict (the connection's own handshake): any problem makes the refusal the run's, thrown. */
    firstVerdict(problems) {
        if (problems.length > 0)
            throw (this.identityFailure ??= new errors/* ServerIdentityError */.SL(this.endpoint, this.serverName, problems));
        this.accepted = true;
    }
    /**
     * checkServerIdentity: an Error refuses the connection. A refusal before any certificate was
     * accepted, or the MAX_REFUSALS-th in a row, is the run's, kept for every later call (and the calls
     * waiting for the next dial are ended with it); any other refuses this connection only.
     */
    check(cert) {
        const problems = serverCertificateProblems(cert, this.serverName);
        if (problems.length === 0) {
            this.accepted = true;
            this.refusals = 0;
            this.lastRefusal = undefined;
            return undefined;
        }
        if (this.identityFailure)
            return this.identityFailure;
        this.refusals++;
        const refusal = new errors/* ServerIdentityError */.SL(this.endpoint, this.serverName, this.accepted ? [...problems, `refused on ${this.refusals} reconnection${this.refusals === 1 ? '' : 's'} in a row`] : problems);
        this.lastRefusal = refusal;
        if (!this.accepted || this.refusals >= MAX_REFUSALS) {
            this.identityFailure = refusal;
            for (const call of this.redialing)
                call.cancel();
            this.redialing.clear();
        }
        return refusal;
    }
    /** grpc failed the call before any connection was made, the last dial's certificate refused (and not yet the run's refusal). */
    refusedReconnection(err) {
        return (!this.identityFailure &&
            this.lastRefusal !== undefined &&
            err.code === src/* status */.h5.UNAVAILABLE &&
            /^No connection established\b/.test(String(err.details ?? '')) &&
            String(err.details ?? '').includes(this.lastRefusal.name));
    }
    /** Tracks a call waiting for the next dial (cancelled if the refusal becomes the run's); returns its untracking. */
    waitingForDial(call) {
        this.redialing.add(call);
        return () => this.redialing.delete(call);
    }
}

// EXTERNAL MODULE: ./src/adapters/talos/api/talosconfig.ts
var talosconfig = __webpack_require__(3334);
;// CONCATENATED MODULE: ./src/adapters/talos/api/connection.ts
// One gRPC channel to the talosconfig context's endpoint (apid), over mutual TLS, shared by every
// call of the run: grpc-js multiplexes the calls as streams of one HTTP/2 connection. Each call
// names exactly one target node with the `node` metadata key (apid's one-to-one routing; the
// deprecated `nodes` key is refused by the COSI State API) and carries its own deadline.
// Failures become ToolError with the cause classified from the gRPC status, as talosctl's
// printed `rpc error: code = … desc = …` is classified on the CLI path.
// The server's certificate is checked on every connection (serverIdentity.ts), and a refused one is
// never trusted nor worked around (no fallback to talosctl). On the first connection (verifyServer,
// before the run mutates anything) a refusal is a ServerIdentityError that every later call gets too,
// never a failed reading. On a reconnection it fails that connection only: apid's certificate is
// re-issued when the machine's addresses change (a VIP moving to another control plane while the one
// holding it reboots, a node back from its reboot before its certificate names the dialed address;
// docs/talos-api.md, "Server identity"), so a call that met it waits for the next dial within its own
// deadline, and only MAX_REFUSALS refusals in a row make it the run's ServerIdentityError (the
// verdicts are kept by refusals.ts).








/** the channel's reconnect interval while the endpoint is unreachable */
const RECONNECT_MS = 1000;
/** grpc-go's names for the status codes, as apid's errors print them. */
const CODE_NAMES = [
    'OK',
    'Canceled',
    'Unknown',
    'InvalidArgument',
    'DeadlineExceeded',
    'NotFound',
    'AlreadyExists',
    'PermissionDenied',
    'ResourceExhausted',
    'FailedPrecondition',
    'Aborted',
    'OutOfRange',
    'Unimplemented',
    'Internal',
    'Unavailable',
    'DataLoss',
    'Unauthenticated',
];
class TalosConnection {
    endpoint;
    /** the name the server certificate is checked for */
    serverName;
    host;
    port;
    credentials;
    client;
    /** the server certificate's verdicts: the refusal that is the run's, the reconnections refused */
    refusals;
    callTimeoutMs;
    maxInFlight;
    inFlight = 0;
    queue = [];
    constructor(opts) {
        const { host, port } = (0,talosconfig/* splitEndpoint */.gA)(opts.endpoint);
        this.endpoint = `${host.includes(':') ? `[${host}]` : host}:${port}`;
        this.callTimeoutMs = opts.callTimeoutMs ?? 30_000;
        this.maxInFlight = Math.max(1, opts.maxInFlight ?? 32);
        this.host = host;
        this.port = port;
        this.serverName = expectedServerName(host, opts.serverName);
        this.refusals = new ServerRefusals(this.endpoint, this.serverName);
        const c = (this.credentials = opts.credentials);
        const creds = src/* credentials */.z3.createSsl(Buffer.from(c.ca), Buffer.from(c.key), Buffer.from(c.crt), {
            // The chain is verified against the talosconfig CA by TLS itself; this is the identity check,
            // made on every (re)connection: the endpoint may be another machine after a reboot.
            checkServerIdentity: (_host, cert) => this.refusals.check(cert),
        });
        // SNI and :authority carry the name checked, except that an IP address is no TLS server name
        // (serverIdentity.ts sniFor): the identity check above reads the IP itself, not the SNI.
        const sni = sniFor(this.serverName);
        this.client = new src/* Client */.Kj(this.endpoint, creds, {
            'grpc.ssl_target_name_override': sni,
            'grpc.default_authority': sni,
            // our own channel: no subchannel shared with another client in the process
            'grpc.use_local_subchannel_pool': 1,
            // The endpoint may itself be a node the run reboots: reconnect once a second while it is away, as
            // talosctl's reboot tracker does (it dials without backoff), not after grpc's backoff of up to 2 min.
            'grpc.initial_reconnect_backoff_ms': RECONNECT_MS,
            'grpc.max_reconnect_backoff_ms': RECONNECT_MS,
        });
    }
    close() {
        this.client.close();
    }
    /** calls started and not settled */
    get active() {
        return this.inFlight;
    }
    /** calls waiting for a slot */
    get waiting() {
        return this.queue.length;
    }
    /** One unary call to one node. */
    async unary(rpc, node, request = {}, opts = {}) {
        return this.call(rpc, node, request, opts, (a, done) => this.client.makeUnaryRequest(a.path, a.serialize, a.deserialize, a.request, a.metadata, a.options, (err, value) => {
            if (err)
                done.reject(err);
            else
                done.resolve(value ?? {});
        }));
    }
    /** A server-streaming call to one node, collected whole (List of one path, Read of one file). */
    async stream(rpc, node, request, opts = {}) {
        return this.call(rpc, node, request, opts, (a, done) => {
            const out = [];
            const call = this.client.makeServerStreamRequest(a.path, a.serialize, a.deserialize, a.request, a.metadata, a.options);
            call.on('data', (d) => out.push(d));
            call.on('error', (err) => done.reject(err));
            call.on('status', (s) => {
                if (s.code !== src/* status */.h5.OK)
                    return;
                done.resolve(out);
            });
            return call;
        });
    }
    /**
     * One call of `rpc` to `node` (unary or streaming), within the in-flight limit and through `dialing`:
     * `issue` starts it with the arguments every grpc-js request takes and settles it through `done`,
     * which first detaches the call from the caller's signal and from the wait for the next dial.
     */
    call(rpc, node, request, opts, issue) {
        const m = RPC[rpc];
        const reqType = messageType(m.req);
        const resType = messageType(m.res);
        const deadline = Date.now() + (opts.timeoutMs ?? this.callTimeoutMs);
        return this.limited(() => this.dialing(m.path, node, (waitForReady, track) => new Promise((resolve, reject) => {
            const args = {
                path: m.path,
                serialize: (v) => encodePlain(reqType, v),
                deserialize: (b) => toPlain(resType, b),
                request,
                metadata: this.metadata(node, waitForReady),
                options: { deadline },
            };
            const release = () => {
                unbind();
                untrack();
            };
            const call = issue(args, {
                resolve: (value) => {
                    release();
                    resolve(value);
                },
                reject: (err) => {
                    release();
                    reject(err);
                },
            });
            const unbind = cancelOn(opts.signal, call);
            const untrack = track(call);
        })));
    }
    /**
     * One call, and when its connection's certificate was refused on a reconnection, the same call once
     * more, waiting for the next dial (waitForReady) until its deadline. Sending it again is safe, even
     * for a Reboot: grpc failed it with "No connection established", before any request left. The
     * second try is cancelled when the refusal becomes the run's (ServerRefusals.check, refusals.ts).
     */
    async dialing(path, node, attempt) {
        const before = this.refusals.runRefusal();
        if (before)
            throw before;
        const untracked = () => () => undefined;
        try {
            return await attempt(false, untracked);
        }
        catch (e) {
            const err = e;
            if (!this.refusals.refusedReconnection(err))
                throw this.failure(path, node, err);
        }
        try {
            return await attempt(true, (call) => this.refusals.waitingForDial(call));
        }
        catch (e) {
            const err = e;
            // read again: a refusal that became the run's while this call waited ended it (ServerRefusals.check)
            const refused = this.refusals.runRefusal();
            if (refused)
                throw refused;
            const last = this.refusals.last;
            if (err.code === src/* status */.h5.DEADLINE_EXCEEDED && last)
                throw this.refusedUntilDeadline(path, node, last);
            throw this.failure(path, node, err);
        }
    }
    /** `node` names the target; `waitForReady` makes the call wait for a connection instead of failing at once without one. */
    metadata(node, waitForReady) {
        const md = new src/* Metadata */.OS({ waitForReady });
        md.set('node', node);
        return md;
    }
    async limited(fn) {
        if (this.inFlight >= this.maxInFlight)
            await new Promise((r) => this.queue.push(r));
        this.inFlight++;
        try {
            return await fn();
        }
        finally {
            this.inFlight--;
            this.queue.shift()?.();
        }
    }
    /**
     * Checks the endpoint's certificate with a TLS handshake of its own, before the run mutates
     * anything: unlike a refused gRPC connection, which reaches a call only as Unavailable, it says
     * why, a chain the talosconfig's CA does not sign included. Throws ServerIdentityError. An endpoint
     * that cannot be reached proves nothing either way: the calls then fail as they would have.
     */
    async verifyServer(timeoutMs = this.callTimeoutMs) {
        const c = this.credentials;
        const seen = await new Promise((resolve) => {
            const socket = (0,external_node_tls_.connect)({
                host: this.host,
                port: this.port,
                servername: sniFor(this.serverName),
                ca: c.ca,
                cert: c.crt,
                key: c.key,
                ALPNProtocols: ['h2'],
                // judged below, with the reason kept (rejecting here would leave only a closed socket); the
                // chain's verdict comes from TLS (authorizationError), the identity from serverIdentity.ts
                rejectUnauthorized: false,
                checkServerIdentity: () => undefined,
            });
            const done = (v) => {
                clearTimeout(timer);
                socket.destroy();
                resolve(v);
            };
            const timer = setTimeout(() => done(undefined), timeoutMs);
            socket.once('secureConnect', () => {
                const err = socket.authorizationError;
                done({ cert: socket.getPeerCertificate(), chainError: err ? String(err.code ?? err) : undefined });
            });
            socket.once('error', () => done(undefined));
        });
        if (!seen)
            return;
        const chain = seen.chainError ? [`it does not verify against the talosconfig's CA (${seen.chainError})`] : [];
        const problems = [...chain, ...serverCertificateProblems(seen.cert, this.serverName)];
        this.refusals.firstVerdict(problems);
    }
    /** A failed call: the refused certificate when it is the run's (the call saw only Unavailable), else a ToolError. */
    failure(path, node, err) {
        return this.refusals.runRefusal() ?? this.toolError(path, node, err);
    }
    /** A call whose deadline came while every dial met a refused certificate (not yet the run's refusal). */
    refusedUntilDeadline(path, node, refusal) {
        const text = `rpc error: code = Unavailable desc = no connection: the server certificate was refused on every dial until the call's deadline (${refusal.reasons.join('; ')})`;
        return new errors/* ToolError */.v4({
            tool: 'talos-api',
            command: `${path} (node ${node} via ${this.endpoint})`,
            kind: 'transport',
            exitCode: null,
            stderr: text,
            node,
            message: `${path} for ${node} via ${this.endpoint} failed (transport: ${text})`,
        });
    }
    toolError(path, node, err) {
        const code = CODE_NAMES[err.code] ?? String(err.code);
        // the node's words as it sent them: classified and matched here, masked where they are shown (src/action/masked.ts)
        const text = `rpc error: code = ${code} desc = ${String(err.details ?? '')}`;
        const kind = (0,talosErrors/* classifyTalosError */.yC)(text);
        return new errors/* ToolError */.v4({
            tool: 'talos-api',
            command: `${path} (node ${node} via ${this.endpoint})`,
            kind,
            exitCode: null,
            stderr: text,
            node,
            message: `${path} for ${node} via ${this.endpoint} failed (${kind}: ${text})`,
        });
    }
}
/** The status description of a ToolError from this module. */
function grpcDetailsOf(e) {
    return e.stderr.replace(/^rpc error: code = \w+ desc = /, '');
}
/**
 * Cancels `call` when `signal` aborts (at once if it already has); returns the unbinding to run when the
 * call settles, so a long-lived signal (the runner's) collects no listener per call.
 */
function cancelOn(signal, call) {
    const cancel = () => call.cancel();
    if (signal?.aborted)
        cancel();
    else
        signal?.addEventListener('abort', cancel, { once: true });
    return () => signal?.removeEventListener('abort', cancel);
}

;// CONCATENATED MODULE: ./src/adapters/talos/api/applyConfig.ts
// The credential patch through MachineService.ApplyConfiguration, as `talosctl patch machineconfig
// --mode=no-reboot` does it, and no more: read the active MachineConfig, take its multi-document
// body the way talosctl does (two forms, docs/talos-api.md "Applying the credential"), change
// only the credential documents (src/adapters/talos/machineConfig/patch.ts), send nothing when nothing changes,
// send NO_REBOOT (never AUTO: a ≤ 1.13 node may reboot; never REBOOT: 1.14 refuses it), retry the
// node's "another apply configuration is already in progress", then re-read and check the change
// landed, byte for byte (Talos keeps the bytes an apply sent; there is no compare-and-swap on a
// machine config, so any other difference is another writer's). Plan mode never calls
// ApplyConfiguration, not even as a dry run (docs/plan.md): its preview is the action's own change
// list, checked locally (src/adapters/talos/machineConfig/verify.ts).
// The config read back carries every credential of the cluster: its secrets, as Talos defines them
// (src/adapters/talos/machineConfig/secrets.ts), are registered for masking before anything could quote them, and no
// message here carries its text.









const MACHINE_CONFIG = { type: 'MachineConfigs.config.talos.dev', namespace: 'config', id: 'v1alpha1' };
/** machined's text for a concurrent apply (v1alpha1_server.go ApplyConfiguration, FailedPrecondition) */
const APPLY_IN_PROGRESS = 'another apply configuration is already in progress';
/**
 * The multi-document body of a MachineConfig resource, as talosctl's extractMachineConfigBody reads
 * it: with annotations (Talos ≥ 1.5 sets `talos.dev/yaml-spec`) the spec's YAML is one string scalar
 * holding the body; without (older nodes) the spec's YAML is the body itself.
 */
function machineConfigBody(resource) {
    const md = (resource.metadata ?? {});
    const spec = (resource.spec ?? {});
    const yaml = typeof spec.yaml_spec === 'string' ? spec.yaml_spec : '';
    const annotations = (md.annotations ?? {});
    if (Object.keys(annotations).length === 0)
        return yaml;
    let body;
    try {
        body = (0,dist/* parse */.qg)(yaml);
    }
    catch (e) {
        const pos = e.linePos?.[0];
        throw new MachineConfigError(`the MachineConfig spec is not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`, 'v1alpha1');
    }
    if (typeof body !== 'string')
        throw new MachineConfigError('the MachineConfig spec is not one YAML string holding the config', 'v1alpha1');
    return body;
}
async function readConfig(conn, node, opts) {
    const res = await conn.unary('cosiGet', node, { ...MACHINE_CONFIG });
    const resource = (res.resource ?? {});
    const md = (resource.metadata ?? {});
    if (md.type !== MACHINE_CONFIG.type || md.id !== MACHINE_CONFIG.id)
        throw configError(node, `the answer is not ${MACHINE_CONFIG.type} ${MACHINE_CONFIG.id}`, 'unparseable');
    let body;
    try {
        body = machineConfigBody(resource);
        for (const s of configSecrets(body))
            opts.secret(s);
    }
    catch (e) {
        if (e instanceof MachineConfigError)
            throw configError(node, e.message, 'unparseable');
        throw e;
    }
    return body;
}
/**
 * Reads the node's active config and applies the credential changes to it, sending nothing: what
 * applyCredential sends and previewCredential shows, checked locally (verifyPatched). Every secret of
 * both texts is registered first.
 */
async function patchedConfig(conn, node, changes, opts) {
    const before = await readConfig(conn, node, opts);
    let patched;
    try {
        patched = applyCredentialChanges(before, changes);
    }
    catch (e) {
        if (e instanceof MachineConfigError)
            throw configError(node, e.message, 'invalid');
        throw e;
    }
    // the patch's own values too (the action registered them from the inputs; this client may be used alone)
    if (patched.text !== undefined)
        for (const s of configSecrets(patched.text))
            opts.secret(s);
    return patched;
}
/**
 * What the apply would change on one node, from the action's own change list: the places written,
 * field by field, and the checks made on the patched text, never a value nor machined's text. Only
 * the active config is read (COSI Get): no ApplyConfiguration at all, because even a dry run takes
 * the node's apply lock and cancels a pending `--mode=try` rollback (v1alpha1_server.go, docs/plan.md).
 */
async function previewCredential(conn, node, changes, opts) {
    const patched = await patchedConfig(conn, node, changes, opts);
    return { shown: true, edits: patched.edits, checks: patched.checks };
}
/** Applies the credential changes to one node; resolves once the node's config carries them. */
async function applyCredential(conn, node, changes, opts) {
    const patched = await patchedConfig(conn, node, changes, opts);
    if (patched.text === undefined) {
        opts.log(`${node}: the machine config already carries the credential: ApplyConfiguration not sent`);
        return;
    }
    const documents = patched.changed.join(', ');
    const attempts = Math.max(1, opts.attempts ?? 5);
    const sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    for (let n = 1;; n++) {
        try {
            const res = await conn.unary('applyConfiguration', node, { data: Buffer.from(patched.text), mode: 'NO_REBOOT', dry_run: false });
            for (const m of (res.messages ?? [])) {
                for (const w of (m.warnings ?? []))
                    opts.log(`${node}: ApplyConfiguration warning: ${w}`);
                opts.log(`${node}: ApplyConfiguration (${String(m.mode)}) changed ${documents}: ${typeof m.mode_details === 'string' ? m.mode_details : ''}`);
            }
            break;
        }
        catch (e) {
            if (!(e instanceof errors/* ToolError */.v4))
                throw e;
            const details = grpcDetailsOf(e);
            if (details.includes(APPLY_IN_PROGRESS) && n < attempts) {
                const wait = opts.backoffMs?.(n) ?? 500 * n;
                opts.log(`${node}: ${APPLY_IN_PROGRESS}: retrying in ${wait} ms (attempt ${n + 1} of ${attempts})`);
                await sleep(wait);
                continue;
            }
            if (/code = InvalidArgument/.test(e.stderr)) {
                throw configError(node, `the node refused the machine config changing ${documents} (InvalidArgument): ${details}`, 'invalid');
            }
            throw e;
        }
    }
    const after = await readConfig(conn, node, opts);
    let missing;
    try {
        missing = pendingChanges(after, changes);
    }
    catch (e) {
        throw configError(node, `re-reading after ApplyConfiguration: ${(0,errors/* errorMessage */.gJ)(e)}`, 'unparseable');
    }
    if (missing.length > 0) {
        throw configError(node, `ApplyConfiguration answered OK but the machine config read back does not carry ${missing.join(', ')} (another writer, e.g. Omni, changed it?)`, 'conflict');
    }
    // Talos keeps the bytes sent: anything else that differs was changed by another writer since
    const drift = readBackDrift(patched.text, after);
    if (drift.length > 0) {
        throw configError(node, `the machine config read back after ApplyConfiguration differs from the one sent in ${drift.join(', ')}; the apply changed only ${documents} (another writer, e.g. Omni, changed the rest?)`, 'conflict');
    }
}
function configError(node, why, kind) {
    return new errors/* ToolError */.v4({
        tool: 'talos-api',
        command: `${RPC.applyConfiguration.path} (node ${node})`,
        kind,
        exitCode: null,
        stderr: why,
        node,
        message: `applying the credential to the machine config of ${node}: ${why}`,
    });
}

;// CONCATENATED MODULE: ./src/adapters/talos/api/answers.ts
// The Talos API's answers read for the API client (apiClient.ts): a COSI spec from its proto or YAML
// form, a google.protobuf.Timestamp as an exact instant, scalar fields, and per node (and path) a
// reading or the classified failure. No I/O.





/** `proto_spec` when the server filled it (field names as in the .proto), else the `yaml_spec` text. */
function decodeSpec(node, specType, spec) {
    const bytes = spec.proto_spec;
    if (bytes && bytes.length > 0) {
        try {
            return toPlain(messageType(specType), bytes);
        }
        catch (e) {
            throw unparseable('/cosi.resource.State/Get', node, `${specType}: ${(0,errors/* errorMessage */.gJ)(e)}`);
        }
    }
    const yaml = typeof spec.yaml_spec === 'string' ? spec.yaml_spec : '';
    let doc;
    try {
        doc = (0,dist/* parse */.qg)(yaml);
    }
    catch {
        throw unparseable('/cosi.resource.State/Get', node, `${specType}: yaml_spec is not valid YAML`);
    }
    const o = (doc ?? {});
    // yaml_spec keys are the Go yaml tags (camelCase): map the ones we read to the .proto names
    return { ...o, spec_version: o.specVersion, mount_namespace: o.mountNamespace, sync_disabled: o.syncDisabled };
}
/** A google.protobuf.Timestamp as an exact Instant (milliseconds with the nanoseconds as a fraction). */
function timestamp(ts) {
    if (!ts)
        return undefined;
    const seconds = Number(ts.seconds ?? 0);
    const nanos = Number(ts.nanos ?? 0);
    if (seconds === 0 && nanos === 0)
        return undefined; // unset
    const ms = seconds * 1000 + nanos / 1e6;
    return { earliestMs: ms, latestMs: ms, via: 'api', text: `${rfc3339Seconds(seconds).slice(0, -1)}.${String(nanos).padStart(9, '0')}Z` };
}
/** An instant the evidence cannot do without: its absence makes the answer unparseable (→ reboot). */
function required(i, rpc, node, why) {
    if (!i)
        throw unparseable(rpc, node, why);
    return i;
}
function rfc3339Seconds(s) {
    return `${new Date(s * 1000).toISOString().slice(0, 19)}Z`;
}
function memberHex(v) {
    return BigInt((0,core_text/* scalarText */.w)(v) || '0')
        .toString(16)
        .padStart(16, '0');
}
function first(res, key) {
    return (res[key] ?? [])[0];
}
function unparseable(rpc, node, why) {
    return refused(rpc, node, 'unparseable', `unparseable answer: ${why}`);
}
/** The node answered, but not with a reading we can use. */
function refused(rpc, node, kind, why) {
    return new errors/* ToolError */.v4({
        tool: 'talos-api',
        command: `${rpc} (node ${node})`,
        kind,
        exitCode: null,
        stderr: why,
        node,
        message: `${rpc} for ${node}: ${why}`,
    });
}
/**
 * A classified failure becomes the node's failed reading; anything else propagates: a defect, or a
 * ServerIdentityError (the server's certificate was refused: nothing it says is a reading).
 */
function failed(e) {
    if (e instanceof errors/* ToolError */.v4)
        return { ok: false, error: (0,errors/* errorMessage */.gJ)(e) };
    throw e;
}
async function perNode(addresses, read) {
    const out = new Map();
    await Promise.all((0,core_async/* unique */.Am)(addresses).map(async (node) => {
        try {
            out.set(node, { ok: true, value: await read(node) });
        }
        catch (e) {
            out.set(node, failed(e));
        }
    }));
    return (0,core_async/* reorder */.Yb)(out, addresses);
}
async function perNodePath(addresses, paths, read) {
    const nodes = (0,core_async/* unique */.Am)(addresses);
    const ps = (0,core_async/* unique */.Am)(paths);
    const out = new Map(nodes.map((n) => [n, new Map()]));
    const results = await Promise.all(nodes.flatMap((n) => ps.map(async (p) => {
        try {
            return [n, p, { ok: true, value: await read(n, p) }];
        }
        catch (e) {
            return [n, p, failed(e)];
        }
    })));
    for (const [n, p, r] of results)
        out.get(n).set(p, r);
    return out;
}

// EXTERNAL MODULE: ./src/core/format.ts
var format = __webpack_require__(6228);
;// CONCATENATED MODULE: ./src/adapters/talos/api/reboot.ts
// A reboot over the Talos API, followed as talosctl's `reboot --wait` follows it, reduced to its
// proof: read the boot id, send MachineService.Reboot (mode DEFAULT), then read the boot id again
// once a second with short calls until the node answers with a different one or the deadline
// passes. talosctl also follows the Events stream filtered by the Reboot's actor id; the stream
// only reports progress, and its end condition (the machine RUNNING and ready) is followed by the
// same boot id check, so polling the boot id decides the same outcome (docs/talos-api.md, "Reboot").
// While the node is down every call fails with Unavailable, a deadline or a reset: that is the
// reboot happening, not an error. Deadline: `timeoutMs` (ready-timeout); cancellation ends it.
// The first boot id read comes before anything is sent: a failure there is read again within the
// deadline (the endpoint or the node may be away for a moment), and when it still fails the reboot
// was never requested: RebootNotSentError, so the caller may give the node back as it is.



/** a boot id read given less time than this is not worth sending: the deadline has come */
const MIN_POLL_CALL_MS = 100;
/** the kernel's boot id, as talosctl's action tracker reads it */
const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';
/**
 * Thrown when the boot id cannot be read before the reboot because the role may not Read (an
 * `os:operator` certificate may Reboot but not Read): nothing was sent, and only the event stream
 * (talosctl) can follow such a reboot.
 */
class BootIdForbidden extends Error {
    error;
    constructor(error) {
        super(error.message);
        this.error = error;
        this.name = 'BootIdForbidden';
    }
}
/** Failures while the node is down or coming back: expected, the next read follows. */
function isOutage(e) {
    if (!(e instanceof errors/* ToolError */.v4))
        return false;
    if (e.kind === 'transport' || e.kind === 'timeout')
        return true;
    // a stream cut by the node going down (talosctl retries io.EOF and Canceled the same way)
    return /code = Canceled|\bEOF\b|RST_STREAM/.test(e.stderr);
}
async function rebootOverApi(conn, node, timeoutMs, opts = {}) {
    const { signal } = opts;
    const pollMs = opts.pollMs ?? 1000;
    const pollCallMs = opts.pollCallMs ?? 5000;
    const deadline = Date.now() + timeoutMs;
    const what = `${RPC.reboot.path} (node ${node} via ${conn.endpoint})`;
    const fail = (kind, why) => new errors/* ToolError */.v4({ tool: 'talos-api', command: what, kind, exitCode: null, stderr: why, node, message: `${what}: ${why}` });
    const cancelled = () => fail('cancelled', 'cancelled: the run was stopped while the node rebooted');
    const bootId = async (callMs) => {
        const chunks = await conn.stream('read', node, { path: BOOT_ID_PATH }, { timeoutMs: callMs, signal });
        const text = Buffer.concat(chunks.map((c) => c.bytes ?? Buffer.alloc(0))).toString('utf8');
        return text.trim();
    };
    if (signal?.aborted)
        throw cancelled();
    const before = await bootIdBefore(node, deadline, { bootId, pollMs, pollCallMs, signal, cancelled, what });
    if (before === '')
        throw new errors/* RebootNotSentError */.fo(node, `${what}: not sent: ${BOOT_ID_PATH} is empty`);
    // Any failure of the Reboot call itself fails the reboot, as the tracker's action does: the node
    // answers before it goes down (the sequence runs after the response).
    let actorId;
    try {
        const res = await conn.unary('reboot', node, { mode: 'DEFAULT' }, { signal });
        const messages = (res.messages ?? []);
        // talosctl: "no messages returned from action run"
        if (messages.length === 0)
            throw fail('unparseable', 'no messages returned from action run');
        actorId = typeof messages[0].actor_id === 'string' ? messages[0].actor_id : '';
    }
    catch (e) {
        if (signal?.aborted)
            throw cancelled();
        throw e;
    }
    let last = 'the boot id was unchanged';
    for (;;) {
        await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())), signal);
        if (signal?.aborted)
            throw cancelled();
        const left = deadline - Date.now();
        if (left < MIN_POLL_CALL_MS) {
            throw fail('timeout', `the node did not answer with a new boot id within ${(0,format/* formatDuration */.a3)(timeoutMs)} (context deadline exceeded; last: ${last})`);
        }
        const callMs = Math.min(pollCallMs, left);
        try {
            const now = await bootId(callMs);
            if (now !== '' && now !== before)
                return { before, after: now, actorId };
            last = 'the boot id was unchanged';
        }
        catch (e) {
            if (signal?.aborted)
                throw cancelled();
            if (!isOutage(e))
                throw e;
            // a read cut short by our own deadline says nothing about the node
            if (!(callMs < pollCallMs && e instanceof errors/* ToolError */.v4 && e.kind === 'timeout'))
                last = (0,errors/* errorMessage */.gJ)(e);
        }
    }
}
/**
 * The boot id before the reboot, read again while its reads fail as an outage does (the node or the
 * endpoint away for a moment) until `deadline`. Nothing has been sent yet, so every way out but a
 * forbidden read (BootIdForbidden: talosctl follows such a reboot without the boot id) and a
 * cancellation is RebootNotSentError, with the last failure as its cause; a refused server
 * certificate stays the cause too, so the caller still stops the run on it.
 */
async function bootIdBefore(node, deadline, o) {
    let attempts = 0;
    for (;;) {
        attempts++;
        const left = deadline - Date.now();
        try {
            // the first read gets the connection's own deadline; a read again, the poll's (never past the deadline)
            return await o.bootId(attempts === 1 ? undefined : Math.max(MIN_POLL_CALL_MS, Math.min(o.pollCallMs, left)));
        }
        catch (e) {
            if (o.signal?.aborted)
                throw o.cancelled();
            if (e instanceof errors/* ToolError */.v4 && e.kind === 'forbidden')
                throw new BootIdForbidden(e);
            const retry = isOutage(e) && !(e instanceof errors/* ServerIdentityError */.SL) && deadline - Date.now() > o.pollMs + MIN_POLL_CALL_MS;
            if (!retry) {
                const tries = attempts === 1 ? 'once' : `${attempts} times`;
                throw new errors/* RebootNotSentError */.fo(node, `${o.what}: not sent: the boot id to compare with after the reboot could not be read (read ${tries}): ${(0,errors/* errorMessage */.gJ)(e)}`, { cause: e });
            }
            await sleep(o.pollMs, o.signal);
            if (o.signal?.aborted)
                throw o.cancelled();
        }
    }
}
function sleep(ms, signal) {
    return new Promise((resolve) => {
        const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
    });
}

// EXTERNAL MODULE: ./src/adapters/talos/resources.ts
var resources = __webpack_require__(5825);
;// CONCATENATED MODULE: ./src/adapters/talos/api/apiClient.ts
// TalosClient over the Talos API (gRPC through apid): every read, one call per node and resource,
// all on one connection. Timestamps come back as google.protobuf.Timestamp (nanoseconds), so the
// instants here are exact, except a file's `modified`, which the server sends in whole seconds.
// The credential patch goes through ApplyConfiguration (applyConfig.ts) when it is one of the two
// credential forms (plan mode shows the action's own change list for it, applying nothing), and the
// reboot over the API (reboot.ts: boot id, Reboot, boot id again); any other patch, and a reboot the
// certificate's role cannot follow (no Read), are delegated to the CLI adapter given at construction
// (`patch` keeps Talos's own patch semantics; `reboot --wait` tracks the boot id).











class TalosApi {
    conn;
    mutations;
    opts;
    constructor(conn, 
    /** the CLI adapter that performs the mutations */
    mutations, 
    /**
     * `apply`: set when the auth patch is one of the credential forms (it is applied over the API);
     * `reboot`: the reboot's cancellation (the runner's signal) and polling
     */
    opts = {}) {
        this.conn = conn;
        this.mutations = mutations;
        this.opts = opts;
    }
    close() {
        this.conn.close();
    }
    // --- reads -----------------------------------------------------------------------------------
    async version(addresses) {
        return perNode(addresses, async (node) => {
            const res = await this.conn.unary('version', node);
            const tag = first(res, 'messages')?.version?.tag;
            if (typeof tag !== 'string' || tag === '')
                throw unparseable('/machine.MachineService/Version', node, 'no version tag');
            return tag;
        });
    }
    async criService(addresses) {
        return perNode(addresses, async (node) => {
            const clientBeforeMs = Date.now();
            const res = await this.conn.unary('serviceList', node);
            const clientAfterMs = Date.now();
            const services = (first(res, 'messages')?.services ?? []);
            const cri = services.find((s) => s.id === 'cri');
            if (!cri)
                throw unparseable('/machine.MachineService/ServiceList', node, 'the node lists no service "cri"');
            const health = (cri.health ?? {});
            const events = ((cri.events ?? {}).events ?? []);
            return {
                via: 'api',
                state: (0,core_text/* scalarText */.w)(cri.state),
                health: health.unknown ? '?' : health.healthy ? 'OK' : 'Fail',
                lastHealthMessage: (0,core_text/* scalarText */.w)(health.last_message) || undefined,
                events: events.map((e) => ({
                    state: (0,core_text/* scalarText */.w)(e.state),
                    message: (0,core_text/* scalarText */.w)(e.msg),
                    at: required(timestamp(e.ts), '/machine.MachineService/ServiceList', node, `the cri event "${(0,core_text/* scalarText */.w)(e.msg)}" has no timestamp`),
                })),
                clientBeforeMs,
                clientAfterMs,
            };
        });
    }
    async servicePids(addresses) {
        const out = new Map();
        await Promise.all((0,core_async/* unique */.Am)(addresses).map(async (node) => {
            try {
                const r = await this.cosiGet(node, 'servicePid', resources/* COSI */.hz.servicePid.id);
                const created = required(r.created, '/cosi.resource.State/Get', node, 'ServicePIDs cri has no metadata.created');
                out.set(node, { ok: true, value: { pid: Number(r.spec.pid), created } });
            }
            catch (e) {
                // A node older than the type answers through its access filter (docs/talos-api.md).
                if (e instanceof errors/* ToolError */.v4 && (0,resources/* isUnregisteredType */.Wj)(e.stderr))
                    out.set(node, undefined);
                else
                    out.set(node, failed(e));
            }
        }));
        return (0,core_async/* reorder */.Yb)(out, addresses);
    }
    async timeStatus(addresses) {
        return perNode(addresses, async (node) => {
            const r = await this.cosiGet(node, 'timeStatus', resources/* COSI */.hz.timeStatus.id);
            return { synced: Boolean(r.spec.synced), epoch: Number(r.spec.epoch ?? 0) };
        });
    }
    async etcFileStatus(addresses, paths) {
        return perNodePath(addresses, paths, async (node, path) => {
            const id = (0,resources/* etcFileId */.Yi)(path);
            if (id === undefined)
                throw refused('/cosi.resource.State/Get', node, 'usage', `${path} is not a file under /etc, so it has no EtcFileStatus`);
            const r = await this.cosiGet(node, 'etcFileStatus', id);
            const updated = required((0,resources/* recordedAt */.KI)(r.created, r.updated), '/cosi.resource.State/Get', node, `EtcFileStatus ${id} has no created/updated timestamps`);
            return { id, updated, specVersion: r.spec.spec_version === undefined ? undefined : (0,core_text/* scalarText */.w)(r.spec.spec_version) };
        });
    }
    async listFiles(addresses, paths) {
        return perNodePath(addresses, paths, async (node, path) => {
            let entries;
            try {
                entries = await this.conn.stream('list', node, { root: path });
            }
            catch (e) {
                // the server's lstat of the root fails before anything is streamed: the path is not there
                if (e instanceof errors/* ToolError */.v4 && (0,resources/* isMissingFile */.F6)(grpcDetailsOf(e)))
                    return { path, exists: false };
                throw e;
            }
            const entry = entries.find((f) => f.name === path) ?? (entries.length === 1 ? entries[0] : undefined);
            if (!entry)
                throw unparseable('/machine.MachineService/List', node, `no entry for ${path}`);
            if (entry.error)
                throw refused('/machine.MachineService/List', node, 'server', `${path}: ${(0,core_text/* scalarText */.w)(entry.error)}`);
            if (entry.is_dir)
                throw refused('/machine.MachineService/List', node, 'invalid', `${path} is a directory, not a file`);
            const s = Number(entry.modified);
            // whole seconds (ModTime().Unix()): the write happened somewhere in [s, s+1)
            return { path, exists: true, mtime: { earliestMs: s * 1000, latestMs: s * 1000 + 999.999, via: 'api', text: rfc3339Seconds(s) } };
        });
    }
    async readAuth(address, path) {
        let chunks;
        try {
            chunks = await this.conn.stream('read', address, { path });
        }
        catch (e) {
            if (e instanceof errors/* ToolError */.v4 && e.kind === 'not-found')
                return { ok: true, value: { path, exists: false, auth: {} } };
            return failed(e);
        }
        const text = Buffer.concat(chunks.map((c) => c.bytes ?? Buffer.alloc(0))).toString('utf8');
        try {
            return { ok: true, value: { path, exists: true, auth: (0,criToml/* parseCriRegistryAuth */.n)(text) } };
        }
        catch (e) {
            // the ParseError names a line and column only; the file text holds the credential
            if (e instanceof parseError/* ParseError */.m)
                return { ok: false, error: `/machine.MachineService/Read ${path} for ${address}: unparseable: ${e.message}` };
            throw e;
        }
    }
    async etcdStatus(address) {
        const res = await this.conn.unary('etcdStatus', address);
        return (res.messages ?? []).map((m) => {
            const s = (m.member_status ?? {});
            return {
                node: address,
                memberId: memberHex(s.member_id),
                learner: Boolean(s.is_learner),
                errors: (s.errors ?? []).join(', '),
            };
        });
    }
    async etcdAlarms(address) {
        const res = await this.conn.unary('etcdAlarmList', address);
        return (res.messages ?? []).flatMap((m) => (m.member_alarms ?? []).map((a) => ({ node: address, memberId: memberHex(a.member_id), alarm: String(a.alarm) })));
    }
    async etcdMembers(address) {
        // query_local: the node's own etcd answers, as `talosctl etcd members` asks (docs/talos-api.md)
        const res = await this.conn.unary('etcdMemberList', address, { query_local: true });
        const messages = (res.messages ?? []);
        if (messages.length !== 1)
            throw unparseable(RPC.etcdMemberList.path, address, `${messages.length} messages, expected one`);
        const members = (messages[0].members ?? []).map((m) => ({
            id: memberHex(m.id),
            name: (0,core_text/* scalarText */.w)(m.hostname),
            peerUrls: (m.peer_urls ?? []).map(core_text/* scalarText */.w),
            clientUrls: (m.client_urls ?? []).map(core_text/* scalarText */.w),
            learner: Boolean(m.is_learner),
        }));
        // a running etcd is always a member of its own list
        if (members.length === 0)
            throw unparseable(RPC.etcdMemberList.path, address, 'an empty member list');
        return members;
    }
    // --- mutations ---------------------------------------------------------------------------------
    /**
     * plan mode: the action's own change list for the node's config (read, never applied: no dry run),
     * when openTalosClient found the patch in a form of ours; else why there is none.
     */
    async previewCredentialPatch(address) {
        if (!this.opts.apply) {
            return {
                shown: false,
                why: `talosctl would apply the patch (${this.opts.notApplied ?? 'not one of the credential forms'}) with Talos's own merge, which the action does not predict`,
            };
        }
        return previewCredential(this.conn, address, this.opts.apply.changes, this.opts.apply);
    }
    patchMachineConfig(address) {
        if (this.opts.apply)
            return applyCredential(this.conn, address, this.opts.apply.changes, this.opts.apply);
        return this.mutations.patchMachineConfig(address);
    }
    /** MachineService.Reboot, resolved when the node answers with a new boot id (reboot.ts); `timeoutMs` bounds it. */
    async reboot(address, timeoutMs) {
        try {
            await rebootOverApi(this.conn, address, timeoutMs, this.opts.reboot ?? {});
        }
        catch (e) {
            // nothing was sent: talosctl follows the reboot through events without reading the boot id
            if (e instanceof BootIdForbidden)
                return this.mutations.reboot(address, timeoutMs);
            throw e;
        }
    }
    // --- machinery -------------------------------------------------------------------------------
    async cosiGet(node, kind, id) {
        const def = resources/* COSI */.hz[kind];
        const res = await this.conn.unary('cosiGet', node, { namespace: def.namespace, type: def.type, id });
        const resource = res.resource;
        const md = (resource?.metadata ?? {});
        if (md.id !== id || md.type !== def.type) {
            throw unparseable('/cosi.resource.State/Get', node, `expected ${def.type} ${JSON.stringify(id)}, got ${String(md.type)} ${JSON.stringify(md.id)}`);
        }
        const spec = (resource?.spec ?? {});
        return {
            created: timestamp(md.created),
            updated: timestamp(md.updated),
            spec: decodeSpec(node, def.spec, spec),
        };
    }
}

;// CONCATENATED MODULE: ./src/adapters/talos/api/apiPath.ts
// The API read path's modules, imported together by src/adapters/talos/open.ts: one dynamic import makes one chunk, so
// the modules both need (the .proto subset, the connection) are bundled once, and only when the API
// path is chosen.




/***/ })

};
