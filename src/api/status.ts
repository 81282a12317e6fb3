// metav1.Status bodies for the failures the API machinery reports, shaped and worded as Kubernetes'
// apierrors builds them: 422 Invalid with one cause per field error, 409 apply conflicts with a
// FieldManagerConflict cause per field, and any ApiError as its own reason and code.

import { errorBody, goQuote } from './field-errors.js';
import type { FieldError } from './field-errors.js';
import type { ApiError } from './api-error.js';

export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly causes?: readonly StatusCause[];
}

export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure';
  readonly message: string;
  readonly reason: string;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** A group and kind, printed as Kubernetes prints a GroupKind: "Pod", "Deployment.apps". */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

export function groupKindString(gk: GroupKind): string {
  return gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`;
}

function failure(code: number, reason: string, message: string, details?: StatusDetails): Status {
  const base = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason } as const;
  return details === undefined ? { ...base, code } : { ...base, details, code };
}

/**
 * 422 Invalid (apierrors.NewInvalid) from causes already rendered ({reason, message, field}): the message is
 * `Pod "x" is invalid: <field: message>` (several in brackets, duplicates dropped), one cause each. The one
 * Invalid builder: invalidStatus (field errors) and the API server's statuses.invalid both come here.
 */
export function invalidStatusOfCauses(gk: GroupKind, name: string, causes: readonly { readonly reason: string; readonly message: string; readonly field: string }[]): Status {
  const seen = new Set<string>();
  for (const c of causes) seen.add(`${c.field}: ${c.message}`);
  const all = [...seen];
  const agg = all.length === 0 ? undefined : all.length === 1 ? all[0] : `[${all.join(', ')}]`;
  const what = `${groupKindString(gk)} ${goQuote(name)} is invalid`;
  const details: StatusDetails = {
    name,
    ...(gk.group === '' ? {} : { group: gk.group }),
    kind: gk.kind,
    ...(causes.length > 0 ? { causes: causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })) } : {}),
  };
  return failure(422, 'Invalid', agg === undefined ? what : `${what}: ${agg}`, details);
}

/** invalidStatusOfCauses for field errors, each rendered as Kubernetes' ErrorBody. */
export function invalidStatus(gk: GroupKind, name: string, errors: readonly FieldError[]): Status {
  return invalidStatusOfCauses(
    gk,
    name,
    errors.map((e) => ({ reason: e.type, message: errorBody(e), field: e.field })),
  );
}

/** 400 BadRequest with the message as given (apierrors.NewBadRequest). */
export function badRequestStatus(message: string): Status {
  return failure(400, 'BadRequest', message);
}

/** 409 Conflict for a server-side apply (apierrors.NewApplyConflict): causes, no name or kind. */
export function applyConflictStatus(message: string, causes: readonly StatusCause[]): Status {
  return failure(409, 'Conflict', message, { causes });
}

/** The Status Kubernetes answers for an ApiError. */
export function statusFromApiError(e: ApiError): Status {
  return failure(e.status, e.reason, e.message);
}
