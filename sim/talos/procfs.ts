// The virtual procfs files the twin serves (`talosctl read /proc/…`, MachineService.Read): the boot id,
// the uptime, and containerd's /proc/<pid>/stat, whose field 22 (starttime, in clock ticks since boot)
// dates the running containerd.
import type { SimTalosNode } from './types.js';

/** Virtual procfs reads of `n`; `now` is the node's wall clock. */
export function procFile(n: SimTalosNode, now: () => number, path: string): string | undefined {
  if (path === '/proc/sys/kernel/random/boot_id') return `${n.bootID}\n`;
  if (path === '/proc/uptime') {
    const up = (now() - n.bootedAtMs) / 1000;
    return `${up.toFixed(2)} ${(up * 1.7).toFixed(2)}\n`;
  }
  const m = /^\/proc\/(\d+)\/stat$/.exec(path);
  if (m && Number(m[1]) === n.containerd.pid && n.containerd.pid > 0) {
    const ticks = Math.round((n.containerd.startedAtMs - n.bootedAtMs) / 10);
    const f = [
      m[1],
      '(containerd)',
      'S',
      '1',
      m[1],
      m[1],
      '0',
      '-1',
      '4194560',
      '41234',
      '0',
      '12',
      '0',
      '1204',
      '388',
      '0',
      '0',
      '20',
      '0',
      '31',
      '0',
      String(ticks),
      '2354233344',
      '15360',
      '18446744073709551615',
      '1',
      '1',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '2143420159',
      '0',
      '0',
      '0',
      '17',
      '1',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
    ];
    return `${f.join(' ')}\n`;
  }
  return undefined;
}
