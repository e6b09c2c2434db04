// How long Talos takes between the steps that order "cri.toml written" against "containerd launched",
// drawn per node from a seeded generator so a run is varied yet reproducible. The ranges follow the
// code paths (docs/talos-evidence-timing.md), not measurements, except where said:
// - ≤1.13 boot: cri.toml is rendered by controllers and cri started when the network is ready, on
//   independent schedules (nothing makes cri wait for the file): launch 0.3–3 s after the write, the
//   order of public logs; the `criFirst` fault launches containerd 0.2–1.5 s BEFORE the write.
// - 1.14 boot: nothing starts cri until cri.ServiceController sees the EtcFileStatus of cri.toml and
//   base-spec.json; it then loads and starts the service, whose whole run (Starting, Waiting, Running
//   pre state, PreFunc, Creating service runner) follows the status, conditions already holding: the
//   launch comes a few ms (2–15) after the write.
// - 1.14 rewrite: cri.ServiceController sees the status's new specVersion and stops then starts cri:
//   the new containerd launches 50–800 ms after the write.
// - After ApplyConfiguration: the call returns once the MachineConfig resource is set; the controllers
//   render the CRI files after that, on their own schedule: the write lands 0–300 ms after the patch
//   returned (drawn from a generator of its own, so the other draws of a node stay as they were).
// - After a reboot, apid answers (the new boot id) before machined has written the CRI files of the
//   rebuilt /etc, and before anything loads cri. apid serves once its certificate, issued from the
//   machine config LoadConfig loads at the end of the Initialize sequence, is there; the CRI files are
//   rendered from the same config by machined's controllers, and nothing orders the two. The twin
//   takes the unkind order: the write lands 0.3–1.5 s after the node answers (drawn from a generator
//   of its own; a boot seen in acceptance testing wrote cri.toml 0.9 s after the API answered: an
//   estimate around it, not a measurement). cri is loaded by cri.ServiceController once cri.toml's EtcFileStatus exists
//   (1.14: the launch 2–15 ms after the write) or by StartAllServices (≤1.13: the launch the boot gap
//   after the write); a run's worst cases pinned by criUnlistedMs (the window before cri is listed)
//   or configAfterAnswerMs; once loaded, cri runs through its conditions, all holding by then, in
//   2–15 ms on either version (docs/talos-evidence-timing.md).
// Sub-millisecond steps (the status recorded after the write, the PID recorded after the launch) keep
// their fractions: the state is kept at the precision the Talos API serves.

/** mulberry32: a small, well-mixed 32-bit generator; enough for timings, never for secrets. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A per-node seed from the run's seed and the node's name, so adding a node does not shift the others. */
export function nodeSeed(seed: number, name: string): number {
  let h = seed ^ 0x9e3779b9;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class Timing {
  constructor(private readonly random: () => number) {}

  private between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.random();
  }

  /** ≤1.13 boot: launch − write (negative: containerd first). */
  bootGap113(criFirst: boolean): number {
    return criFirst ? -this.between(200, 1500) : this.between(300, 3000);
  }

  /** 1.14 boot: launch − write of cri.toml (status, controller, the run with its conditions holding). */
  bootGap114(): number {
    return this.between(2, 15);
  }

  /**
   * 1.14 boot: the cri run cri.ServiceController starts, as ms after cri.toml's status: "Starting
   * service" once the controller's event arrives and Start's goroutine runs, "Waiting for …" logged at
   * once by waitFor, "Running pre state" once the conditions (already holding) are seen; then
   * preLaunch() to the launch. The caller fits them into the gap it has (scaled down, or the extra
   * time spent waiting).
   */
  bootRun114(): { starting: number; waiting: number; preState: number } {
    const starting = this.between(0.2, 1.5);
    const waiting = starting + this.between(0.02, 0.1);
    return { starting, waiting, preState: waiting + this.between(0.1, 1) };
  }

  /** 1.14 rewrite: launch of the new containerd − the write. */
  restartGap114(): number {
    return this.between(50, 800);
  }

  /** The controller records the EtcFileStatus right after the write. */
  statusAfterWrite(): number {
    return this.between(0.05, 0.6);
  }

  /** "Running pre state" → PreFunc → "Creating service runner" → launch, in ms before the launch. */
  preLaunch(): { preState: number; runner: number } {
    const runner = this.between(0.3, 2);
    return { preState: runner + this.between(1, 8), runner };
  }

  /** After ApplyConfiguration returned: the controllers' write of the re-rendered CRI files. */
  writeAfterApply(): number {
    return this.between(0, 300);
  }

  /** After a reboot: the node answers → machined writes the CRI files of the rebuilt /etc. */
  configAfterAnswer(): number {
    return this.between(300, 1500);
  }

  /** After a reboot: cri loaded → launched, its conditions (volumes, network) already holding. */
  runAfterLoad(): number {
    return this.between(2, 15);
  }

  /** The ServicePID record and the "started with PID" event follow the launch by fractions of a ms. */
  afterLaunch(): { pidRecord: number; event: number } {
    const pidRecord = this.between(0.02, 0.2);
    return { pidRecord, event: pidRecord + this.between(0.02, 0.3) };
  }
}
