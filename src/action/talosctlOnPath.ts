// Before anything is mutated: when this run needs talosctl (the CLI path, or a credential patch the
// API path does not apply), it must be on PATH. Without this check the run would claim and cordon a
// node, mark it mutating and only then fail to start talosctl: bad input gets a clear error first.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { TalosctlNeed } from '../adapters/talos/open.js';
import type { Mode } from '../core/config.js';
import { InputError } from '../core/errors.js';

/** Whether an executable file `name` is in one of PATH's directories (as a shell resolves it). */
export function onPath(name: string, path: string | undefined): boolean {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      // not there, or not executable: the next directory
    }
  }
  return false;
}

/**
 * Throws InputError when `need` asks for talosctl in `mode` and PATH has none. Plan mode does not run
 * the patch (the API path says talosctl would apply it), so a patch-only need is checked in apply mode.
 */
export function requireTalosctl(need: TalosctlNeed | undefined, mode: Mode, path: string | undefined): void {
  if (!need || (need.for === 'patch' && mode !== 'apply')) return;
  if (onPath('talosctl', path)) return;
  if (need.for === 'patch') {
    throw new InputError(
      'auth-patch',
      `needs talosctl, which is not on PATH: ${need.why}, so only \`talosctl patch machineconfig\` can apply it. ` +
        'Put talosctl on PATH, or give a patch of one of the two credential forms the Talos API applies ' +
        '(a RegistryAuthConfig document, or machine.registries.config.<host>.auth alone). Nothing was changed.',
    );
  }
  throw new InputError(
    'talosconfig',
    `Talos is read through talosctl (${need.why}), which is not on PATH. ` +
      'Put talosctl on PATH, or give a talosconfig context with a client certificate (then the Talos API is used). Nothing was changed.',
  );
}
