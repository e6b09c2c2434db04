import { describe, expect, it } from 'vitest';
import { formatCommandLine, formatGroupTitle, outcomeLabel } from '../../src/report/log.js';

describe('formatCommandLine', () => {
  it('shows the duration, the exit code and the command', () => {
    expect(formatCommandLine({ command: 'kubectl patch node w1 --type=json', durationMs: 1234, exitCode: 0 })).toBe(
      '   1.23s  exit 0   kubectl patch node w1 --type=json',
    );
  });

  it('says killed when there is no exit code', () => {
    expect(formatCommandLine({ command: 'talosctl reboot', durationMs: 600_000, exitCode: null })).toBe(
      ' 600.00s  killed   talosctl reboot',
    );
  });

  it('keeps a command with newlines on one line', () => {
    const line = formatCommandLine({ command: 'kubectl patch -p \'[\n{"op":"test"}]\'', durationMs: 5, exitCode: 1 });
    expect(line).not.toContain('\n');
    expect(line).toContain('[\\n{');
    expect(line).toContain('exit 1');
  });

  it('lines up several commands', () => {
    const lines = [
      { command: 'a', durationMs: 10, exitCode: 0 },
      { command: 'b', durationMs: 12_345, exitCode: 137 },
    ].map((c) => formatCommandLine(c));
    expect(lines.map((l) => l.indexOf('exit'))).toEqual([10, 10]);
    expect(lines.map((l) => l.length - 1)).toEqual([lines[0].indexOf('a'), lines[1].indexOf('b')]);
  });
});

describe('formatGroupTitle', () => {
  it('names the node, role, outcome and duration on one line', () => {
    expect(formatGroupTitle({ node: 'w1\nx', role: 'worker', outcome: 'reboot-skipped', durationMs: 4200 })).toBe(
      'w1 x (worker): reboot skipped in 4.2 s',
    );
    expect(outcomeLabel('planned-reboot')).toBe('planned reboot');
  });
});
