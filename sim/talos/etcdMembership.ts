// etcd's member list as the twin's control planes answer it: filled as control planes are added (each
// joins under its hostname, advertising its address, as the Talos etcd service registers it), then
// changed only on purpose: members no machine runs, a learner flag, a removal, and a member that has not
// applied a membership change yet (etcd applies a conf change when its raft log reaches it).
import { randomBytes } from 'node:crypto';
import type { SimEtcdMember } from './types.js';

export class EtcdMembership {
  private readonly members: SimEtcdMember[] = [];
  /** control planes whose etcd answers an older copy of the member list (lag) */
  private readonly lagging = new Map<object, SimEtcdMember[]>();

  /** A control plane joins under its hostname, advertising its address. */
  join(id: string, name: string, address: string, learner: boolean): void {
    this.members.push(memberOf(id, name, address, learner));
  }

  setLearner(id: string, learner: boolean): void {
    const m = this.members.find((x) => x.id === id);
    if (m) m.learner = learner;
  }

  /** The list as every healthy member answers it (a copy). */
  list(): SimEtcdMember[] {
    return this.members.map((m) => ({ ...m, peerUrls: [...m.peerUrls], clientUrls: [...m.clientUrls] }));
  }

  /**
   * Adds a member that no simulated machine runs: a voter left behind by a control plane that was
   * deleted from Kubernetes but never removed from etcd, a member added by hand, a learner that never
   * caught up. Returns its id (random unless given).
   */
  add(m: { id?: string; name: string; address: string; learner?: boolean; started?: boolean }): string {
    const id = m.id ?? randomBytes(8).toString('hex');
    if (!/^[0-9a-f]{16}$/.test(id)) throw new Error(`etcd member id ${id} is not 16 lower-case hex digits`);
    if (this.members.some((x) => x.id === id)) throw new Error(`etcd member ${id} already exists`);
    const member = memberOf(id, m.name, m.address, m.learner ?? false);
    // a member added but never started has no name and no client URLs yet (etcd publishes them at start)
    if (m.started === false) Object.assign(member, { name: '', clientUrls: [] });
    this.members.push(member);
    return id;
  }

  /** From now on `machine`'s etcd answers the list as it is at this moment, whatever changes later; `catchUp` ends the lag. */
  lag(machine: object, catchUp: boolean): void {
    if (catchUp) this.lagging.delete(machine);
    else this.lagging.set(machine, this.list());
  }

  /** The list as `machine`'s etcd answers it (the live list itself when it does not lag). */
  seenBy(machine: object | undefined): SimEtcdMember[] {
    return (machine && this.lagging.get(machine)) ?? this.members;
  }

  /** false when no such member exists. */
  remove(id: string): boolean {
    const i = this.members.findIndex((x) => x.id === id);
    if (i < 0) return false;
    this.members.splice(i, 1);
    return true;
  }
}

/** A member as the Talos etcd service registers it: named after the host, URLs on the advertised address. */
function memberOf(id: string, name: string, address: string, learner: boolean): SimEtcdMember {
  const host = address.includes(':') ? `[${address}]` : address;
  return { id, name, peerUrls: [`https://${host}:2380`], clientUrls: [`https://${host}:2379`], learner };
}
