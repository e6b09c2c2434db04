// The CRI files of one simulated machine's /etc (a tmpfs, rebuilt at every boot) and their COSI
// EtcFileStatus resources: what a boot writes and when, the rewrite after a config change (only the
// files whose bytes change), and the tree `talosctl ls` walks.
import { effectiveAuth } from './machineconfig.js';
import type { NodeTimers } from './nodeTimers.js';
import {
  BASE_PART,
  BASE_SPEC,
  BASE_SPEC_CONTENT,
  CONF_D,
  CRI_TOML,
  CUSTOMIZATION_PART,
  basePart,
  renderCriFiles,
  renderCriTomlBeforeConfig113,
} from './render.js';
import type { Timing } from './timing.js';
import type { SimFile, SimTalosNode } from './types.js';

const ETC_LABEL = 'system_u:object_r:etc_t:s0';
/** v1.13.8's commit time stands in for the rootfs build time of files shipped in the image. */
const IMAGE_BUILD_MS = 1785848325000;

/** One entry of the tree `ls` walks. */
export interface ListedEntry {
  dir: boolean;
  file?: SimFile;
  mtimeMs: number;
  mode: string;
  label: string;
}

export class EtcFiles {
  constructor(
    private readonly node: SimTalosNode,
    private readonly timers: NodeTimers,
    private readonly timing: Timing,
  ) {}

  private status(id: string, created: number, updated: number, version: number): void {
    this.node.etcFileStatus.set(id, { version, created, updated, specVersion: String(version) });
  }

  /**
   * A boot's /etc: the image's parts and base-spec.json at once, cri.toml (and the registries part)
   * at `writeAt`. Returns when cri.toml's status is recorded, and whether this is a 1.14 boot that
   * starts cri only after it (`ordered114`).
   */
  writeAtBoot(b: { bootAt: number; writeAt: number; startAt: number; startAllAt?: number; laterOnly?: boolean }): {
    statusAt: number;
    ordered114: boolean;
  } {
    const { bootAt, writeAt, startAt, startAllAt } = b;
    const n = this.node;
    const firstWrite = Math.min(bootAt + 100, writeAt);
    // laterOnly (a held boot window's release): what the boot wrote at once is there since the answer
    const held = b.laterOnly ? n.etcFileStatus.get('cri/conf.d/base-spec.json') : undefined;
    let firstStatus: number;
    if (held) {
      firstStatus = held.created;
    } else {
      n.files.clear();
      n.etcFileStatus.clear();
      n.files.set(BASE_PART, { content: basePart(n.version), mtimeMs: IMAGE_BUILD_MS, mode: '-rw-r--r--', label: ETC_LABEL });
      if (n.version === '1.13') {
        n.files.set(CUSTOMIZATION_PART, { content: '', mtimeMs: IMAGE_BUILD_MS, mode: '-rw-r--r--', label: ETC_LABEL });
      }
      n.files.set(BASE_SPEC, { content: BASE_SPEC_CONTENT, mtimeMs: firstWrite, mode: '-rw-r--r--', label: ETC_LABEL });
      firstStatus = firstWrite + this.timing.statusAfterWrite();
      this.status('cri/conf.d/base-spec.json', firstStatus, firstStatus, 1);
    }
    // Talos 1.14 renders cri.toml only from the registries config (CRIConfigController, once the
    // machine config is loaded) and starts cri only once its status exists (below): a 1.14 boot writes
    // it once. ≤ 1.13 merges cri.toml from the *.part files whenever an EtcFileStatus changes
    // (CRIConfigPartsController), so as soon as machined starts it writes one from the image's parts
    // alone, without the registries, and writes it again once 01-registries.part, rendered from the
    // machine config, is there (files/cri_config_parts.go, cri_registry_config.go, v1.13).
    const ordered114 = n.version === '1.14' && startAt > writeAt;
    const rewritten = !ordered114 && writeAt - firstWrite > 500 && (startAllAt === undefined || n.version === '1.13');
    if (rewritten && n.version === '1.13' && !held) {
      n.files.set(CRI_TOML, { content: renderCriTomlBeforeConfig113(), mtimeMs: firstWrite, mode: '-rw-------', label: ETC_LABEL });
      this.status('cri/conf.d/cri.toml', firstStatus, firstStatus, 1);
    }
    // EtcFileController writes the file, then records its status
    const statusAt = writeAt + Math.min(this.timing.statusAfterWrite(), ordered114 ? (startAt - writeAt) / 4 : Infinity);
    const rendered = renderCriFiles(n.version, effectiveAuth(n.machineConfig));
    this.timers.atTime(writeAt, () => {
      for (const [path, content] of rendered) {
        n.files.set(path, { content, mtimeMs: writeAt, mode: '-rw-------', label: ETC_LABEL });
        const again = rewritten && path === CRI_TOML;
        this.status(path.slice('/etc/'.length), again ? firstStatus : statusAt, statusAt, again ? 2 : 1);
      }
    });
    return { statusAt, ordered114 };
  }

  /** Re-renders the CRI files; only files whose bytes change are written (UpdateFile/AtomicUpdate). */
  rerender(): boolean {
    const n = this.node;
    const at = this.timers.now();
    let criTomlChanged = false;
    for (const [path, content] of renderCriFiles(n.version, effectiveAuth(n.machineConfig))) {
      const cur = n.files.get(path);
      if (cur && cur.content === content) continue;
      n.files.set(path, { content, mtimeMs: at, mode: '-rw-------', label: ETC_LABEL });
      const id = path.slice('/etc/'.length);
      const st = n.etcFileStatus.get(id);
      const statusAt = at + this.timing.statusAfterWrite();
      if (st) this.status(id, st.created, statusAt, st.version + 1);
      else this.status(id, statusAt, statusAt, 1);
      if (path === CRI_TOML) criTomlChanged = true;
    }
    return criTomlChanged;
  }

  /** The criRestartAfterBoot fault: base-spec.json written again now, its status's specVersion bumped. Returns the write's instant. */
  rewriteBaseSpec(): number {
    const n = this.node;
    const writeAt = this.timers.now();
    const file = n.files.get(BASE_SPEC);
    if (file) n.files.set(BASE_SPEC, { ...file, mtimeMs: writeAt });
    const st = n.etcFileStatus.get('cri/conf.d/base-spec.json');
    const statusAt = writeAt + this.timing.statusAfterWrite();
    this.status('cri/conf.d/base-spec.json', st?.created ?? statusAt, statusAt, (st?.version ?? 0) + 1);
    return writeAt;
  }

  /** Directory tree view for ls: the conf.d files plus their directories. */
  listing(): Map<string, ListedEntry> {
    const n = this.node;
    const out = new Map<string, ListedEntry>();
    const bootWrite = n.bootedAtMs + 100;
    for (const d of ['/', '/etc', '/etc/cri', CONF_D, `${CONF_D}/hosts`]) {
      out.set(d, {
        dir: true,
        mtimeMs: d === '/' ? IMAGE_BUILD_MS : bootWrite,
        mode: d === `${CONF_D}/hosts` ? 'drwx------' : 'drwxr-xr-x',
        label: d === '/' ? 'system_u:object_r:root_t:s0' : ETC_LABEL,
      });
    }
    for (const [p, f] of n.files) out.set(p, { dir: false, file: f, mtimeMs: f.mtimeMs, mode: f.mode, label: f.label });
    return out;
  }
}
