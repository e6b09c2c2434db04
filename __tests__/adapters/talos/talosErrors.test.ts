import { describe, expect, it } from 'vitest';
import { classifyTalosError, classifyTalosFailure, splitTalosErrors } from '../../../src/adapters/talos/talosErrors.js';
import { isMissingFile } from '../../../src/adapters/talos/resources.js';

const REFUSED =
  'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 10.0.0.12:50000: connect: connection refused"';
const USAGE = '\nUsage:\n  talosctl read <path> [flags]\n\nAliases:\n  read, cat\n\nFlags:\n  -h, --help   help for read\n';

describe('splitTalosErrors', () => {
  it('≤1.13 unary multi-error for one node (docs/talos-facts.md#t12-cri-restart-refused, byte for byte)', () => {
    const stderr =
      'error starting service: 1 error occurred:\n\t* 10.0.0.11: rpc error: code = Unknown desc = service "cri" doesn\'t support restart operation via API\n\n\n';
    const r = splitTalosErrors(stderr, ['10.0.0.11']);
    expect(r.form).toBe('multi');
    expect(r.prefix).toBe('error starting service: ');
    expect(r.items).toEqual([
      {
        node: '10.0.0.11',
        message: 'rpc error: code = Unknown desc = service "cri" doesn\'t support restart operation via API',
        cause: 'server',
      },
    ]);
  });

  it('several nodes, each error attributed', () => {
    const stderr =
      'error listing services: 2 errors occurred:\n' +
      `\t* 10.0.0.12: ${REFUSED}\n` +
      '\t* 10.0.0.1: rpc error: code = PermissionDenied desc = not authorized\n\n\n';
    const r = splitTalosErrors(stderr, ['10.0.0.1', '10.0.0.12', '10.0.0.13']);
    expect(r.items.map((i) => [i.node, i.cause])).toEqual([
      ['10.0.0.12', 'transport'],
      ['10.0.0.1', 'forbidden'],
    ]);
    expect(r.items[0].message).toBe(REFUSED);
  });

  it('partial success: the list behind WARNING (exit 0), next to a version-skew warning', () => {
    const stderr =
      'WARNING: 10.0.0.11: server version 1.13.8 is older than client version 1.13.9\n' +
      `WARNING: 1 error occurred:\n\t* 10.0.0.12: ${REFUSED}\n\n\n`;
    const r = splitTalosErrors(stderr, ['10.0.0.11', '10.0.0.12']);
    expect(r.warnings).toEqual(['10.0.0.11: server version 1.13.8 is older than client version 1.13.9']);
    expect(r.prefix).toBe('WARNING: ');
    expect(r.items).toEqual([{ node: '10.0.0.12', message: REFUSED, cause: 'transport' }]);
  });

  it('`get` lists bare COSI errors without node names', () => {
    const stderr =
      '2 errors occurred:\n' +
      "\t* rpc error: code = NotFound desc = resource ServicePIDs.runtime.talos.dev(runtime/cri@undefined) doesn't exist\n" +
      `\t* ${REFUSED}\n\n\n`;
    const r = splitTalosErrors(stderr, ['a', 'b', 'c']);
    expect(r.items.map((i) => [i.node, i.cause])).toEqual([
      [undefined, 'not-found'],
      [undefined, 'transport'],
    ]);
  });

  it('a message that spans lines stays one item', () => {
    const stderr =
      "error applying new configuration: 1 error occurred:\n\t* 10.0.0.11: rpc error: code = InvalidArgument desc = this config change can't be applied in immediate mode\ndiff:\n  machine.install.disk: /dev/sda -> /dev/sdb\n\n\n";
    const r = splitTalosErrors(stderr, ['10.0.0.11']);
    expect(r.items).toHaveLength(1);
    expect(r.items[0].message).toContain('immediate mode\ndiff:\n  machine.install.disk');
    expect(r.items[0].cause).toBe('invalid');
  });

  it('≤1.13 streaming form (ls, docs/talos-facts.md#t6-ls-output): one leading space, no node', () => {
    const stderr = '1 error occurred:\n rpc error: code = Unknown desc = lstat /etc/cri/conf.d/x: no such file or directory\n';
    const r = splitTalosErrors(stderr, ['10.0.0.11']);
    expect(r.form).toBe('stream');
    expect(r.items).toEqual([
      {
        node: undefined,
        message: 'rpc error: code = Unknown desc = lstat /etc/cri/conf.d/x: no such file or directory',
        cause: 'not-found',
      },
    ]);
    expect(isMissingFile(r.items[0].message)).toBe(true);
  });

  it('streaming form with several errors, one a per-entry error naming its node', () => {
    const stderr =
      '2 errors occurred:\n rpc error: code = Unknown desc = lstat /etc/cri/conf.d: no such file or directory\n 10.0.0.12: error reading file x: permission denied\n';
    const r = splitTalosErrors(stderr, ['10.0.0.11', '10.0.0.12']);
    expect(r.items.map((i) => i.node)).toEqual([undefined, '10.0.0.12']);
    expect(r.items[1].message).toBe('error reading file x: permission denied');
  });

  it('1.14 per-node errors (docs/talos-facts.md#t3-error-output)', () => {
    const stderr =
      'error from node 10.0.0.11: rpc error: code = Unknown desc = lstat /etc/cri/conf.d/x: no such file or directory\n' +
      `error getting version from node 10.0.0.12: ${REFUSED}\n`;
    const r = splitTalosErrors(stderr);
    expect(r.form).toBe('per-node');
    expect(r.items.map((i) => [i.node, i.cause])).toEqual([
      ['10.0.0.11', 'not-found'],
      ['10.0.0.12', 'transport'],
    ]);
  });

  it('a plain error (read of a missing file, docs/talos-facts.md#t7-read)', () => {
    const stderr = 'error reading: rpc error: code = NotFound desc = stat /etc/cri/conf.d/01-registries.part: no such file or directory\n';
    const r = splitTalosErrors(stderr, ['10.0.0.11']);
    expect(r.form).toBe('plain');
    expect(r.items).toEqual([{ node: undefined, message: stderr.trim(), cause: 'not-found' }]);
  });

  it('usage text after an error containing "command" is cut off and marks usage', () => {
    const r = splitTalosErrors(`command "read" is not supported with multiple nodes\n${USAGE}`);
    expect(r.usage).toBe(true);
    expect(r.items).toEqual([{ node: undefined, message: 'command "read" is not supported with multiple nodes', cause: 'usage' }]);
  });

  it('ignores the signal notice', () => {
    const r = splitTalosErrors('Signal received, aborting, press Ctrl+C once again to abort immediately...\n');
    expect(r.items).toEqual([]);
  });

  it('an unknown word before ": " is not taken for a node', () => {
    const r = splitTalosErrors('1 error occurred:\n\t* transport: something broke\n\n', ['10.0.0.11']);
    expect(r.items[0].node).toBeUndefined();
  });
});

describe('classifyTalosError', () => {
  it.each([
    [REFUSED, 'transport'],
    [
      'rpc error: code = Unavailable desc = connection error: desc = "transport: authentication handshake failed: x509: certificate signed by unknown authority"',
      'transport',
    ],
    [
      'rpc error: code = Unavailable desc = last connection error: connection error: desc = "transport: Error while dialing: dial tcp 10.0.0.9:50000: i/o timeout"',
      'transport',
    ],
    ['rpc error: code = Unavailable desc = error reading from server: EOF', 'transport'],
    ['error streaming results: unexpected EOF', 'transport'],
    ['dial tcp 10.0.0.9:50000: connect: no route to host', 'transport'],
    ['rpc error: code = PermissionDenied desc = not authorized', 'forbidden'],
    ['rpc error: code = NotFound desc = stat /x: no such file or directory', 'not-found'],
    ['rpc error: code = NotFound desc = resource "servicepids" is not registered', 'not-found'],
    ['service "cri" is not registered on any nodes', 'not-found'],
    ['rpc error: code = DeadlineExceeded desc = context deadline exceeded', 'timeout'],
    ['context deadline exceeded', 'timeout'],
    ['rpc error: code = FailedPrecondition desc = another apply configuration is already in progress', 'conflict'],
    ['rpc error: code = Unimplemented desc = etcd status is only available on control plane nodes', 'invalid'],
    ['rpc error: code = Unknown desc = service "cri" doesn\'t support restart operation via API', 'server'],
    ['rpc error: code = Internal desc = boom', 'server'],
    ['error constructing client: failed to determine endpoints', 'usage'],
    ['command "read" requires exactly one node (got 2)', 'usage'],
    ['unknown flag: --frobnicate', 'usage'],
    ['accepts at most 1 arg(s), received 2', 'usage'],
    ['invalid argument "x" for "-m, --mode" flag: must be one of [default force powercycle]', 'usage'],
    ['something else entirely', 'unknown'],
  ])('%s → %s', (text, cause) => {
    expect(classifyTalosError(text)).toBe(cause);
  });
});

describe('classifyTalosFailure', () => {
  it('our deadline wins', () => {
    expect(
      classifyTalosFailure({
        exitCode: null,
        stderr: 'Signal received, aborting, press Ctrl+C once again to abort immediately...\n',
        timedOut: true,
      }),
    ).toBe('timeout');
  });
  it('a missing binary', () => {
    expect(classifyTalosFailure({ exitCode: 127, stderr: 'spawn talosctl ENOENT' })).toBe('usage');
  });
  it('the first reported error otherwise', () => {
    expect(classifyTalosFailure({ exitCode: 1, stderr: `error getting version: 1 error occurred:\n\t* 10.0.0.12: ${REFUSED}\n\n\n` })).toBe(
      'transport',
    );
    expect(classifyTalosFailure({ exitCode: 1, stderr: `unknown flag: --frobnicate\n${USAGE}` })).toBe('usage');
    expect(classifyTalosFailure({ exitCode: 1, stderr: '' })).toBe('unknown');
  });
});
