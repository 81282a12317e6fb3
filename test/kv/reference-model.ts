// An obviously-correct reference for the MVCC store: the whole key space is copied at every revision.
// Slow and memory-hungry on purpose; the model-based test compares KvStore against it.

export interface ModelKv {
  key: string;
  value: string;
  createRevision: number;
  modRevision: number;
  version: number;
}

export class ReferenceModel {
  /** states[r] is the key space after revision r (states[1] is the empty store). */
  readonly states: Map<string, ModelKv>[] = [new Map(), new Map()];
  compactRev = 0;

  get rev(): number {
    return this.states.length - 1;
  }

  private head(): Map<string, ModelKv> {
    return this.states[this.rev] as Map<string, ModelKv>;
  }

  /** Applies a batch of changes as one revision (only if it changes anything). */
  write(changes: ({ put: string; value: string } | { del: string; end?: string })[]): void {
    const next = new Map(this.head());
    const rev = this.rev + 1;
    let changed = false;
    for (const c of changes) {
      if ('put' in c) {
        const prev = next.get(c.put);
        next.set(c.put, { key: c.put, value: c.value, createRevision: prev ? prev.createRevision : rev, modRevision: rev, version: prev ? prev.version + 1 : 1 });
        changed = true;
      } else {
        for (const k of [...next.keys()]) {
          if (c.end === undefined ? k === c.del : k >= c.del && (c.end === '\0' || k < c.end)) {
            next.delete(k);
            changed = true;
          }
        }
      }
    }
    if (changed) this.states.push(next);
  }

  /** Keys in [key, end) at rev, in key order; throws the etcd error code for bad revisions. */
  range(key: string, end: string | undefined, rev: number): ModelKv[] {
    const at = rev > 0 ? rev : this.rev;
    if (at > this.rev) throw new Error('FUTURE_REV');
    if (at < this.compactRev) throw new Error('COMPACTED');
    const st = this.states[at] as Map<string, ModelKv>;
    return [...st.values()]
      .filter((kv) => (end === undefined ? kv.key === key : kv.key >= key && (end === '\0' || kv.key < end)))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  compact(rev: number): void {
    if (rev <= this.compactRev) throw new Error('COMPACTED');
    if (rev > this.rev) throw new Error('FUTURE_REV');
    this.compactRev = rev;
  }

  /** The events of revision r, as (type, key) pairs in key order within a delete, txn order otherwise. */
  events(r: number): { type: 'PUT' | 'DELETE'; key: string; value: string }[] {
    const before = this.states[r - 1] as Map<string, ModelKv>;
    const after = this.states[r] as Map<string, ModelKv>;
    const out: { type: 'PUT' | 'DELETE'; key: string; value: string }[] = [];
    for (const [k, kv] of after) if (kv.modRevision === r) out.push({ type: 'PUT', key: k, value: kv.value });
    for (const k of before.keys()) if (!after.has(k)) out.push({ type: 'DELETE', key: k, value: '' });
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}
