// The run Lease as the apply mode gets it: src/pipeline/runLock.ts's RunLock, with its holding recorded in the
// step state so the post step can release it whatever ends the main step.
import { LeaseUnknownError } from '../pipeline/errors.js';
import { RunLock, type RunLockOptions } from '../pipeline/runLock.js';
import type { RunLockLike } from '../pipeline/context.js';
import { saveLease, type StateStore } from './state.js';

export function trackedLock(opts: RunLockOptions, store: StateStore): RunLockLike {
  const lock = new RunLock(opts);
  const saved = { namespace: opts.namespace, name: opts.name, owner: opts.owner };
  return {
    checkNotHeldByAnother: () => lock.checkNotHeldByAnother(),
    acquire: async () => {
      // Saved before the create or take is sent: a run killed mid-request may hold the Lease, and the
      // post step's release is a CAS on our token, harmless when the Lease is not ours. Forgotten only
      // when the acquisition is known to have failed.
      saveLease(store, saved);
      try {
        await lock.acquire();
      } catch (e) {
        if (!(e instanceof LeaseUnknownError)) saveLease(store, undefined);
        throw e;
      }
    },
    get tookOverFrom() {
      return lock.tookOverFrom;
    },
    startRenewing: () => lock.startRenewing(),
    assertHeld: () => lock.assertHeld(),
    ref: lock.ref,
    confirm: (read) => lock.confirm(read),
    release: async () => {
      const r = await lock.release();
      saveLease(store, undefined);
      return r;
    },
    stop: () => lock.stop(),
  };
}
