// The API server's HistoryRecordList (GET …/NAME/history, docs/why-records.md) parsed into `why`'s
// HistoryEntry values at the edge: fields of the wrong type become their empty value, never a crash.
import { arr, obj, text } from './object-fields.js';
import type { HistoryEntry, HistoryRecord } from './why-source.js';

/** The subresource every kind serves its history at. */
export const HISTORY_SUBRESOURCE = 'history';

const STAGES: readonly HistoryRecord['stage'][] = ['defaulting', 'mutating', 'validating'];

function recordOf(r: Record<string, unknown>): HistoryRecord {
  const stage = STAGES.find((s) => s === r.stage) ?? 'mutating';
  return {
    stage,
    plugin: text(r.plugin),
    allowed: r.allowed !== false,
    ...(typeof r.message === 'string' ? { message: r.message } : {}),
    changedPaths: Array.isArray(r.changedPaths) ? (r.changedPaths as unknown[]).map(text) : [],
    latencyMs: typeof r.latencyMs === 'number' ? r.latencyMs : 0,
  };
}

export function historyEntriesOf(list: unknown): HistoryEntry[] {
  return arr(obj(list).items).map((e) => {
    const op = text(e.operation);
    return {
      time: text(e.time),
      operation: op === 'UPDATE' || op === 'DELETE' ? op : 'CREATE',
      subresource: text(e.subresource),
      user: text(e.user),
      allowed: e.allowed !== false,
      ...(typeof e.message === 'string' ? { message: e.message } : {}),
      fromResourceVersion: text(e.fromResourceVersion),
      records: arr(e.records).map(recordOf),
    };
  });
}
