// The run lock: a coordination.k8s.io/v1 Lease that makes `apply` runs mutually exclusive.
// The rules (patch shapes, who holds it) are in rules/lease.ts, its release (shared with the post
// step) in src/pipeline/lease.ts; this class does the I/O and keeps the state the rollout consults
// before every mutation (assertHeld). Its errors, which say who
// holds the Lease or why it was lost, are in src/pipeline/errors.ts.
import type { KubeClient, LeaseReading, LeaseState } from '../adapters/types.js';
import { errorMessage, ToolError, type FailureCause } from '../core/errors.js';
import { LeaseHeldError, LeaseLostError } from './errors.js';
import { acquireLease } from './leaseAcquire.js';
import { releaseLease, whoHolds, type LeaseReleaseOutcome } from './lease.js';
import { formatDuration } from '../core/format.js';
import { GITHUB_SERVER_URL } from '../core/owner.js';
import type { Clock } from '../core/clock.js';
import { judgeLease, LEASE_DURATION_SECONDS, parseMicroTime, renewPatch } from '../rules/lease.js';

export interface RunLockOptions {
  kube: KubeClient;
  namespace: string;
  name: string;
  /** this run's owner token (holderIdentity) */
  owner: string;
  clock: Clock;
  renewEveryMs?: number;
  /** the duration this run writes into the Lease (default LEASE_DURATION_SECONDS) */
  durationSeconds?: number;
  /** for the holder's run URL (the shell passes the runner's GITHUB_SERVER_URL); default https://github.com */
  serverUrl?: string;
  log?: (message: string) => void;
  /** true once the run was cancelled: the wait for another run's Lease ends at its next turn */
  cancelled?: () => boolean;
}

// A renewal rejected for one of these will not succeed on a later tick: the Lease is someone else's
// (422 from our holder `test`), gone (404), or we may no longer write it (403). Anything else
// (transport, 5xx, 429, timeouts, an unreadable answer) may be passing and is retried next tick.
const DEFINITIVE: ReadonlySet<FailureCause> = new Set<FailureCause>(['invalid', 'not-found', 'forbidden', 'usage']);

const isCause = (e: unknown, cause: FailureCause): boolean => e instanceof ToolError && e.kind === cause;

type LockState = 'idle' | 'held' | 'lost' | 'released';

export class RunLock {
  private readonly kube: KubeClient;
  private readonly namespace: string;
  private readonly name: string;
  readonly owner: string;
  private readonly clock: Clock;
  readonly renewEveryMs: number;
  private readonly serverUrl: string;
  private readonly log: (message: string) => void;
  private readonly cancelled?: () => boolean;

  private state: LockState = 'idle';
  private lostReason?: string;
  private lastRenewOkMs = 0;
  private durationMs = LEASE_DURATION_SECONDS * 1000;
  private lastError?: string;
  private renewing = false;
  private timer?: ReturnType<typeof setInterval>;
  /** the uid of the Lease this run took (the run's Event is about it) */
  private heldUid?: string;
  readonly durationSeconds: number;
  private tookOver?: { from: string; unchangedForMs: number };

  constructor(opts: RunLockOptions) {
    this.kube = opts.kube;
    this.namespace = opts.namespace;
    this.name = opts.name;
    this.owner = opts.owner;
    this.clock = opts.clock;
    this.renewEveryMs = opts.renewEveryMs ?? 30_000;
    this.durationSeconds = opts.durationSeconds ?? LEASE_DURATION_SECONDS;
    this.serverUrl = opts.serverUrl ?? GITHUB_SERVER_URL;
    this.log = opts.log ?? (() => {});
    this.cancelled = opts.cancelled;
  }

  get lease(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** where the Lease is, for a read of it beside a node (KubeClient.getNodeAndLease) */
  get ref(): { namespace: string; name: string; uid?: string } {
    return { namespace: this.namespace, name: this.name, ...(this.heldUid ? { uid: this.heldUid } : {}) };
  }

  get held(): boolean {
    return this.state === 'held';
  }

  /** the run whose expired Lease this run took over (its claims are abandoned: docs/recovery.md); undefined: it was free or absent */
  get tookOverFrom(): string | undefined {
    return this.tookOver?.from;
  }

  /**
   * Read-only: throw LeaseHeldError when another run holds the Lease. Called when the first listing
   * refuses the run (src/pipeline/listing.ts), so a second run sees "run X holds the Lease" (with its URL)
   * rather than X's claim on a node, which the inventory would report as a residual claim. A listing
   * that finds nothing to roll never reads the Lease.
   */
  async checkNotHeldByAnother(): Promise<void> {
    const lease = await this.kube.getLease(this.namespace, this.name);
    const j = judgeLease(lease, this.owner, this.clock.now(), this.serverUrl);
    if (j.kind === 'held') throw new LeaseHeldError(this.lease, j.holder, j.expired, j.runUrl, j.renewTime);
  }

  /**
   * Acquire the Lease (src/pipeline/leaseAcquire.ts): created if absent, taken if free, ours after a
   * lost answer, taken over once its holder let it expire unrenewed; refused while another run holds it.
   */
  async acquire(): Promise<void> {
    const got = await acquireLease({
      kube: this.kube,
      namespace: this.namespace,
      name: this.name,
      lease: this.lease,
      owner: this.owner,
      clock: this.clock,
      serverUrl: this.serverUrl,
      durationSeconds: this.durationSeconds,
      log: this.log,
      cancelled: this.cancelled,
    });
    if (got.tookOver) this.tookOver = got.tookOver;
    this.hold(got.lease, got.at, got.how);
  }

  private hold(lease: LeaseState, now: number, how: string): void {
    this.state = 'held';
    this.heldUid = lease.uid;
    this.lostReason = undefined;
    this.lastRenewOkMs = now;
    this.durationMs = (lease.leaseDurationSeconds ?? LEASE_DURATION_SECONDS) * 1000;
    this.log(`Lease ${this.lease}: acquired (${how}) as ${this.owner}`);
  }

  /** Renew every renewEveryMs until release()/stop(). The interval only calls tick(), which tests call directly. */
  startRenewing(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      void this.tick().catch(() => {});
    }, this.renewEveryMs);
    // The lock must not keep the process alive after the action is done (or killed).
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One renewal: CAS on the holder. Never throws; the outcome shows in assertHeld(). */
  async tick(): Promise<void> {
    if (this.state !== 'held') return;
    const now = this.clock.now();
    if (this.renewing) {
      this.checkBudget(now, 'the previous renewal has not answered yet');
      return;
    }
    this.renewing = true;
    try {
      await this.kube.patchLease(this.namespace, this.name, renewPatch(this.owner, now));
      if (this.state !== 'held') return;
      // Counted from when the request was sent: the server may have stamped an earlier renewTime.
      this.lastRenewOkMs = Math.max(this.lastRenewOkMs, now);
      this.lastError = undefined;
    } catch (e) {
      if (this.state !== 'held') return;
      if (e instanceof ToolError && DEFINITIVE.has(e.kind)) {
        this.markLost(`renewal rejected: ${await this.describeLoss(e)}`);
      } else {
        this.lastError = errorMessage(e);
        this.log(`Lease ${this.lease}: renewal failed (${this.lastError}); retrying on the next tick`);
        this.checkBudget(this.clock.now(), this.lastError);
      }
    } finally {
      this.renewing = false;
    }
  }

  /**
   * The proof that the Lease is still ours, immediately before a mutation. Either of two proofs:
   *
   * - `read`, the Lease as read together with the node in the fence read just before the mutation
   *   (one `kubectl get node/N lease/L`): it proves the Lease when it names us and our own last
   *   renewal written into it has not expired. That is the renewal's own test (`holderIdentity` is
   *   our token) evaluated at the read instead of at a write, and nothing but our own release gives
   *   the Lease to anyone else (judgeLease never takes it over by time), so a read naming us is as
   *   strong as a renewal that succeeded at the same instant. It saves one process per mutation.
   * - Otherwise a renewal right now: a CAS on our holder identity, so a holder written by anyone
   *   since (a person, another run) is seen here and not only at the next tick. A rejected renewal
   *   marks the lock lost and throws; when the renewal cannot be sent (transport, 5xx), a fresh read
   *   naming us proves holdership instead, and without either the mutation is not started (the lock
   *   is not marked lost: it may be passing).
   *
   * A read that does not prove the Lease (another holder, absent, expired, unreadable) is never
   * judged on its own: the renewal decides, so a loss is classified and reported in one place.
   * The rule and its tests: docs/architecture.md#lease-proof, __tests__/pipeline/runLock.test.ts.
   */
  async confirm(read?: LeaseReading): Promise<void> {
    this.assertHeld();
    if (read && this.readProvesOurs(read)) return;
    return this.confirmByRenewal();
  }

  private readProvesOurs(read: LeaseReading): boolean {
    if (!read.ok || !read.lease || read.lease.holderIdentity !== this.owner) return false;
    const renewed = parseMicroTime(read.lease.renewTime);
    const durationMs = (read.lease.leaseDurationSeconds ?? LEASE_DURATION_SECONDS) * 1000;
    return renewed !== undefined && this.clock.now() < renewed + durationMs;
  }

  private async confirmByRenewal(): Promise<void> {
    const now = this.clock.now();
    try {
      await this.kube.patchLease(this.namespace, this.name, renewPatch(this.owner, now));
      // Several nodes confirm at once: an answer may arrive after a later renewal (never move the
      // last success back) or after another node's renewal proved the Lease lost (then the loss wins:
      // it was learned later than this renewal was applied).
      this.lastRenewOkMs = Math.max(this.lastRenewOkMs, now);
      this.lastError = undefined;
      this.assertHeld();
    } catch (e) {
      if (e instanceof LeaseLostError) throw e;
      if (e instanceof ToolError && DEFINITIVE.has(e.kind)) {
        if (this.state === 'held') this.markLost(`renewal rejected: ${await this.describeLoss(e)}`);
        this.assertHeld();
      }
      // The renewal may not have reached the server: a fresh read that names us proves it as well.
      // Only while our own last renewal in it is younger than its duration: after that another run may
      // take it over (docs/recovery.md), so a read naming us proves nothing any more.
      const lease = await this.kube.getLease(this.namespace, this.name).catch(() => undefined);
      if (lease && this.readProvesOurs({ ok: true, lease })) return this.assertHeld();
      throw new LeaseLostError(this.lease, `could not prove the Lease is still ours (${errorMessage(e)})`);
    }
  }

  // Without a successful renewal for a whole lease duration, nobody (the Lease included) can show the
  // lock is still ours; stopping is the safe side. Judged at each tick only, so a virtual test clock
  // that jumps forward (sleep) cannot expire a lock whose renewals never failed.
  private checkBudget(now: number, lastError: string): void {
    const since = now - this.lastRenewOkMs;
    if (since >= this.durationMs) {
      this.markLost(
        `no successful renewal for ${formatDuration(since)} (lease duration ${formatDuration(this.durationMs)}); last error: ${lastError}`,
      );
    }
  }

  private markLost(reason: string): void {
    this.state = 'lost';
    this.lostReason = reason;
    this.stop();
    this.log(`Lease ${this.lease}: lost: ${reason}`);
  }

  /** Names who has the Lease now, for a rejected renewal or release. */
  private async describeLoss(e: unknown): Promise<string> {
    if (isCause(e, 'forbidden')) return `not allowed to write the Lease any more (${errorMessage(e)})`;
    try {
      const now = await this.kube.getLease(this.namespace, this.name);
      const j = judgeLease(now, this.owner, this.clock.now(), this.serverUrl);
      return j.kind === 'ours' ? `the write was rejected although the Lease still names us (${errorMessage(e)})` : whoHolds(j);
    } catch (readError) {
      return `${errorMessage(e)}; reading the Lease again also failed: ${errorMessage(readError)}`;
    }
  }

  /** Called by the rollout before every mutation. */
  assertHeld(): void {
    if (this.state === 'held') return;
    const reason =
      this.state === 'lost' ? this.lostReason! : this.state === 'released' ? 'it was already released' : 'it was never acquired';
    throw new LeaseLostError(this.lease, reason);
  }

  /**
   * CAS release: clears the holder only while it is still us. A Lease that is gone or held by
   * another run is reported in the outcome and left alone (never clobbered). A transient failure (5xx,
   * transport, timeout, 409, 429) is tried again with backoff, a re-read deciding between tries
   * (releaseLease); one that outlasts RELEASE_RETRY_MS, or any other failure, is thrown: the Lease may
   * still name us, and the caller must say so (the post step tries again).
   */
  async release(): Promise<LeaseReleaseOutcome> {
    this.stop();
    if (this.state === 'idle' || this.state === 'released') {
      return { released: false, message: `Lease ${this.lease}: not held by this run, nothing to release` };
    }
    const outcome = await releaseLease(
      { kube: this.kube, clock: this.clock, log: this.log, serverUrl: this.serverUrl },
      this.namespace,
      this.name,
      this.owner,
    );
    this.state = 'released';
    this.log(outcome.message);
    return outcome;
  }
}
