// A machine config applied to a running simulated machine: the immediate modes (no-reboot,
// auto → no-reboot, try) set the config at once and the controllers write the CRI files after the
// call returned (timing.ts), a v1.14 cri restart following that write; the held-write fault, which
// lands that write between two chosen reads; and the try-mode rollback.
import type { CriService } from './criService.js';
import type { EtcFiles } from './etcFiles.js';
import { configFingerprint, effectiveAuth } from './machineconfig.js';
import type { NodeTimers } from './nodeTimers.js';
import { CRI_TOML } from './render.js';
import type { Timing } from './timing.js';
import type { MachineConfigState, SimTalosNode } from './types.js';

/**
 * Fault: the write of the next immediate apply waits for the `nth` matching read of this node (after
 * the apply) and lands right before that read is answered. `command` is the talosctl name (`read`,
 * `ls`, `get`, `service`; the API's Read, List, COSI Get and ServiceList count as the same), `target`
 * the path or resource id read (any when absent). Stages a write between two evidence reads.
 */
export interface HeldWriteMatch {
  command: string;
  target?: string;
  nth?: number;
}

export class ConfigApply {
  private held?: { match: HeldWriteMatch; seen: number; write?: () => void; generation: number };
  /** the pending `--mode=try` rollback (revertAfter), until it fires or is cancelled */
  private rollback?: { prev: MachineConfigState };

  constructor(
    private readonly node: SimTalosNode,
    private readonly timers: NodeTimers,
    /** the node's generator for the write after a patch only (so adding that draw shifts no other) */
    private readonly applyTiming: Timing,
    private readonly etc: EtcFiles,
    private readonly cri: CriService,
  ) {}

  /**
   * ApplyConfiguration in an immediate mode (no-reboot, auto→no-reboot, try). It returns once the
   * MachineConfig resource is set (SetConfig); the controllers render and write the CRI files after
   * it returned (timing.ts), and a v1.14 cri restart follows that write.
   */
  applyNow(next: MachineConfigState): void {
    const n = this.node;
    if (configFingerprint(next) !== configFingerprint(n.machineConfig)) {
      n.machineConfig = { ...next, version: n.machineConfig.version + 1 };
    }
    const write = () => {
      const criChanged = this.etc.rerender();
      // v1.14 cri.ServiceController restarts cri when cri.toml's spec version changes; ≤1.13 never does.
      if (criChanged && n.version === '1.14') {
        this.cri.scheduleRestart(n.files.get(CRI_TOML)!.mtimeMs, () => effectiveAuth(this.node.machineConfig));
      }
    };
    if (this.held && !this.held.write) this.held = { ...this.held, write, generation: this.timers.generation };
    else this.timers.later(this.applyTiming.writeAfterApply(), write);
  }

  /** Arms the held-write fault (HeldWriteMatch) for the next immediate apply. */
  holdNextWrite(match: HeldWriteMatch): void {
    this.held = { match, seen: 0, generation: this.timers.generation };
  }

  /** Both front doors (talosctl, the API) call this before answering a read of this node. */
  answering(command: string, target: string | undefined): void {
    const h = this.held;
    if (!h?.write || h.match.command !== command) return;
    if (h.match.target !== undefined && h.match.target !== target) return;
    if (++h.seen < (h.match.nth ?? 1)) return;
    this.held = undefined;
    // a reboot since the apply dropped the pending write (the new boot renders the config itself)
    if (h.generation === this.timers.generation) h.write();
  }

  /** `--mode=try`: the previous config comes back when the try timeout passes (RollbackToConfigAfter). */
  revertAfter(prev: MachineConfigState, ms: number): void {
    this.cancelRollback();
    const armed = { prev };
    this.rollback = armed;
    this.timers.later(ms, () => {
      if (this.rollback !== armed) return;
      this.rollback = undefined;
      this.applyNow(prev);
    });
  }

  /**
   * CancelConfigRollbackTimeout: a pending try-mode rollback will not happen. machined calls it at the
   * top of every ApplyConfiguration whose mode is not TRY, a dry run included (v1alpha1_server.go).
   */
  cancelRollback(): void {
    this.rollback = undefined;
  }

  /** Whether a try-mode rollback is pending. */
  rollbackPending(): boolean {
    return this.rollback !== undefined;
  }
}
