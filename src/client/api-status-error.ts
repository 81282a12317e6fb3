// A failed API call as the caller needs it: the Kubernetes Status the server answered (code, reason,
// message, details), or one built as client-go builds it when the body was not a Status, so callers
// branch on `reason` (NotFound, Conflict, AlreadyExists, Expired) and the CLI prints kubectl's line.
import type { Status, StatusDetails } from '../api/status.js';

export type ClientErrorCode = 'CLIENT_STATUS' | 'CLIENT_TRANSPORT' | 'CLIENT_TIMEOUT' | 'CLIENT_TOO_LARGE' | 'CLIENT_BAD_RESPONSE' | 'CLIENT_CONFIG';

/** A failure below the API: no answer, an answer too large, a body that does not parse. */
export class ClientError extends Error {
  constructor(
    readonly code: Exclude<ClientErrorCode, 'CLIENT_STATUS'>,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ClientError';
  }
}

export class ApiStatusError extends Error {
  readonly code = 'CLIENT_STATUS';
  readonly status: Status;
  constructor(status: Status) {
    super(status.message);
    this.name = 'ApiStatusError';
    this.status = status;
  }
  get httpCode(): number {
    return this.status.code;
  }
  get reason(): string {
    return this.status.reason;
  }
  get details(): StatusDetails | undefined {
    return this.status.details;
  }
}

export function isApiStatusError(e: unknown, reason?: string): e is ApiStatusError {
  return e instanceof ApiStatusError && (reason === undefined || e.status.reason === reason);
}

export const isNotFound = (e: unknown): boolean => isApiStatusError(e, 'NotFound');
export const isConflict = (e: unknown): boolean => isApiStatusError(e, 'Conflict');
export const isAlreadyExists = (e: unknown): boolean => isApiStatusError(e, 'AlreadyExists');
export const isGone = (e: unknown): boolean => e instanceof ApiStatusError && (e.status.code === 410 || e.status.reason === 'Expired' || e.status.reason === 'Gone');

/** The reason client-go's NewGenericServerResponse gives a status code whose body was not a Status. */
function reasonFor(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 406:
      return 'NotAcceptable';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 413:
      return 'RequestEntityTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return 'Unknown';
  }
}

function isStatus(v: unknown): v is Status {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return o.kind === 'Status' && typeof o.code === 'number';
}

/** Parses an error response: its Status when it is one, else a Status shaped from the code and text. */
export function statusFromResponse(code: number, body: Buffer | string): Status {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  try {
    const parsed: unknown = JSON.parse(text);
    if (isStatus(parsed)) {
      return {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: typeof parsed.message === 'string' ? parsed.message : '',
        reason: typeof parsed.reason === 'string' ? parsed.reason : '',
        code: parsed.code || code,
        ...(parsed.details ? { details: parsed.details } : {}),
      };
    }
  } catch {
    // not JSON: fall through to the generic shape
  }
  const trimmed = text.trim().slice(0, 1024);
  const message = code === 404 ? 'the server could not find the requested resource' : trimmed || `the server responded with the status code ${code} but did not return more information`;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: reasonFor(code), code };
}
