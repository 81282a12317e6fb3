// The HistoryRecordList the API server serves, parsed at the edge: good input kept as is, bad fields emptied.
import { describe, expect, it } from 'vitest';
import { historyEntriesOf } from '../../src/why/history-list.js';

describe('historyEntriesOf', () => {
  it('keeps the entries and records as the server sent them', () => {
    const entry = {
      time: '2026-12-02T12:40:01.123Z',
      operation: 'UPDATE',
      subresource: 'status',
      user: 'admin',
      allowed: false,
      message: 'denied',
      fromResourceVersion: '12',
      records: [{ stage: 'validating', plugin: 'w.example.com', allowed: false, message: 'no', changedPaths: [], latencyMs: 1.5 }],
    };
    expect(historyEntriesOf({ apiVersion: 'setpoint.io/v1', kind: 'HistoryRecordList', items: [entry] })).toEqual([entry]);
  });

  it('turns junk into empty values, never a crash', () => {
    expect(historyEntriesOf(null)).toEqual([]);
    expect(historyEntriesOf({ items: 'x' })).toEqual([]);
    expect(historyEntriesOf({ items: [7, { operation: 'DROP', records: [{ stage: 'x', changedPaths: 'a', latencyMs: 'slow' }] }] })).toEqual([
      { time: '', operation: 'CREATE', subresource: '', user: '', allowed: true, fromResourceVersion: '', records: [] },
      { time: '', operation: 'CREATE', subresource: '', user: '', allowed: true, fromResourceVersion: '', records: [{ stage: 'mutating', plugin: '', allowed: true, changedPaths: [], latencyMs: 0 }] },
    ]);
  });
});
