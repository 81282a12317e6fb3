// The loops' records for `setpoint why`: one compact record per (object, controller) — the gap the loop saw,
// what it did, the outcome, since when and how many reconciles gave it — kept beside the object in one
// companion key (deleted with the object) and bounded in size. Shape documented in docs/why-records.md.
import type { StoredObject } from '../storage/interface.js';

/** The JSON of one record, at most. */
export const RECORD_MAX_BYTES = 8 * 1024;
/** Records per object (one per controller); a new controller beyond it replaces the least recently written. */
export const RECORDS_PER_OBJECT = 8;
const CONTROLLER_MAX = 253;
const TEXT_MAX = 1024;

export type ReconcileOutcome = 'ok' | 'error' | 'waiting';
const OUTCOMES: readonly ReconcileOutcome[] = ['ok', 'error', 'waiting'];

/** What a loop reports (the body of a PUT to …/reconcile); the server keeps since, count and lastTime. */
export interface ReconcileReport {
  readonly controller: string;
  readonly observedGeneration?: number;
  /** Small JSON: what the loop wanted and what it saw (replicas desired/actual/ready, bound or not…). */
  readonly gap: { readonly desired: unknown; readonly actual: unknown };
  /** What it did: `create 2`, `delete 1`, `scale web-abc to 3`, `wait`, `bind`. */
  readonly action: string;
  readonly outcome: ReconcileOutcome;
  readonly message?: string;
  /** More of the loop's own structured facts (the scheduler's diagnosis), bounded with the rest. */
  readonly details?: unknown;
  /** How many reconciles this report stands for (the loop reports a repeated outcome only now and then). */
  readonly reconciles?: number;
  /** The object's uid the loop looked at: the write is refused (409) when the object is another by now. */
  readonly uid?: string;
}

export interface ReconcileRecord extends Omit<ReconcileReport, 'reconciles' | 'uid'> {
  /** When this outcome began (the first report of it, after a different one). */
  readonly since: string;
  /** How many reconciles gave this outcome since then. */
  readonly count: number;
  readonly lastTime: string;
}

/** Stored as a StoredObject (metadata.name = the object's) so the storage reads it like any other. */
export interface ReconcileDocument extends StoredObject {
  kind: 'ReconcileRecords';
  apiVersion: 'setpoint.io/v1';
  records: ReconcileRecord[];
}

export function reconcileKey(etcdPrefix: string, resource: string, namespace: string, name: string): string {
  return `${etcdPrefix}/setpoint.io/reconcile/${resource}/${namespace === '' ? '' : `${namespace}/`}${name}`;
}

export interface FieldProblem {
  readonly field: string;
  readonly type: 'FieldValueRequired' | 'FieldValueNotSupported' | 'FieldValueInvalid' | 'FieldValueTooLong';
  readonly message: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The body parsed into a report, or the problems with it (the handler answers 422 Invalid with them). */
export function parseReport(body: unknown): { report: ReconcileReport } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const b = isRecord(body) ? body : {};
  const text = (field: string, max: number, required: boolean): string | undefined => {
    const v = b[field];
    if (v === undefined || v === '') {
      if (required) problems.push({ field, type: 'FieldValueRequired', message: 'Required value' });
      return undefined;
    }
    if (typeof v !== 'string') {
      problems.push({ field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(v)}: must be a string` });
      return undefined;
    }
    if (v.length > max) problems.push({ field, type: 'FieldValueTooLong', message: `Too long: may not be more than ${max} bytes` });
    return v;
  };
  const controller = text('controller', CONTROLLER_MAX, true);
  const action = text('action', TEXT_MAX, true);
  const message = text('message', TEXT_MAX, false);
  const uid = text('uid', CONTROLLER_MAX, false);
  const outcome = b['outcome'];
  if (outcome === undefined) problems.push({ field: 'outcome', type: 'FieldValueRequired', message: 'Required value' });
  else if (!OUTCOMES.includes(outcome as ReconcileOutcome)) {
    problems.push({ field: 'outcome', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(outcome)}: supported values: ${OUTCOMES.map((o) => JSON.stringify(o)).join(', ')}` });
  }
  const count = (field: string): number | undefined => {
    const v = b[field];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
      problems.push({ field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(v)}: must be a non-negative integer` });
      return undefined;
    }
    return v;
  };
  const observedGeneration = count('observedGeneration');
  const reconciles = count('reconciles');
  const gap = isRecord(b['gap']) ? b['gap'] : undefined;
  if (gap === undefined) problems.push({ field: 'gap', type: 'FieldValueRequired', message: 'Required value' });
  if (problems.length > 0 || controller === undefined || action === undefined || gap === undefined) return { problems };
  const report: ReconcileReport = {
    controller,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    gap: { desired: gap['desired'] ?? null, actual: gap['actual'] ?? null },
    action,
    outcome: outcome as ReconcileOutcome,
    ...(message !== undefined ? { message } : {}),
    ...(b['details'] !== undefined ? { details: b['details'] } : {}),
    ...(reconciles !== undefined ? { reconciles } : {}),
    ...(uid !== undefined ? { uid } : {}),
  };
  return { report };
}

/** The record the report makes, given the controller's previous one: the same outcome keeps its since and counts on. */
export function nextRecord(prev: ReconcileRecord | undefined, r: ReconcileReport, now: string): ReconcileRecord {
  const n = r.reconciles ?? 1;
  const same = prev !== undefined && prev.outcome === r.outcome;
  return {
    controller: r.controller,
    ...(r.observedGeneration !== undefined ? { observedGeneration: r.observedGeneration } : {}),
    gap: r.gap,
    action: r.action,
    outcome: r.outcome,
    ...(r.message !== undefined ? { message: r.message } : {}),
    ...(r.details !== undefined ? { details: r.details } : {}),
    since: same ? prev.since : now,
    count: same ? prev.count + n : Math.max(1, n),
    lastTime: now,
  };
}

export function recordBytes(r: ReconcileRecord): number {
  return Buffer.byteLength(JSON.stringify(r));
}

/** The object's records with `rec` in its controller's place; over RECORDS_PER_OBJECT, the least recently written goes. */
export function withRecord(doc: ReconcileDocument | undefined, name: string, rec: ReconcileRecord): ReconcileDocument {
  const others = (doc?.records ?? []).filter((r) => r.controller !== rec.controller);
  others.sort((a, b) => (a.lastTime < b.lastTime ? -1 : a.lastTime > b.lastTime ? 1 : 0));
  const records = [...others.slice(Math.max(0, others.length - (RECORDS_PER_OBJECT - 1))), rec];
  records.sort((a, b) => (a.controller < b.controller ? -1 : a.controller > b.controller ? 1 : 0));
  return { kind: 'ReconcileRecords', apiVersion: 'setpoint.io/v1', metadata: { name }, records };
}
