// The tiny replicated state machine: a map of keys to values, fed by committed `put` entries. Each cell
// remembers the log index of the put that wrote it, which is what the read checker compares.
import type { Entry } from '../raft/types.js';
import { entryFingerprint, hashString, HASH_SEED, mixInt } from './hash.js';

export interface PutOp {
  readonly op: 'put';
  readonly key: string;
  readonly value: string;
  /** The client request id; values are unique per id, so a value names the write that produced it. */
  readonly id: number;
}

export interface KvCell {
  readonly value: string;
  /** Log index of the entry that wrote the value. */
  readonly index: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodePut(op: PutOp): Uint8Array {
  return encoder.encode(JSON.stringify(op));
}

/** The put carried by a normal entry, or undefined for the leader's empty no-op. */
export function decodePut(data: Uint8Array): PutOp | undefined {
  if (data.length === 0) return undefined;
  const raw = JSON.parse(decoder.decode(data)) as Partial<PutOp>;
  if (raw.op !== 'put' || typeof raw.key !== 'string' || typeof raw.value !== 'string' || typeof raw.id !== 'number') {
    throw new Error(`sim: undecodable entry data ${decoder.decode(data)}`);
  }
  return { op: 'put', key: raw.key, value: raw.value, id: raw.id };
}

interface SnapshotShape {
  readonly h: number;
  readonly cells: [string, string, number][];
}

export class KvMachine {
  private readonly cells = new Map<string, KvCell>();
  /**
   * A hash chained over every applied entry: two nodes with the same applyHash at the same index applied
   * the same sequence. It travels inside snapshots so a restored state can be checked too.
   */
  applyHash = HASH_SEED;

  get(key: string): KvCell | undefined {
    return this.cells.get(key);
  }

  /** Applies one committed entry (conf changes only advance the hash). Returns the put, if any. */
  apply(e: Entry): PutOp | undefined {
    this.applyHash = mixInt(this.applyHash, entryFingerprint(e));
    if (e.type !== 'normal') return undefined;
    const op = decodePut(e.data);
    if (op) this.cells.set(op.key, { value: op.value, index: e.index });
    return op;
  }

  encode(): Uint8Array {
    const cells: [string, string, number][] = [];
    for (const [k, c] of this.cells) cells.push([k, c.value, c.index]);
    const shape: SnapshotShape = { h: this.applyHash, cells };
    return encoder.encode(JSON.stringify(shape));
  }

  /** Restores a state from snapshot data; empty data is the bootstrap snapshot's empty state. */
  static decode(data: Uint8Array): KvMachine {
    const kv = new KvMachine();
    if (data.length === 0) return kv;
    const shape = JSON.parse(decoder.decode(data)) as SnapshotShape;
    kv.applyHash = shape.h;
    for (const [k, value, index] of shape.cells) kv.cells.set(k, { value, index });
    return kv;
  }

  /** A digest of the contents, to compare replicas at the end of a run. */
  digest(): number {
    return cellsDigest(this.cells);
  }
}

/** A digest of key-value cells in key order: equal for two replicas exactly when their contents are. */
export function cellsDigest(cells: ReadonlyMap<string, KvCell>): number {
  let h = HASH_SEED;
  for (const k of [...cells.keys()].sort()) {
    const c = cells.get(k) as KvCell;
    h = mixInt(hashString(c.value, hashString(k, h)), c.index);
  }
  return h;
}
