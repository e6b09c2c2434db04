import { describe, expect, it } from 'vitest';
import { parseLabelSelector } from '../../src/core/labelSelector.js';
import { emptySelection, identityChanges, selectNodes, validateInventory } from '../../src/rules/inventory.js';
import { keys, node, OTHER_OWNER } from './fixtures.js';

const w1 = node({ name: 'w1', internalIPs: ['10.0.0.11'] });
const w2 = node({ name: 'w2', internalIPs: ['10.0.0.12'] });
const cp1 = node({ name: 'cp1', internalIPs: ['10.0.0.1'], role: 'control-plane' });

describe('validateInventory', () => {
  const rows = [
    { name: 'a healthy inventory has no problems', nodes: [w1, w2, cp1], want: [] as string[] },
    { name: 'empty uid', nodes: [w1, { ...w2, uid: '' }], want: ['node w2 has an empty uid'] },
    { name: 'duplicate uid names both nodes', nodes: [w1, { ...w2, uid: w1.uid }], want: [`nodes w1, w2 share the uid ${w1.uid}`] },
    {
      name: 'no InternalIP',
      nodes: [{ ...w1, internalIPs: [] }],
      want: ['node w1 must have exactly one InternalIP address, found 0 (none)'],
    },
    {
      name: 'two InternalIPs',
      nodes: [{ ...w1, internalIPs: ['10.0.0.11', '10.0.0.99'] }],
      want: ['node w1 must have exactly one InternalIP address, found 2 (10.0.0.11, 10.0.0.99)'],
    },
    {
      name: 'InternalIP shared',
      nodes: [w1, { ...w2, internalIPs: ['10.0.0.11'] }],
      want: ['InternalIP 10.0.0.11 is shared by nodes w1, w2'],
    },
    {
      name: 'residual owner',
      nodes: [{ ...w1, annotations: { [keys.owner]: OTHER_OWNER }, hasAnnotationsMap: true }],
      want: [`node w1 carries a residual claim (${keys.owner}=${JSON.stringify(OTHER_OWNER)})`],
    },
    {
      name: 'residual phase alone',
      nodes: [{ ...w1, annotations: { [keys.phase]: 'mutating' }, hasAnnotationsMap: true }],
      want: [`node w1 carries a residual claim (${keys.phase}="mutating")`],
    },
    {
      name: 'was-cordoned or verified-revision alone is no claim',
      nodes: [{ ...w1, annotations: { [keys.wasCordoned]: 'true', [keys.verifiedRevision]: 'r1' }, hasAnnotationsMap: true }],
      want: [],
    },
  ];
  it.each(rows)('$name', ({ nodes, want }) => {
    expect(validateInventory(nodes, keys)).toEqual(want);
  });
});

describe('selectNodes', () => {
  const done = (n: ReturnType<typeof node>) => ({ ...n, annotations: { [keys.verifiedRevision]: 'r2' }, hasAnnotationsMap: true });
  const all = [
    node({ name: 'cp2', role: 'control-plane' }),
    node({ name: 'w10' }),
    node({ name: 'cp1', role: 'control-plane' }),
    node({ name: 'w2' }),
    done(node({ name: 'w3' })),
    { ...node({ name: 'w1' }), annotations: { [keys.verifiedRevision]: 'r1' }, hasAnnotationsMap: true },
  ];
  const rows = [
    {
      name: 'workers by name, then control planes by name; stale revision is selected',
      opts: {},
      selected: ['w1', 'w10', 'w2', 'cp1', 'cp2'],
      upToDate: ['w3'],
      unknown: [] as string[],
    },
    { name: 'names restrict', opts: { names: ['cp1', 'w3', 'w2'] }, selected: ['w2', 'cp1'], upToDate: ['w3'], unknown: [] },
    {
      name: 'unknown names are reported',
      opts: { names: ['w2', 'ghost', 'alpha'] },
      selected: ['w2'],
      upToDate: [],
      unknown: ['alpha', 'ghost'],
    },
    {
      name: 'the selector restricts, matched against the listing of every node',
      opts: { selector: parseLabelSelector('kubernetes.io/hostname in (cp2,w10,w3)') },
      selected: ['w10', 'cp2'],
      upToDate: ['w3'],
      unknown: [],
    },
    {
      name: 'names and selector intersect',
      opts: { names: ['w10', 'w2'], selector: parseLabelSelector('kubernetes.io/hostname notin (w10,cp2)') },
      selected: ['w2'],
      upToDate: [],
      unknown: [],
    },
    { name: 'an empty names list restricts to nothing', opts: { names: [] as string[] }, selected: [], upToDate: [], unknown: [] },
  ];
  it.each(rows)('$name', ({ opts, selected, upToDate, unknown }) => {
    const got = selectNodes(all, { want: { hosts: ['ghcr.io'], revision: 'r2' }, keys, ...opts });
    expect(got.selected.map((n) => n.name)).toEqual(selected);
    expect(got.upToDate).toEqual(upToDate);
    expect(got.unknownNames).toEqual(unknown);
  });
});

describe('identityChanges', () => {
  const rows = [
    {
      name: 'same node (status, labels, RV moved)',
      fresh: { ...w1, resourceVersion: '2000', ready: 'False' as const, labels: { a: 'b' } },
      want: [] as string[],
    },
    { name: 'uid replaced', fresh: { ...w1, uid: 'uid-new' }, want: [`uid changed from ${w1.uid} to uid-new (the node was re-created)`] },
    { name: 'InternalIP changed', fresh: { ...w1, internalIPs: ['10.0.0.99'] }, want: ['InternalIP changed from 10.0.0.11 to 10.0.0.99'] },
    { name: 'InternalIP lost', fresh: { ...w1, internalIPs: [] }, want: ['InternalIP changed from 10.0.0.11 to none'] },
    { name: 'role changed', fresh: { ...w1, role: 'control-plane' as const }, want: ['role changed from worker to control-plane'] },
    {
      name: 'deletion started',
      fresh: { ...w1, deletionTimestamp: '2026-08-20T10:00:00Z' },
      want: ['deletion started at 2026-08-20T10:00:00Z'],
    },
  ];
  it.each(rows)('$name', ({ fresh, want }) => {
    expect(identityChanges(w1, fresh)).toEqual(want);
  });
});

describe('selectNodes: inScope', () => {
  it('lists every node the names and the selector select, verified ones included (the old-credential verdict judges them)', () => {
    const nodes = [
      node({ name: 'w1', annotations: { [keys.verifiedRevision]: 'r2' }, hasAnnotationsMap: true }),
      node({ name: 'w2' }),
      node({ name: 'w3' }),
    ];
    const got = selectNodes(nodes, {
      names: ['w1', 'w2'],
      selector: parseLabelSelector('kubernetes.io/hostname'),
      want: { hosts: ['ghcr.io'], revision: 'r2' },
      keys,
    });
    expect(got.inScope.map((n) => n.name)).toEqual(['w1', 'w2']);
    expect(got.selected.map((n) => n.name)).toEqual(['w2']);
  });
});

describe('selectNodes: to roll or to prove (src/rules/marker.ts)', () => {
  const entry = (revision: string, proof?: string) => JSON.stringify({ 'ghcr.io': { revision, ...(proof ? { proof } : {}) } });
  const with_ = (name: string, annotations: Record<string, string>, role: 'worker' | 'control-plane' = 'worker') =>
    node({ name, annotations, role, hasAnnotationsMap: true });

  it('a node at the revision whose proof is undecided or not recorded is to prove, not to roll; a stale or quarantined one is to roll', () => {
    const nodes = [
      with_('cp1', { [keys.verified]: entry('r2', 'undecided') }, 'control-plane'),
      with_('w1', { [keys.verified]: entry('r2', 'evidence') }),
      with_('w2', { [keys.verified]: entry('r2') }),
      with_('w3', { [keys.verified]: entry('r1', 'undecided') }),
      with_('w4', { [keys.verified]: entry('r2', 'undecided'), [keys.quarantined]: '{}' }),
      with_('w5', { [keys.verified]: entry('r2', 'undecided') }),
    ];
    const got = selectNodes(nodes, { want: { hosts: ['ghcr.io'], revision: 'r2' }, keys, names: ['cp1', 'w1', 'w2', 'w3', 'w4'] });
    expect(got.selected.map((n) => n.name)).toEqual(['w3', 'w4']);
    expect(got.upToDate).toEqual(['cp1', 'w1', 'w2']);
    // workers first, as the roll; w5 is outside the names
    expect(got.toProve.map((p) => [p.node.name, p.hosts.map((h) => h.host)])).toEqual([
      ['w2', ['ghcr.io']],
      ['cp1', ['ghcr.io']],
    ]);
  });
});

describe('emptySelection: a selection input that selects nothing is a typo, not a clean run', () => {
  it.each([
    ['no selection input, an empty cluster: no input to blame', { names: [], inScope: 0 }, undefined],
    ['a selector matching a node (verified or not)', { names: [], selector: 'pool=general', inScope: 1 }, undefined],
    ['names selecting a node', { names: ['w1'], inScope: 1 }, undefined],
    [
      'a selector matching no node',
      { names: [], selector: 'pool=genral', inScope: 0 },
      { input: 'node-selector', message: 'pool=genral matches no node of the cluster' },
    ],
    [
      'names and a selector that exclude each other',
      { names: ['w1', 'w2'], selector: 'pool=gpu', inScope: 0 },
      { input: 'node-selector', message: 'pool=gpu matches none of the nodes named by nodes (w1, w2): together they select no node' },
    ],
    ['names alone selecting nothing', { names: ['w9'], inScope: 0 }, { input: 'nodes', message: 'w9 select no node of the cluster' }],
  ])('%s', (_what, opts, want) => {
    expect(emptySelection(opts)).toEqual(want);
  });
});
