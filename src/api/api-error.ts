// The errors of the API machinery, each with a stable code, Kubernetes' exact message and the HTTP
// status Kubernetes answers with. The API server maps them to a Status once, at its edge; nothing here
// knows about HTTP beyond the number.

/**
 * The Status reasons these errors map to (metav1.StatusReason). The empty reason is StatusReasonUnknown:
 * what Kubernetes answers (with 500) for an error no layer turned into a Status.
 */
export type ApiErrorReason = 'BadRequest' | 'Invalid' | 'Conflict' | 'RequestEntityTooLarge' | 'InternalError' | '';

export type ApiErrorCode =
  // resource.Quantity parsing
  | 'QUANTITY_FORMAT'
  | 'QUANTITY_NUMERIC'
  | 'QUANTITY_SUFFIX'
  // label and field selectors
  | 'LABEL_SELECTOR_INVALID'
  | 'FIELD_SELECTOR_INVALID'
  | 'FIELD_LABEL_NOT_SUPPORTED'
  // decoding request bodies
  | 'JSON_INVALID'
  | 'DECODE_FAILED'
  | 'STRICT_DECODING'
  // patches
  | 'MERGE_PATCH_INVALID'
  | 'JSON_PATCH_INVALID'
  | 'JSON_PATCH_FAILED'
  | 'JSON_PATCH_TOO_LARGE'
  | 'SMP_BAD_REQUEST'
  | 'SMP_UNPROCESSABLE'
  | 'SMP_FAILED'
  // server-side apply
  | 'APPLY_CONFLICT'
  | 'APPLY_BAD_REQUEST'
  | 'APPLY_INVALID_OBJECT'
  | 'MANAGED_FIELDS_INVALID';

const statusOf: Record<ApiErrorReason, number> = {
  BadRequest: 400,
  Invalid: 422,
  Conflict: 409,
  RequestEntityTooLarge: 413,
  InternalError: 500,
  '': 500,
};

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly reason: ApiErrorReason;
  /** The HTTP status Kubernetes answers with for this error. */
  readonly status: number;

  constructor(code: ApiErrorCode, reason: ApiErrorReason, message: string) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.status = statusOf[reason];
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
