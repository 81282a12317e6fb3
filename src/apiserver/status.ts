// Every Kubernetes Status the API server answers with, built as apimachinery's api/errors builds them:
// the same codes, reasons, messages and details, because clients match on them (kubectl prints
// `Error from server (<reason>): <message>`, client-go retries on reasons, 422 causes become field lines).
// The JSON key order is Go's struct order, so a body reads exactly as kube-apiserver's.
import { invalidStatusOfCauses } from '../api/status.js';

/** metav1.StatusReason values the API server uses; '' is StatusReasonUnknown (omitted from the JSON). */
export type StatusReason =
  | ''
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'ServerTimeout'
  | 'Timeout'
  | 'TooManyRequests'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'Expired'
  | 'ServiceUnavailable';

/** metav1.StatusCause: `reason` is the cause type (FieldValueRequired, FieldManagerConflict, …). */
export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  /** For most errors the resource (`pods`), for Invalid the kind (`Pod`), as Kubernetes fills it. */
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure';
  readonly message: string;
  readonly reason?: string;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** A resource and its group, printed as Kubernetes prints a GroupResource: `pods`, `deployments.apps`. */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

/** A kind and its group, printed as a GroupKind: `Pod`, `Deployment.apps`. */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

export function groupResourceString(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

export function groupKindString(gk: GroupKind): string {
  return gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`;
}

/** Go's %q for the names in messages (`pods "x" not found`). */
function q(s: string): string {
  return JSON.stringify(s);
}

/** Builds a Status with Go's key order; details keep StatusDetails' field order and drop empty fields. */
export function makeStatus(code: number, reason: StatusReason, message: string, details?: StatusDetails): Status {
  let d: StatusDetails | undefined;
  if (details !== undefined) {
    d = {
      ...(details.name ? { name: details.name } : {}),
      ...(details.group ? { group: details.group } : {}),
      ...(details.kind ? { kind: details.kind } : {}),
      ...(details.uid ? { uid: details.uid } : {}),
      ...(details.causes && details.causes.length > 0 ? { causes: details.causes } : {}),
      ...(details.retryAfterSeconds ? { retryAfterSeconds: details.retryAfterSeconds } : {}),
    };
  }
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(reason !== '' ? { reason } : {}),
    ...(d !== undefined ? { details: d } : {}),
    code,
  };
}

/** An error that is a Status: what handlers throw, and what the response writer turns back into its body. */
export class StatusError extends Error {
  /** The Status reason, stable for code that matches on it ('' for an unknown reason). */
  readonly code: StatusReason;

  constructor(readonly status: Status) {
    super(status.message);
    this.name = 'StatusError';
    this.code = (status.reason ?? '') as StatusReason;
  }
}

function gr(qualified: GroupResource, name?: string): StatusDetails {
  return { ...(name !== undefined ? { name } : {}), group: qualified.group, kind: qualified.resource };
}

/** What Conflict says when a write's resourceVersion is stale (storage.OptimisticLockErrorMsg). */
export const OPTIMISTIC_LOCK_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

export const statuses = {
  /** 404 `pods "x" not found` (apierrors.NewNotFound). */
  notFound: (resource: GroupResource, name: string): Status =>
    makeStatus(404, 'NotFound', `${groupResourceString(resource)} ${q(name)} not found`, gr(resource, name)),

  /** 404 for a path that names nothing the server serves: what kube-apiserver's not-found handler answers. */
  pathNotFound: (): Status => makeStatus(404, 'NotFound', 'the server could not find the requested resource', {}),

  /** 409 `pods "x" already exists`. */
  alreadyExists: (resource: GroupResource, name: string): Status =>
    makeStatus(409, 'AlreadyExists', `${groupResourceString(resource)} ${q(name)} already exists`, gr(resource, name)),

  /** 409 when generateName gave a name that exists (apierrors.NewGenerateNameConflict). */
  generateNameConflict: (resource: GroupResource, name: string, retryAfterSeconds: number): Status =>
    makeStatus(
      409,
      'AlreadyExists',
      `${groupResourceString(resource)} ${q(name)} already exists, the server was not able to generate a unique name for the object`,
      { ...gr(resource, name), retryAfterSeconds },
    ),

  /** 409 `Operation cannot be fulfilled on pods "x": <why>`; `why` defaults to the stale-resourceVersion text. */
  conflict: (resource: GroupResource, name: string, why: string = OPTIMISTIC_LOCK_MESSAGE): Status =>
    makeStatus(409, 'Conflict', `Operation cannot be fulfilled on ${groupResourceString(resource)} ${q(name)}: ${why}`, gr(resource, name)),

  /** 409 for server-side apply conflicts: causes (FieldManagerConflict), no name or kind. */
  applyConflict: (message: string, causes: readonly StatusCause[]): Status => makeStatus(409, 'Conflict', message, { causes }),

  /**
   * 422 `Pod "x" is invalid: <field: message>` (or `[a, b]` for several, duplicates dropped), one cause per
   * field error; `details.kind` is the kind. kubectl prints the causes, not the message.
   */
  invalid: (kind: GroupKind, name: string, causes: readonly { readonly type: string; readonly field: string; readonly message: string }[]): Status =>
    invalidStatusOfCauses(kind, name, causes.map((c) => ({ reason: c.type, message: c.message, field: c.field }))) as Status,

  /** 400 with the message as given. */
  badRequest: (message: string): Status => makeStatus(400, 'BadRequest', message),

  /** 401; the authentication filter answers `Unauthorized`. */
  unauthorized: (message = 'Unauthorized'): Status => makeStatus(401, 'Unauthorized', message),

  /** 403 `pods "x" is forbidden: <why>` (`pods is forbidden: …` without a name, `forbidden: …` without a resource). */
  forbidden: (resource: GroupResource | undefined, name: string, why: string): Status => {
    if (resource === undefined || resource.resource === '') return makeStatus(403, 'Forbidden', `forbidden: ${why}`, { ...(name ? { name } : {}) });
    const what = name === '' ? groupResourceString(resource) : `${groupResourceString(resource)} ${q(name)}`;
    return makeStatus(403, 'Forbidden', `${what} is forbidden: ${why}`, gr(resource, name === '' ? undefined : name));
  },

  /** 405 `create is not supported on resources of kind "pods"` (apierrors.NewMethodNotSupported). */
  methodNotSupported: (resource: GroupResource, action: string): Status =>
    makeStatus(405, 'MethodNotAllowed', `${action} is not supported on resources of kind ${q(groupResourceString(resource))}`, gr(resource)),

  /** 405 for a method a non-resource path does not take (client-go's words for a bare 405). */
  methodNotAllowed: (): Status => makeStatus(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}),

  /** 410 Gone (deprecated in Kubernetes in favour of Expired, still answered in places). */
  gone: (message: string): Status => makeStatus(410, 'Gone', message),

  /** 410 Expired: a resourceVersion or continue token older than the store's history. */
  expired: (message: string): Status => makeStatus(410, 'Expired', message),

  /** 429 with details.retryAfterSeconds (the writer sets Retry-After from it). */
  tooManyRequests: (message: string, retryAfterSeconds: number): Status =>
    makeStatus(429, 'TooManyRequests', message, { retryAfterSeconds }),

  /** 413 `Request entity too large: limit is 3145728`. */
  requestEntityTooLarge: (message: string): Status => makeStatus(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`),

  /** 415 for a request body type the endpoint does not decode. */
  unsupportedMediaType: (accepted: readonly string[]): Status =>
    makeStatus(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`),

  /** 406 when nothing in Accept can be served. */
  notAcceptable: (accepted: readonly string[]): Status =>
    makeStatus(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`),

  /** 504 `Timeout: <message>` (apierrors.NewTimeoutError). */
  timeout: (message: string, retryAfterSeconds = 0): Status =>
    makeStatus(504, 'Timeout', `Timeout: ${message}`, { retryAfterSeconds }),

  /** 504 for a resourceVersion the store has not reached: Timeout with a ResourceVersionTooLarge cause. */
  tooLargeResourceVersion: (message: string, retryAfterSeconds = 1): Status =>
    makeStatus(504, 'Timeout', `Timeout: ${message}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds,
    }),

  /** 500 ServerTimeout: the store did not answer (`The list operation against pods could not be completed …`). */
  serverTimeout: (resource: GroupResource, operation: string, retryAfterSeconds: number): Status =>
    makeStatus(
      500,
      'ServerTimeout',
      `The ${operation} operation against ${groupResourceString(resource)} could not be completed at this time, please try again.`,
      { name: operation, group: resource.group, kind: resource.resource, retryAfterSeconds },
    ),

  /** 500 `Internal error occurred: <message>` with the message as a cause. */
  internalError: (message: string): Status =>
    makeStatus(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }),

  /** 500 with no reason: what Kubernetes answers for an error no layer turned into a Status. */
  unknown: (message: string): Status => makeStatus(500, '', message),

  /** 503 with the message as given. */
  serviceUnavailable: (message: string): Status => makeStatus(503, 'ServiceUnavailable', message),
};

/** The Status for anything a handler throws: a StatusError as it is, anything else as an InternalError. */
export function statusOf(err: unknown): Status {
  if (err instanceof StatusError) return err.status;
  if (isStatus(err)) return err;
  return statuses.internalError(err instanceof Error ? err.message : String(err));
}

/** A Status-shaped value (another module's Status builders give the same shape). */
export function isStatus(v: unknown): v is Status {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return o.kind === 'Status' && typeof o.code === 'number' && typeof o.message === 'string';
}
