// metadata.managedFields as Kubernetes reads and writes it: entries {manager, operation, apiVersion,
// time, fieldsType, fieldsV1, subresource}, the manager identifier that groups them (apply entries
// without their apiVersion), Kubernetes' sort order, and the 409 for an apply that conflicts, worded as
// kubectl prints it ("Apply failed with 1 conflict: conflict with "x" using apps/v1: .spec.replicas").

import { ApiError } from '../api-error.js';
import { goQuote } from '../field-errors.js';
import { applyConflictStatus } from '../status.js';
import type { Status, StatusCause } from '../status.js';
import { FieldSet } from './field-set.js';
import { pathString } from './path-element.js';
import type { Conflict, ManagedFields } from './updater.js';

export interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: 'Apply' | 'Update' | string;
  readonly apiVersion?: string;
  readonly time?: string | null;
  readonly fieldsType?: string;
  readonly fieldsV1?: unknown;
  readonly subresource?: string;
}

export interface Managed {
  readonly fields: ManagedFields;
  /** When each manager last changed its fields. */
  readonly times: Map<string, string | undefined>;
}

// Go's encoding/json escapes these in strings.
function goJSONString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The identifier of a manager: its entry as JSON without time and fields; apply entries lose apiVersion. */
export function managerIdentifier(e: { readonly manager?: string; readonly operation?: string; readonly apiVersion?: string; readonly subresource?: string }): string {
  const parts: string[] = [];
  if ((e.manager ?? '') !== '') parts.push(`"manager":${goJSONString(e.manager ?? '')}`);
  if ((e.operation ?? '') !== '') parts.push(`"operation":${goJSONString(e.operation ?? '')}`);
  if (e.operation !== 'Apply' && (e.apiVersion ?? '') !== '') parts.push(`"apiVersion":${goJSONString(e.apiVersion ?? '')}`);
  if ((e.subresource ?? '') !== '') parts.push(`"subresource":${goJSONString(e.subresource ?? '')}`);
  return `{${parts.join(',')}}`;
}

function parseIdentifier(id: string): { manager: string; operation: string; apiVersion: string; subresource: string } {
  const o = JSON.parse(id) as Record<string, string | undefined>;
  return { manager: o.manager ?? '', operation: o.operation ?? '', apiVersion: o.apiVersion ?? '', subresource: o.subresource ?? '' };
}

export class ManagedFieldsError extends ApiError {
  constructor(message: string) {
    super('MANAGED_FIELDS_INVALID', '', message);
    this.name = 'ManagedFieldsError';
  }
}

/** DecodeManagedFields: the entries as sets by manager; throws Kubernetes' messages for bad entries. */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | null | undefined): Managed {
  const fields: ManagedFields = new Map();
  const times = new Map<string, string | undefined>();
  (entries ?? []).forEach((e, i) => {
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if ((e.apiVersion ?? '') === '') throw new ManagedFieldsError('apiVersion must not be empty');
    if ((e.fieldsType ?? '') === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType ${goQuote(e.fieldsType ?? '')} in managed fields entry ${i}`);
    const id = managerIdentifier(e);
    let set: FieldSet;
    try {
      set = FieldSet.fromFieldsV1(e.fieldsV1 ?? {});
    } catch (err) {
      throw new ManagedFieldsError(`error decoding versioned set from ${JSON.stringify(e)}: error decoding set: ${(err as Error).message}`);
    }
    fields.set(id, { set, apiVersion: e.apiVersion ?? '', applied: e.operation === 'Apply' });
    times.set(id, e.time ?? undefined);
  });
  return { fields, times };
}

const seconds = (t: string | undefined): number => (t === undefined ? 0 : Math.floor(Date.parse(t) / 1000));

/** The entries of a Managed value, in Kubernetes' order; undefined when there are none. */
export function encodeManagedFields(m: Managed): ManagedFieldsEntry[] | undefined {
  if (m.fields.size === 0) return undefined;
  const out: ManagedFieldsEntry[] = [];
  for (const [id, vs] of m.fields) {
    const who = parseIdentifier(id);
    const time = m.times.get(id);
    out.push({
      manager: who.manager,
      operation: vs.applied ? 'Apply' : who.operation,
      apiVersion: vs.apiVersion,
      ...(time !== undefined ? { time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: vs.set.toFieldsV1(),
      ...(who.subresource !== '' ? { subresource: who.subresource } : {}),
    });
  }
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return out.sort(
    (p, q) =>
      cmp(p.operation ?? '', q.operation ?? '') ||
      seconds(p.time ?? undefined) - seconds(q.time ?? undefined) ||
      cmp(p.manager ?? '', q.manager ?? '') ||
      cmp(p.apiVersion ?? '', q.apiVersion ?? '') ||
      cmp(p.subresource ?? '', q.subresource ?? ''),
  );
}

/** How conflict messages name a manager: "kubectl", or "x" using apps/v1 for an Update. */
export function printManager(id: string): string {
  let who: ReturnType<typeof parseIdentifier>;
  try {
    who = parseIdentifier(id);
  } catch {
    return goQuote(id);
  }
  let s = goQuote(who.manager);
  if (who.subresource !== '') s += ` with subresource ${goQuote(who.subresource)}`;
  if (who.operation === 'Update') s += ` using ${who.apiVersion}`;
  return s;
}

/** A server-side apply conflict: a 409 whose causes name each conflicting field and its manager. */
export class ApplyConflictError extends ApiError {
  readonly conflicts: readonly Conflict[];
  readonly causes: readonly StatusCause[];

  constructor(conflicts: readonly Conflict[]) {
    const sorted = [...conflicts].sort((a, b) => (a.manager < b.manager ? -1 : a.manager > b.manager ? 1 : 0));
    super('APPLY_CONFLICT', 'Conflict', conflictMessage(sorted));
    this.name = 'ApplyConflictError';
    this.conflicts = sorted;
    this.causes = sorted.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) }));
  }

  toStatus(): Status {
    return applyConflictStatus(this.message, this.causes);
  }
}

function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1) {
    const c = conflicts[0] as Conflict;
    return `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${pathString(c.path)}`;
  }
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), pathString(c.path)]);
  const lines: string[] = [];
  for (const m of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${printManager(m)}:`);
    for (const p of byManager.get(m) ?? []) lines.push(`- ${p}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}
