// The server certificate's verdicts over one connection's life (connection.ts): a refused certificate
// is never trusted nor worked around. On the first connection a refusal is the run's: a
// ServerIdentityError every later call gets too. On a reconnection it refuses that connection only:
// apid's certificate is re-issued when the machine's addresses change (a VIP moving to another
// control plane while the one holding it reboots, a node back from its reboot before its certificate
// names the dialed address; docs/talos-api.md, "Server identity"), so a call that met it waits for
// the next dial, and only MAX_REFUSALS refusals in a row make it the run's.
import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { ServerIdentityError } from '../../../core/errors.js';
import { serverCertificateProblems } from './serverIdentity.js';

/**
 * Refused certificates in a row, on reconnections, that make the refusal the run's: about this many
 * seconds of dials (one per RECONNECT_MS) with no certificate naming the endpoint, well past the
 * moment apid's certificate is re-issued for an address that moved (its controllers act within a
 * second of the address change).
 */
export const MAX_REFUSALS = 10;

export class ServerRefusals {
  /** the refusal that is the run's (on the first connection, or MAX_REFUSALS in a row); every later call fails with it */
  private identityFailure?: ServerIdentityError;
  /** a certificate was accepted once: from then on a refused one is a reconnection's */
  private accepted = false;
  /** refused certificates since the last accepted one, and the latest */
  private refusals = 0;
  private lastRefusal?: ServerIdentityError;
  /** calls waiting for the next dial after a refused reconnection; cancelled when the refusal becomes the run's */
  private readonly redialing = new Set<{ cancel(): void }>();

  constructor(
    /** `host:port` as dialed */
    private readonly endpoint: string,
    /** the name the certificate must be valid for */
    private readonly serverName: string,
  ) {}

  /** The refusal that is the run's, as it stands now (a method: read again after every await). */
  runRefusal(): ServerIdentityError | undefined {
    return this.identityFailure;
  }

  /** The latest refused certificate since the last accepted one. */
  get last(): ServerIdentityError | undefined {
    return this.lastRefusal;
  }

  /** The first connection's verdict (the connection's own handshake): any problem makes the refusal the run's, thrown. */
  firstVerdict(problems: string[]): void {
    if (problems.length > 0) throw (this.identityFailure ??= new ServerIdentityError(this.endpoint, this.serverName, problems));
    this.accepted = true;
  }

  /**
   * checkServerIdentity: an Error refuses the connection. A refusal before any certificate was
   * accepted, or the MAX_REFUSALS-th in a row, is the run's, kept for every later call (and the calls
   * waiting for the next dial are ended with it); any other refuses this connection only.
   */
  check(cert: PeerCertificate): Error | undefined {
    const problems = serverCertificateProblems(cert, this.serverName);
    if (problems.length === 0) {
      this.accepted = true;
      this.refusals = 0;
      this.lastRefusal = undefined;
      return undefined;
    }
    if (this.identityFailure) return this.identityFailure;
    this.refusals++;
    const refusal = new ServerIdentityError(
      this.endpoint,
      this.serverName,
      this.accepted ? [...problems, `refused on ${this.refusals} reconnection${this.refusals === 1 ? '' : 's'} in a row`] : problems,
    );
    this.lastRefusal = refusal;
    if (!this.accepted || this.refusals >= MAX_REFUSALS) {
      this.identityFailure = refusal;
      for (const call of this.redialing) call.cancel();
      this.redialing.clear();
    }
    return refusal;
  }

  /** grpc failed the call before any connection was made, the last dial's certificate refused (and not yet the run's refusal). */
  refusedReconnection(err: grpc.ServiceError): boolean {
    return (
      !this.identityFailure &&
      this.lastRefusal !== undefined &&
      err.code === grpc.status.UNAVAILABLE &&
      /^No connection established\b/.test(String(err.details ?? '')) &&
      String(err.details ?? '').includes(this.lastRefusal.name)
    );
  }

  /** Tracks a call waiting for the next dial (cancelled if the refusal becomes the run's); returns its untracking. */
  waitingForDial(call: { cancel(): void }): () => void {
    this.redialing.add(call);
    return () => this.redialing.delete(call);
  }
}
