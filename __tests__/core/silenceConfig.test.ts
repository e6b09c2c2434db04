// The Alertmanager silence's inputs (src/core/silence.ts through readConfig): opt-in, the default
// matchers, each refusal naming its input, and $NODES expanded for the rolled nodes.
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/core/config.js';
import { parseMatcherLine, silenceMatchers } from '../../src/core/silence.js';

const read = (inputs: Record<string, string>) => readConfig((n) => ({ 'auth-patch': '/tmp/p.yaml', revision: 'r1', ...inputs })[n] ?? '');
const refused = (inputs: Record<string, string>) => {
  try {
    read(inputs);
  } catch (e) {
    return e as Error & { input?: string };
  }
  throw new Error('accepted');
};
const AM = 'https://alertmanager.monitoring.svc:9093';

describe('alertmanager-url, -token, -ca-file, -matchers, -silence-tail', () => {
  it('opt-in: without alertmanager-url no silence, and the other inputs are not read', () => {
    const c = read({ 'alertmanager-matchers': 'not a matcher', 'alertmanager-silence-tail': 'soon' });
    expect(c.alertmanagerUrl).toBeUndefined();
    expect(c.alertmanagerMatchers).toBeUndefined();
  });

  it('defaults: two silences (node and instance, $NODES), a 15 minute tail; the URL without its trailing slash, a route prefix kept', () => {
    const c = read({ 'alertmanager-url': `${AM}/alertmanager/` });
    expect(c.alertmanagerUrl).toBe(`${AM}/alertmanager`);
    expect(c.silenceTailMs).toBe(900_000);
    expect(c.alertmanagerMatchers).toEqual([
      [{ name: 'node', value: '$NODES', isRegex: true, isEqual: true }],
      [{ name: 'instance', value: '($NODES)(:[0-9]+)?', isRegex: true, isEqual: true }],
    ]);
    expect(read({ 'alertmanager-url': AM, 'alertmanager-token': 't0k', 'alertmanager-ca-file': '/ca.pem' })).toMatchObject({
      alertmanagerToken: 't0k',
      alertmanagerCaFile: '/ca.pem',
    });
  });

  it('matchers of your own: one silence per line, every operator, quoted or bare values, braces, comments', () => {
    const c = read({
      'alertmanager-url': AM,
      'alertmanager-matchers': '# mine\n{alertname="KubeNodeNotReady", node=~"$NODES"}\ncluster=prod,severity!=info,job!~"kube-.*"\n',
    });
    expect(c.alertmanagerMatchers).toEqual([
      [
        { name: 'alertname', value: 'KubeNodeNotReady', isRegex: false, isEqual: true },
        { name: 'node', value: '$NODES', isRegex: true, isEqual: true },
      ],
      [
        { name: 'cluster', value: 'prod', isRegex: false, isEqual: true },
        { name: 'severity', value: 'info', isRegex: false, isEqual: false },
        { name: 'job', value: 'kube-.*', isRegex: true, isEqual: false },
      ],
    ]);
    expect(parseMatcherLine('msg="a \\"quoted\\", value"')).toEqual([
      { name: 'msg', value: 'a "quoted", value', isRegex: false, isEqual: true },
    ]);
  });

  it.each([
    [{ 'alertmanager-url': 'alertmanager:9093' }, 'alertmanager-url', /scheme|not a URL/],
    [{ 'alertmanager-url': 'ftp://am' }, 'alertmanager-url', /not http or https/],
    [{ 'alertmanager-url': 'https://u:p@am' }, 'alertmanager-url', /must not carry a user or password/],
    [{ 'alertmanager-url': 'https://am/?x=1' }, 'alertmanager-url', /query or a fragment/],
    [{ 'alertmanager-url': 'http://am:9093', 'alertmanager-token': 'secret-t' }, 'alertmanager-url', /plain http.*clear text/],
    [{ 'alertmanager-url': AM, 'alertmanager-matchers': 'node' }, 'alertmanager-matchers', /not a list of matchers/],
    [{ 'alertmanager-url': AM, 'alertmanager-matchers': '0node="a"' }, 'alertmanager-matchers', /not a label name/],
    [{ 'alertmanager-url': AM, 'alertmanager-matchers': 'node=~"(a"' }, 'alertmanager-matchers', /not a regular expression/],
    [{ 'alertmanager-url': AM, 'alertmanager-matchers': 'node="$NODES"' }, 'alertmanager-matchers', /only in a =~ or !~/],
    [{ 'alertmanager-url': AM, 'alertmanager-matchers': 'node=~".*",job=""' }, 'alertmanager-matchers', /must not match the empty string/],
    [{ 'alertmanager-url': AM, 'alertmanager-silence-tail': '10 minutes' }, 'alertmanager-silence-tail', /not a duration/],
    [{ 'alertmanager-url': AM, 'alertmanager-silence-tail': '500ms' }, 'alertmanager-silence-tail', /at least 1s/],
  ])('refuses %j naming %s', (inputs, input, message) => {
    const e = refused(inputs);
    expect(e.message).toContain(`"${input}"`);
    expect(e.message).toMatch(message);
    // never the token
    expect(e.message).not.toContain('secret-t');
  });

  it('$NODES: the nodes names and InternalIPs, quoted for a regex, sorted, once each', () => {
    const sets = read({ 'alertmanager-url': AM }).alertmanagerMatchers!;
    const nodes = [
      { name: 'worker-1.example', internalIPs: ['10.0.0.1'] },
      { name: 'worker-2', internalIPs: ['10.0.0.2', '10.0.0.1'] },
    ];
    expect(silenceMatchers(sets, nodes).map((s) => s[0].value)).toEqual([
      '10\\.0\\.0\\.1|10\\.0\\.0\\.2|worker-1\\.example|worker-2',
      '(10\\.0\\.0\\.1|10\\.0\\.0\\.2|worker-1\\.example|worker-2)(:[0-9]+)?',
    ]);
    const re = new RegExp(`^(?:${silenceMatchers(sets, nodes)[1][0].value})$`);
    expect(['worker-2', 'worker-2:9100', '10.0.0.1:10250'].every((v) => re.test(v))).toBe(true);
    expect(['worker-20', 'worker-1Xexample', '10.0.0.10'].some((v) => re.test(v))).toBe(false);
  });
});
