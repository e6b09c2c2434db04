// A recording core-like port for the publisher's tests: every call in order, the outputs as a map.
import type { CorePort } from '../../src/action/masked.js';

type Call = [string, ...unknown[]];

export function recorder(opts: { summaryThrows?: boolean } = {}) {
  const calls: Call[] = [];
  const port: CorePort = {
    getInput: () => '',
    getState: () => '',
    setSecret: (s) => calls.push(['setSecret', s]),
    startGroup: (t) => calls.push(['startGroup', t]),
    endGroup: () => calls.push(['endGroup']),
    saveState: (name, value) => calls.push(['saveState', name, value]),
    setOutput: (name, value) => calls.push(['setOutput', name, value]),
    info: (m) => calls.push(['info', m]),
    notice: (m, p) => calls.push(['notice', p?.title, m]),
    warning: (m, p) => calls.push(['warning', p?.title, m]),
    error: (m, p) => calls.push(['error', p?.title, m]),
    setFailed: (m) => calls.push(['setFailed', m]),
    summary: {
      addRaw: (html) => ({
        write: async () => {
          if (opts.summaryThrows) throw new Error('EACCES: step summary file');
          calls.push(['summary', html]);
        },
      }),
    },
  };
  const of = (kind: string) => calls.filter((c) => c[0] === kind).map((c) => c.slice(1));
  const outputs = () => Object.fromEntries(of('setOutput') as Array<[string, string]>);
  return { port, calls, of, outputs };
}
