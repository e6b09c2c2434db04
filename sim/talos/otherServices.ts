// The services of a simulated machine other than cri, as ServiceList and `talosctl services` show them
// after a boot: each Running since a fixed moment into the boot, a goroutine service's health unknown.
import { HEALTHY } from './criService.js';
import type { ServiceEvent, ServiceHealth, SimTalosNode } from './types.js';

export interface OtherService {
  id: string;
  state: string;
  health: ServiceHealth;
  events: ServiceEvent[];
}

/** The services a boot at `bootAt` started (etcd and trustd on a control plane only), sorted by id. */
export function bootServices(role: SimTalosNode['role'], bootAt: number): OtherService[] {
  const ok = (id: string, afterMs: number): OtherService => ({
    id,
    state: 'Running',
    health: { ...HEALTHY },
    events: [{ state: 'Running', msg: 'Health check successful', ts: bootAt + afterMs }],
  });
  const goroutine = (id: string, afterMs: number): OtherService => ({
    id,
    state: 'Running',
    health: { unknown: true, healthy: false, lastMessage: '' },
    events: [{ state: 'Running', msg: 'Service started as goroutine', ts: bootAt + afterMs }],
  });
  const list = [
    ok('apid', 4200),
    goroutine('auditd', 1100),
    ok('containerd', 2600),
    goroutine('dashboard', 1300),
    ok('kubelet', 24500),
    goroutine('machined', 900),
    goroutine('syslogd', 1000),
    ok('udevd', 1900),
  ];
  if (role === 'control-plane') list.push(ok('etcd', 19800), ok('trustd', 4400));
  return list.sort((a, b) => (a.id < b.id ? -1 : 1));
}
