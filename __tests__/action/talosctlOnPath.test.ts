// talosctl is required on PATH exactly when the run would start it, before anything is mutated.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onPath, requireTalosctl } from '../../src/action/talosctlOnPath.js';
import { scratchDir } from '../scratch.js';

function dirWith(files: Record<string, number>): string {
  const dir = scratchDir('rar-path-');
  for (const [name, mode] of Object.entries(files)) {
    writeFileSync(join(dir, name), '#!/bin/sh\n');
    chmodSync(join(dir, name), mode);
  }
  return dir;
}

const PATCH = { for: 'patch', why: 'patch document 1 sets more than machine.registries.config.<host>.auth' } as const;
const READS = { for: 'reads', why: 'the context has no client certificate' } as const;

describe('talosctl on PATH', () => {
  it('finds an executable file in any PATH directory, not a non-executable one or a directory', () => {
    const empty = dirWith({});
    mkdirSync(join(empty, 'talosctl'));
    expect(onPath('talosctl', [empty, dirWith({ talosctl: 0o644 })].join(delimiter))).toBe(false);
    expect(onPath('talosctl', [empty, dirWith({ talosctl: 0o755 })].join(delimiter))).toBe(true);
    expect(onPath('talosctl', undefined)).toBe(false);
  });

  it('a patch only talosctl applies: refused in apply mode without talosctl, naming it and why; plan mode does not run it', () => {
    const none = dirWith({});
    expect(() => requireTalosctl(PATCH, 'apply', none)).toThrow(
      /input "auth-patch": needs talosctl, which is not on PATH: patch document 1 sets more than .*Nothing was changed/,
    );
    expect(() => requireTalosctl(PATCH, 'plan', none)).not.toThrow();
    expect(() => requireTalosctl(PATCH, 'apply', dirWith({ talosctl: 0o755 }))).not.toThrow();
  });

  it('the CLI path needs talosctl in every mode; the API path with a patch of ours needs none', () => {
    const none = dirWith({});
    expect(() => requireTalosctl(READS, 'plan', none)).toThrow(/input "talosconfig": Talos is read through talosctl .*not on PATH/);
    expect(() => requireTalosctl(READS, 'apply', none)).toThrow(/input "talosconfig"/);
    expect(() => requireTalosctl(undefined, 'apply', none)).not.toThrow();
  });
});
