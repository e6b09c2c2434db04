// Which Talos a node runs, for the choice of waiting for Talos to restart cri after the patch. Not an
// evidence condition: the evidence still proves the restart before a reboot is skipped.

/**
 * Whether a `talosctl version` tag is at least `major.minor` (undefined = unparseable, which the
 * caller treats as "no": reboot without waiting).
 *
 * A pre-release suffix is ignored (`v1.14.0-rc.1` counts as 1.14): the only use is deciding whether
 * to WAIT for Talos to restart cri by itself after the patch. The evidence must still prove the
 * restart before a reboot is skipped, so a wrong "yes" costs at most `cri-restart-wait`, while a
 * wrong "no" costs a drain and a reboot.
 */
export function isTalosAtLeast(version: string, major: number, minor: number): boolean | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.exec(version.trim());
  if (!m) return undefined;
  const vMajor = Number(m[1]);
  const vMinor = Number(m[2]);
  return vMajor > major || (vMajor === major && vMinor >= minor);
}
