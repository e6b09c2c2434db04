import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../../src/adapters/parseError.js';
import { parseServiceView } from '../../../../src/adapters/talos/cli/parse/service.js';
import { serviceOutput } from './talosOutput.js';

// docs/talos-facts.md#t4-service-view, byte for byte (9-character label column, no LAST HEALTH MESSAGE)
const SAMPLE = `NODE     10.0.0.11
ID       cri
STATE    Running
HEALTH   OK
EVENTS   [Running]: Health check successful (258h12m30s ago)
         [Running]: Process Process(["/bin/containerd" "--address" "/run/containerd/containerd.sock" "--config" "/etc/cri/containerd.toml"]) started with PID 1893 (258h12m31s ago)
         [Preparing]: Creating service runner (258h12m31s ago)
         [Preparing]: Running pre state (258h12m31s ago)
         [Waiting]: Waiting for network (258h12m33s ago)
         [Waiting]: Waiting for volumes /var/lib, /var/lib/cni, /var/lib/containerd, /var/run, /var/run/lock, /etc/cni, /etc/kubernetes, /usr/libexec/kubernetes, /opt to be mounted, network (258h12m34s ago)
         [Starting]: Starting service (258h12m34s ago)
`;

const PID_MSG =
  'Process Process(["/bin/containerd" "--address" "/run/containerd/containerd.sock" "--config" "/etc/cri/containerd.toml"]) started with PID 1893';

describe('parseServiceView', () => {
  it('parses the reference sample', () => {
    const [v, ...rest] = parseServiceView(SAMPLE);
    expect(rest).toEqual([]);
    expect(v).toMatchObject({ node: '10.0.0.11', id: 'cri', state: 'Running', health: 'OK' });
    expect(v.lastHealthMessage).toBeUndefined();
    expect(v.events).toHaveLength(7);
    expect(v.events[0]).toEqual({
      state: 'Running',
      message: 'Health check successful',
      agoMs: (258 * 3600 + 12 * 60 + 30) * 1000,
      ageText: '258h12m30s',
    });
    // the message's own parentheses and quotes stay in it; the age is the last group
    expect(v.events[1]).toEqual({ state: 'Running', message: PID_MSG, agoMs: (258 * 3600 + 12 * 60 + 31) * 1000, ageText: '258h12m31s' });
    expect(v.events[5].message).toBe(
      'Waiting for volumes /var/lib, /var/lib/cni, /var/lib/containerd, /var/run, /var/run/lock, /etc/cni, /etc/kubernetes, /usr/libexec/kubernetes, /opt to be mounted, network',
    );
    expect(v.events.map((e) => e.state)).toEqual(['Running', 'Running', 'Preparing', 'Preparing', 'Waiting', 'Waiting', 'Starting']);
  });

  it('the builder reproduces the reference sample (so constructed cases follow the same rules)', () => {
    const out = serviceOutput([
      {
        node: '10.0.0.11',
        state: 'Running',
        health: 'OK',
        events: [
          ['Running', 'Health check successful', 929_550_000],
          ['Running', PID_MSG, 929_551_000],
          ['Preparing', 'Creating service runner', 929_551_000],
          ['Preparing', 'Running pre state', 929_551_000],
          ['Waiting', 'Waiting for network', 929_553_000],
          [
            'Waiting',
            'Waiting for volumes /var/lib, /var/lib/cni, /var/lib/containerd, /var/run, /var/run/lock, /etc/cni, /etc/kubernetes, /usr/libexec/kubernetes, /opt to be mounted, network',
            929_554_000,
          ],
          ['Starting', 'Starting service', 929_554_000],
        ],
      },
    ]);
    expect(out).toBe(SAMPLE);
  });

  it('parses two node blocks back to back with a 22-character label column', () => {
    // LAST HEALTH MESSAGE (19 chars) on one node widens the label column of the whole output
    const text =
      'NODE                  10.0.0.11\n' +
      'ID                    cri\n' +
      'STATE                 Running\n' +
      'HEALTH                Fail\n' +
      'LAST HEALTH MESSAGE   dial unix /run/containerd/containerd.sock: connect: connection refused\n' +
      'EVENTS                [Running]: Health check failed: dial unix /run/containerd/containerd.sock: connect: connection refused (12s ago)\n' +
      '                      [Running]: Health check successful (3m25s ago)\n' +
      '                      [Running]: ' +
      PID_MSG +
      ' (3m31s ago)\n' +
      'NODE                  10.0.0.12\n' +
      'ID                    cri\n' +
      'STATE                 Running\n' +
      'HEALTH                OK\n' +
      'EVENTS                [Running]: Health check successful (1h0m0s ago)\n' +
      '                      [Running]: ' +
      PID_MSG.replace('1893', '1901') +
      ' (1h0m1s ago)\n';
    expect(
      serviceOutput([
        {
          node: '10.0.0.11',
          state: 'Running',
          health: 'Fail',
          lastHealthMessage: 'dial unix /run/containerd/containerd.sock: connect: connection refused',
          events: [
            ['Running', 'Health check failed: dial unix /run/containerd/containerd.sock: connect: connection refused', 12_000],
            ['Running', 'Health check successful', 205_000],
            ['Running', PID_MSG, 211_000],
          ],
        },
        {
          node: '10.0.0.12',
          state: 'Running',
          health: 'OK',
          events: [
            ['Running', 'Health check successful', 3_600_000],
            ['Running', PID_MSG.replace('1893', '1901'), 3_601_000],
          ],
        },
      ]),
    ).toBe(text);
    const views = parseServiceView(text);
    expect(views.map((v) => v.node)).toEqual(['10.0.0.11', '10.0.0.12']);
    expect(views[0].health).toBe('Fail');
    expect(views[0].lastHealthMessage).toBe('dial unix /run/containerd/containerd.sock: connect: connection refused');
    expect(views[0].events.map((e) => e.agoMs)).toEqual([12_000, 205_000, 211_000]);
    expect(views[1].lastHealthMessage).toBeUndefined();
    expect(views[1].events[1].message).toContain('started with PID 1901');
  });

  it('parses a node without events (no EVENTS line) followed by another node', () => {
    const text = serviceOutput([
      { node: 'cp-1', state: 'Waiting', health: '?', lastHealthMessage: 'Unknown', events: [] },
      { node: 'cp-2', state: 'Running', health: 'OK', events: [['Running', 'Health check successful', 0]] },
    ]);
    expect(text.split('\n')[4]).toBe('LAST HEALTH MESSAGE   Unknown');
    const views = parseServiceView(text);
    expect(views[0]).toEqual({ node: 'cp-1', id: 'cri', state: 'Waiting', health: '?', lastHealthMessage: 'Unknown', events: [] });
    expect(views[1].events).toEqual([{ state: 'Running', message: 'Health check successful', agoMs: 0, ageText: '0s' }]);
  });

  it('keeps a negative age (node clock ahead of the client)', () => {
    const text = 'NODE     10.0.0.11\nID       cri\nSTATE    Running\nHEALTH   OK\nEVENTS   [Running]: ' + PID_MSG + ' (-4s ago)\n';
    expect(parseServiceView(text)[0].events[0].agoMs).toBe(-4000);
  });

  it('joins a message that spans lines (tabwriter restarts its columns after it)', () => {
    const text = serviceOutput([
      {
        node: '10.0.0.11',
        state: 'Waiting',
        health: '?',
        events: [
          ['Waiting', 'Error running Process(["/bin/containerd"]), going to restart forever: exit status 1\nstderr: boom', 2000],
          ['Running', PID_MSG, 65_000],
          ['Starting', 'Starting service', 66_000],
        ],
      },
    ]);
    // after the line without a tab the empty labels form a block of their own: 0 + 3 spaces
    expect(text).toContain('\nstderr: boom (2s ago)\n   [Running]: ');
    const [v] = parseServiceView(text);
    expect(v.events).toHaveLength(3);
    expect(v.events[0]).toEqual({
      state: 'Waiting',
      message: 'Error running Process(["/bin/containerd"]), going to restart forever: exit status 1\nstderr: boom',
      agoMs: 2000,
      ageText: '2s',
    });
    expect(v.events[2]).toEqual({ state: 'Starting', message: 'Starting service', agoMs: 66_000, ageText: '1m6s' });
  });

  it('reads service id and state verbatim', () => {
    const text = serviceOutput([
      { node: 'n', id: 'kubelet', state: 'Finished', health: '?', events: [['Finished', 'Service finished successfully', 59_000]] },
    ]);
    expect(parseServiceView(text)[0]).toMatchObject({ id: 'kubelet', state: 'Finished', events: [{ agoMs: 59_000 }] });
  });

  it.each([
    ['empty output', ''],
    ['an unknown label', 'NODE     n\nID       cri\nSTATE    Running\nHEALTH   OK\nPID      12\n'],
    ['a block cut short', 'NODE     n\nID       cri\n'],
    ['fields out of order', 'NODE     n\nSTATE    Running\nID       cri\nHEALTH   OK\n'],
    ['an event without an age', 'NODE     n\nID       cri\nSTATE    Running\nHEALTH   OK\nEVENTS   [Running]: Health check successful\n'],
    [
      'an age that is no Go duration',
      'NODE     n\nID       cri\nSTATE    Running\nHEALTH   OK\nEVENTS   [Running]: Health check successful (2 days ago)\n',
    ],
    ['an error text instead of a table', 'service "cri" is not registered on any nodes\n'],
  ])('rejects %s', (_what, text) => {
    expect(() => parseServiceView(text)).toThrow(ParseError);
  });
});
