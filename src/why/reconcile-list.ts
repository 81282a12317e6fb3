// The API server's ReconcileRecordList (GET …/NAME/reconcile, docs/why-records.md) parsed into `why`'s
// LoopRecord values at the edge: fields of the wrong type become their empty value, never a crash.
import { arr, int, obj, text } from './object-fields.js';
import type { LoopRecord } from './why-source.js';

/** The subresource every kind serves its loops' records at. */
export const RECONCILE_SUBRESOURCE = 'reconcile';

const OUTCOMES: readonly LoopRecord['outcome'][] = ['ok', 'error', 'waiting'];

export function loopRecordsOf(list: unknown): LoopRecord[] {
  return arr(obj(list).items).map((r) => {
    const gap = obj(r.gap);
    const generation = int(r.observedGeneration);
    return {
      controller: text(r.controller),
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      gap: { desired: gap.desired ?? null, actual: gap.actual ?? null },
      action: text(r.action),
      outcome: OUTCOMES.find((o) => o === r.outcome) ?? 'waiting',
      ...(typeof r.message === 'string' ? { message: r.message } : {}),
      ...(r.details !== undefined ? { details: r.details } : {}),
      since: text(r.since),
      count: int(r.count) ?? 1,
      lastTime: text(r.lastTime),
    };
  });
}
