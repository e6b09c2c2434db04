// A failed gRPC call to apid as the run reads it (a mechanical split of connection.ts): the status code by
// grpc-go's name, the text as apid prints it (`rpc error: code = … desc = …`), the cause classified as
// on the CLI path (talosErrors.ts), and a call whose every dial met a refused certificate.
import type * as grpc from '@grpc/grpc-js';
import { type ServerIdentityError, ToolError } from '../../../core/errors.js';
import { classifyTalosError } from '../talosErrors.js';

/** grpc-go's names for the status codes, as apid's errors print them. */
const CODE_NAMES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/** A call whose deadline came while every dial met a refused certificate (not yet the run's refusal). */
export function refusedUntilDeadline(endpoint: string, path: string, node: string, refusal: ServerIdentityError): ToolError {
  const text = `rpc error: code = Unavailable desc = no connection: the server certificate was refused on every dial until the call's deadline (${refusal.reasons.join('; ')})`;
  return new ToolError({
    tool: 'talos-api',
    command: `${path} (node ${node} via ${endpoint})`,
    kind: 'transport',
    exitCode: null,
    stderr: text,
    node,
    message: `${path} for ${node} via ${endpoint} failed (transport: ${text})`,
  });
}

/**
 * A failed call as a ToolError, its cause classified from the gRPC status as talosctl's printed error is;
 * `cancelledByCaller`: the caller's own signal ended it (the run cancelled), which is said as `cancelled`,
 * not read as the node's failure (a `Canceled` status is otherwise a stream the node cut).
 */
export function grpcToolError(endpoint: string, path: string, node: string, err: grpc.ServiceError, cancelledByCaller = false): ToolError {
  const code = CODE_NAMES[err.code] ?? String(err.code);
  // the node's words as it sent them: classified and matched here, masked where they are shown (src/action/masked.ts)
  const text = `rpc error: code = ${code} desc = ${String(err.details ?? '')}`;
  const kind = cancelledByCaller ? 'cancelled' : classifyTalosError(text);
  return new ToolError({
    tool: 'talos-api',
    command: `${path} (node ${node} via ${endpoint})`,
    kind,
    exitCode: null,
    stderr: text,
    node,
    message: `${path} for ${node} via ${endpoint} failed (${kind}: ${text})`,
  });
}

/** The status description of a ToolError from this module. */
export function grpcDetailsOf(e: ToolError): string {
  return e.stderr.replace(/^rpc error: code = \w+ desc = /, '');
}
