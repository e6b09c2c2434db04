// metav1.Status bodies with the exact messages of apimachinery's errors.go (kubectl prints them verbatim).

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export function failure(code: number, reason: string | undefined, message: string, details?: StatusDetails): Status {
  // Field order as Go encodes metav1.Status, so recorded bodies read like a real server's.
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(reason ? { reason } : {}),
    ...(details ? { details } : {}),
    code,
  } as Status;
}

export function success(code: number, details?: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', ...(details ? { details } : {}), code } as Status;
}

/**
 * The kube-apiserver's answer when a request outlives its deadline (the client's `?timeout=`, or the
 * server's default): a 504 Status from apiserver:pkg/endpoints/handlers/finisher/finisher.go
 * (apimachinery NewTimeoutError prefixes "Timeout: "). The handler goes on running, so the write may
 * still land: docs/kubernetes-facts.md#k13-server-timeout.
 */
export const SERVER_TIMEOUT_MESSAGE = 'Timeout: request did not complete within requested timeout - context deadline exceeded';

/** Thrown anywhere in request handling; the HTTP layer turns it into the Status response. */
export class ApiError extends Error {
  constructor(
    readonly status: Status,
    readonly headers: Record<string, string> = {},
  ) {
    super(status.message ?? status.reason ?? String(status.code));
  }
  get code(): number {
    return this.status.code;
  }
}

/** How a resource is named in error messages: `nodes`, `leases.coordination.k8s.io`. */
export interface GroupResource {
  group: string;
  plural: string;
}

export function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.plural}.${gr.group}` : gr.plural;
}

function grDetails(gr: GroupResource, name: string): StatusDetails {
  return gr.group ? { name, group: gr.group, kind: gr.plural } : { name, kind: gr.plural };
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(failure(404, 'NotFound', `${qualified(gr)} "${name}" not found`, grDetails(gr, name)));
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(failure(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, grDetails(gr, name)));
}

export function conflict(
  gr: GroupResource,
  name: string,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
): ApiError {
  return new ApiError(failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`, grDetails(gr, name)));
}

export function badRequest(message: string): ApiError {
  return new ApiError(failure(400, 'BadRequest', message));
}

export function internal(message: string): ApiError {
  return new ApiError(failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }));
}

export function methodNotAllowed(): ApiError {
  return new ApiError(failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}));
}

export function pathNotFound(): ApiError {
  return new ApiError(failure(404, 'NotFound', 'the server could not find the requested resource', {}));
}

/** The generic answer to any JSON-patch apply failure: the evanphx error text is dropped by the apiserver. */
export function patchApplyFailed(): ApiError {
  return new ApiError(failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {}));
}

export interface FieldError {
  field: string;
  /** e.g. `Invalid value: 0: must be greater than 0` */
  message: string;
  reason?: string;
}

/** apimachinery's NewInvalid: `<Kind>[.<group>] "<name>" is invalid: <errs>`, several errors in brackets. */
export function invalid(kind: string, group: string, name: string, errs: FieldError[]): ApiError {
  const gk = group ? `${kind}.${group}` : kind;
  const parts = errs.map((e) => `${e.field}: ${e.message}`);
  const agg = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  const details: StatusDetails = {
    name,
    ...(group ? { group } : {}),
    kind,
    causes: errs.map((e) => ({ reason: e.reason ?? 'FieldValueInvalid', message: e.message, field: e.field })),
  };
  return new ApiError(failure(422, 'Invalid', `${gk} "${name}" is invalid: ${agg}`, details));
}

/** Go's %#v rendering used in `Invalid value: …` texts. */
export function goValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'object') return JSON.stringify(JSON.stringify(v));
  return String(v);
}

export const defaultReason: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};
