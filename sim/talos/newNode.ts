// A simulated Talos machine's data as it is created, before its first boot is laid out: identity,
// version, clock, the machine config with the spec's credential, an empty /etc, containerd not yet
// launched, and an etcd member on a control plane.
import { randomBytes, randomUUID } from 'node:crypto';
import { UNKNOWN } from './criService.js';
import { effectiveAuth, initialMachineConfig } from './machineconfig.js';
import type { AddNodeSpec, SimTalosNode } from './types.js';

export function newTalosNode(spec: AddNodeSpec): SimTalosNode {
  const version = spec.version ?? '1.13';
  const node = {
    name: spec.name,
    ip: spec.ip,
    role: spec.role,
    version,
    bootID: randomUUID(),
    bootedAtMs: 0,
    up: true,
    answeredAtMs: 0,
    clock: { offsetMs: spec.clock?.offsetMs ?? 0, synced: spec.clock?.synced ?? true, epoch: spec.clock?.epoch ?? 0 },
    machineConfig: initialMachineConfig(spec.role, spec.credential, {
      form: spec.credentialForm,
      staleLegacy: spec.staleLegacyCredential,
      self: { name: spec.name, ip: spec.ip },
    }),
    files: new Map(),
    etcFileStatus: new Map(),
    containerd: {
      pid: 0,
      startedAtMs: 0,
      loadedCredential: {},
      listed: true,
      state: 'Initialized',
      health: { ...UNKNOWN },
      events: [],
      mountNamespace: '',
    },
    images: new Set(),
  } as Omit<SimTalosNode, 'auth'> as SimTalosNode;
  // the credential as the config holds it, read afresh each time (the config is replaced by patches)
  Object.defineProperty(node, 'auth', { enumerable: true, get: () => effectiveAuth(node.machineConfig) });
  if (spec.role === 'control-plane') {
    node.etcd = { memberId: randomBytes(8).toString('hex'), healthy: true, learner: false, alarms: [], errors: '' };
  }
  return node;
}
