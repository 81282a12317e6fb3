// What the registry throws, as the Status Kubernetes answers: ApiErrors from src/api (selectors, patches,
// apply conflicts) and field errors (422 Invalid), wrapped once as StatusErrors.
import { ApiError } from '../../api/api-error.js';
import type { FieldError } from '../../api/field-errors.js';
import { ApplyConflictError } from '../../api/ssa/managed-fields.js';
import { invalidStatus, statusFromApiError } from '../../api/status.js';
import { StatusError, type Status } from '../status.js';

export function asStatusError(e: unknown): unknown {
  if (e instanceof ApplyConflictError) return new StatusError(e.toStatus() as Status);
  if (e instanceof ApiError) return new StatusError(statusFromApiError(e) as Status);
  return e;
}

export function invalid(kind: { group: string; kind: string }, name: string, errors: readonly FieldError[]): StatusError {
  return new StatusError(invalidStatus(kind, name, errors) as Status);
}
