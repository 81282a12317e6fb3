// Watch guarantees (etcd's api_guarantees, as its robustness tests check them): every watcher's events
// are ordered, unique, atomic (a revision never split across responses), bookmarkable (nothing at or
// below a progress revision arrives after it on that stream), reliable and resumable (each watcher's
// sequence equals the reference sequence over its range, across reconnects), consistent with the
// key-value history (acknowledged writes at their revisions, nothing never written), with correct
// prev_kv and version/create_revision, and the replayed state equals the final Range.
import type { WatchedKv, WatchEvent, WatcherLog } from '../workloads/watcher.js';
import type { Outcome } from '../history.js';
import type { Anomaly, CheckResult } from './result.js';

export interface WatchWrite {
  op: number;
  outcome: Outcome;
  /** Revision of an acknowledged write (undefined otherwise, or for a delete that deleted nothing). */
  rev: number | undefined;
  puts?: { key: string; value: string }[];
  deleteKey?: string;
  deleted?: number;
}

export interface WatchCheckInput {
  startRev: number;
  finalRev: number;
  watchers: WatcherLog[];
  reference: WatchEvent[] | undefined;
  writes: WatchWrite[];
  finalKvs: { key: string; value: string; create: number; mod: number; version: number }[] | undefined;
}

const MAX_PER_KIND = 5;

function fmt(e: WatchEvent): string {
  return `${e.type} ${e.key}${e.type === 'PUT' ? `=${e.value}` : ''}@${e.rev}`;
}

function sameEvent(a: WatchEvent, b: WatchEvent): boolean {
  const samePrev = (x: WatchedKv | null, y: WatchedKv | null): boolean =>
    x === y || (x !== null && y !== null && x.value === y.value && x.mod === y.mod && x.create === y.create && x.version === y.version);
  return a.rev === b.rev && a.type === b.type && a.key === b.key && a.value === b.value && a.create === b.create && a.version === b.version && samePrev(a.prev, b.prev);
}

export function checkWatch(input: WatchCheckInput): CheckResult {
  const anomalies: Anomaly[] = [];
  const add = (kind: string, text: string): void => {
    if (anomalies.filter((a) => a.kind === kind).length < MAX_PER_KIND) anomalies.push({ kind, explanation: [text] });
  };
  const stats: Record<string, number | string> = { watchers: input.watchers.length, 'start revision': input.startRev, 'final revision': input.finalRev };

  // Per-watcher properties that need no reference.
  for (const w of input.watchers) {
    const seen = new Set<string>();
    let prevRev = 0;
    const respOfRev = new Map<number, number>();
    for (const e of w.events) {
      if (e.rev < prevRev) add('unordered', `watcher ${w.id}: ${fmt(e)} arrived after an event at revision ${prevRev}.`);
      prevRev = Math.max(prevRev, e.rev);
      const id = `${e.rev}/${e.key}`;
      if (seen.has(id)) add('duplicate', `watcher ${w.id}: ${fmt(e)} delivered twice.`);
      seen.add(id);
      const r = respOfRev.get(e.rev);
      if (r !== undefined && r !== e.resp) add('split-revision', `watcher ${w.id}: revision ${e.rev} was split across two responses (${r} and ${e.resp}).`);
      respOfRev.set(e.rev, e.resp);
    }
    for (const p of w.progress) {
      const late = w.events.find((e) => e.stream === p.stream && e.rev <= p.rev && e.resp > p.resp);
      if (late) add('bookmark', `watcher ${w.id}: a progress notification at revision ${p.rev} was followed on the same stream by ${fmt(late)}.`);
    }
    stats[`watcher ${w.id} events`] = w.events.length;
    stats[`watcher ${w.id} reconnects`] = w.reconnects.length;
  }

  const ref = input.reference;
  if (!ref) {
    add('no-reference', 'no member delivered the reference sequence (a fresh watch from the start revision) after the heal.');
    return { name: 'watch guarantees', valid: anomalies.some((a) => a.kind !== 'no-reference') ? false : 'unknown', stats, anomalies };
  }
  stats['reference events'] = ref.length;
  const refLast = ref.length ? ref[ref.length - 1]!.rev : input.startRev - 1;

  // Reliable and resumable: each watcher's sequence equals the reference over its range.
  for (const w of input.watchers) {
    const upto = ref.filter((e) => e.rev <= w.lastRev);
    const n = Math.max(upto.length, w.events.length);
    for (let i = 0; i < n; i++) {
      const a = w.events[i];
      const b = upto[i];
      if (a && b && sameEvent(a, b)) continue;
      if (!a && b) add('gap', `watcher ${w.id} never delivered ${fmt(b)} (its last event was at revision ${w.lastRev}).`);
      else if (a && !b) add('extra', `watcher ${w.id} delivered ${fmt(a)}, which the reference sequence lacks.`);
      else if (a && b) {
        add(
          a.rev === b.rev && a.key === b.key ? 'event-mismatch' : 'gap',
          a.rev === b.rev && a.key === b.key
            ? `watcher ${w.id}: ${fmt(a)} differs from the reference (value, version, create revision or prev_kv).`
            : `watcher ${w.id}: expected ${fmt(b)} next but got ${fmt(a)}${a.rev > b.rev ? ' — events were skipped' : ''}.`,
        );
      }
      break;
    }
    if (w.lastRev < refLast) add('incomplete', `watcher ${w.id} stopped at revision ${w.lastRev}, short of the last change at ${refLast}, 20 s after the heal.`);
  }

  // The reference against the key-value history.
  const byRev = new Map<number, WatchEvent[]>();
  for (const e of ref) byRev.set(e.rev, [...(byRev.get(e.rev) ?? []), e]);
  const writtenBy = new Map<string, WatchWrite>();
  for (const w of input.writes) for (const p of w.puts ?? []) writtenBy.set(`${p.key}=${p.value}`, w);
  for (const w of input.writes) {
    if (w.outcome !== 'ok' || w.rev === undefined) continue;
    const evs = byRev.get(w.rev) ?? [];
    for (const p of w.puts ?? []) {
      if (!evs.some((e) => e.type === 'PUT' && e.key === p.key && e.value === p.value)) add('lost-write', `acknowledged put ${p.key}=${p.value} at revision ${w.rev} has no matching watch event.`);
    }
    if (w.deleteKey && !evs.some((e) => e.type === 'DELETE' && e.key === w.deleteKey)) add('lost-write', `acknowledged delete of ${w.deleteKey} at revision ${w.rev} has no matching watch event.`);
    if (w.puts && evs.length !== w.puts.length) add('atomicity', `the txn acknowledged at revision ${w.rev} wrote ${w.puts.length} keys but revision ${w.rev} has ${evs.length} events.`);
  }
  for (const e of ref) {
    if (e.type !== 'PUT') continue;
    const w = writtenBy.get(`${e.key}=${e.value}`);
    if (!w) add('phantom', `${fmt(e)} was never written by any client.`);
    else if (w.outcome === 'fail') add('phantom', `${fmt(e)} comes from a write that certainly failed.`);
    else if (w.outcome === 'ok' && w.rev !== e.rev) add('wrong-revision', `${fmt(e)} but the client was told revision ${w.rev}.`);
  }

  // prev_kv, version and create_revision by replaying the reference from an empty prefix.
  const state = new Map<string, WatchedKv>();
  for (const e of ref) {
    const before = state.get(e.key) ?? null;
    const p = e.prev;
    const prevOk = before === null ? p === null : p !== null && p.value === before.value && p.mod === before.mod && p.version === before.version && p.create === before.create;
    if (!prevOk) add('prev-kv', `${fmt(e)} carries prev_kv ${p ? `${p.value}@${p.mod}` : 'none'}, but the key held ${before ? `${before.value}@${before.mod}` : 'nothing'}.`);
    if (e.type === 'PUT') {
      const version = before ? before.version + 1 : 1;
      const create = before ? before.create : e.rev;
      if (e.version !== version || e.create !== create) add('version', `${fmt(e)} has version ${e.version}, create_revision ${e.create}; expected ${version}, ${create}.`);
      state.set(e.key, { value: e.value, create, mod: e.rev, version });
    } else state.delete(e.key);
  }
  if (input.finalKvs) {
    const fin = new Map(input.finalKvs.map((k) => [k.key, k]));
    for (const [k, v] of state) {
      const f = fin.get(k);
      if (!f || f.value !== v.value || f.mod !== v.mod) add('final-state', `replaying the watch gives ${k}=${v.value}@${v.mod}, the final read gives ${f ? `${f.value}@${f.mod}` : 'nothing'}.`);
    }
    for (const k of fin.keys()) if (!state.has(k)) add('final-state', `the final read has ${k}, which replaying the watch does not.`);
  }
  return { name: 'watch guarantees', valid: anomalies.length ? false : true, stats, anomalies };
}

