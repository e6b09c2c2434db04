import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../../src/adapters/parseError.js';
import { parseVersion } from '../../../../src/adapters/talos/cli/parse/version.js';

// docs/talos-facts.md#t13-version-output, byte for byte (TAB-indented, `Built:` followed by 7 spaces)
const SAMPLE =
  'Client:\n' +
  '\tTag:         v1.13.8\n' +
  '\tSHA:         3de49322\n' +
  '\tBuilt:       \n' +
  '\tGo version:  go1.26.5\n' +
  '\tOS/Arch:     linux/amd64\n' +
  'Server:\n' +
  '\tNODE:        10.0.0.11\n' +
  '\tTag:         v1.13.8\n' +
  '\tSHA:         3de49322\n' +
  '\tBuilt:       \n' +
  '\tGo version:  go1.26.5\n' +
  '\tOS/Arch:     linux/amd64\n' +
  '\tEnabled:     RBAC\n';

const serverBlock = (node: string, tag: string): string =>
  `\tNODE:        ${node}\n\tTag:         ${tag}\n\tSHA:         0123abcd\n\tBuilt:       \n\tGo version:  go1.26.5\n\tOS/Arch:     linux/amd64\n\tEnabled:     RBAC\n`;

describe('parseVersion', () => {
  it('reads the server Tag of the reference sample, not the client one', () => {
    expect(parseVersion(SAMPLE)).toEqual([{ node: '10.0.0.11', tag: 'v1.13.8', sha: '3de49322' }]);
  });

  it('reads several Server blocks', () => {
    const client = SAMPLE.slice(0, SAMPLE.indexOf('Server:\n') + 'Server:\n'.length).replace('v1.13.8', 'v1.13.9');
    const text = client + serverBlock('10.0.0.11', 'v1.13.8') + serverBlock('10.0.0.12', 'v1.14.0-rc.1') + serverBlock('w-1', 'v1.12.11');
    expect(parseVersion(text).map((v) => [v.node, v.tag])).toEqual([
      ['10.0.0.11', 'v1.13.8'],
      ['10.0.0.12', 'v1.14.0-rc.1'],
      ['w-1', 'v1.12.11'],
    ]);
  });

  it('an empty Server section (every node failed) gives no nodes', () => {
    expect(parseVersion(SAMPLE.slice(0, SAMPLE.indexOf('Server:\n') + 8))).toEqual([]);
  });

  it.each([
    ['no Server line (--client)', SAMPLE.slice(0, SAMPLE.indexOf('Server:'))],
    ['a node without Tag', 'Client:\nServer:\n\tNODE:        10.0.0.11\n\tSHA:         1\n'],
    ['a field before any NODE', 'Client:\nServer:\n\tTag:         v1.13.8\n'],
    ['protojson (--json)', 'Client:\nServer:\n{"metadata":{"hostname":"10.0.0.11"}}\n'],
  ])('rejects %s', (_what, text) => {
    expect(() => parseVersion(text)).toThrow(ParseError);
  });
});
