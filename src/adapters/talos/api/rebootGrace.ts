// The API path's reboot margin, in a file of its own so the opener (src/adapters/talos/open.ts) reads
// it without loading the gRPC stack, which only the API path loads.

/**
 * How long the reboot over the API (reboot.ts) runs past its `timeoutMs`: nothing. The wait counts from
 * the Reboot's answer (the Reboot itself is one short call with the connection's own deadline, as every
 * short call between the long waits, which the time budget does not sum: docs/parallel.md), each boot
 * id read is given at most what is left of it, and none is sent with less than MIN_POLL_CALL_MS left.
 * Unlike talosctl, there is no process to give time to report its own timeout before it is killed.
 */
export const API_REBOOT_GRACE_MS = 0;
