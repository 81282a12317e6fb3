// Request validation done before a write is proposed, with etcd's exact errors: empty keys, ignore_*
// flags, op counts, and keys written twice in one transaction (puts that overlap puts or deletes).
import type { DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from './types.js';
import { etcdError } from './errors.js';
import { keyRange, inRange, toKey, type KeyRange } from './key-range.js';

export const DEFAULT_MAX_TXN_OPS = 128;

/** The bytes a put adds to the store, roughly: what quota checks charge for it. */
export function putCost(p: PutRequest): number {
  return p.key.length + (p.value?.length ?? 0) + 48;
}

export function checkRange(r: RangeRequest | DeleteRangeRequest): void {
  if (r.key.length === 0) throw etcdError('EMPTY_KEY');
}

export function checkPut(r: PutRequest): void {
  if (r.key.length === 0) throw etcdError('EMPTY_KEY');
  if (r.ignoreValue && r.value && r.value.length !== 0) throw etcdError('VALUE_PROVIDED');
  if (r.ignoreLease && r.lease !== undefined && r.lease !== '0') throw etcdError('LEASE_PROVIDED');
}

function checkOp(op: RequestOp, maxTxnOps: number): void {
  if ('requestRange' in op) return checkRange(op.requestRange);
  if ('requestPut' in op) return checkPut(op.requestPut);
  if ('requestDeleteRange' in op) return checkRange(op.requestDeleteRange);
  if ('requestTxn' in op) return checkTxn(op.requestTxn, maxTxnOps);
  throw etcdError('KEY_NOT_FOUND'); // an op with no request in it
}

/** Op counts and per-op checks, recursively (each nested txn is counted on its own). */
export function checkTxn(r: TxnRequest, maxTxnOps = DEFAULT_MAX_TXN_OPS): void {
  const n = Math.max(r.compare?.length ?? 0, r.success?.length ?? 0, r.failure?.length ?? 0);
  if (n > maxTxnOps) throw etcdError('TOO_MANY_OPS');
  for (const c of r.compare ?? []) if (c.key.length === 0) throw etcdError('EMPTY_KEY');
  for (const op of r.success ?? []) checkOp(op, maxTxnOps);
  for (const op of r.failure ?? []) checkOp(op, maxTxnOps);
  checkDuplicates(r.success ?? []);
  checkDuplicates(r.failure ?? []);
}

interface Writes {
  readonly puts: Set<string>;
  readonly dels: KeyRange[];
}

/**
 * The delete's interval taken literally, as etcd's check does: a range_end of "\0" is the (empty)
 * interval [key, "\0"), not "every key from key on", so it never collides with a put.
 */
function literalRange(d: DeleteRangeRequest): KeyRange {
  if (!d.rangeEnd || d.rangeEnd.length === 0) return keyRange(d.key, undefined);
  return { start: toKey(d.key), end: toKey(d.rangeEnd) };
}

function deleted(dels: readonly KeyRange[], k: string): boolean {
  return dels.some((d) => inRange(d, k));
}

/**
 * The keys one branch writes. A key may not be put twice, nor put and deleted, within one branch
 * (nested branches included); the two branches of a nested txn exclude each other, so they may
 * each put the same key.
 */
function checkDuplicates(ops: readonly RequestOp[]): Writes {
  const dels: KeyRange[] = [];
  for (const op of ops) if ('requestDeleteRange' in op) dels.push(literalRange(op.requestDeleteRange));
  const puts = new Set<string>();
  for (const op of ops) {
    if (!('requestTxn' in op)) continue;
    const then = checkDuplicates(op.requestTxn.success ?? []);
    const els = checkDuplicates(op.requestTxn.failure ?? []);
    for (const k of then.puts) {
      if (puts.has(k) || deleted(dels, k)) throw etcdError('DUPLICATE_KEY');
      puts.add(k);
    }
    for (const k of els.puts) {
      if ((puts.has(k) && !then.puts.has(k)) || deleted(dels, k)) throw etcdError('DUPLICATE_KEY');
      puts.add(k);
    }
    dels.push(...then.dels, ...els.dels);
  }
  for (const op of ops) {
    if (!('requestPut' in op)) continue;
    const k = toKey(op.requestPut.key);
    if (puts.has(k) || (dels.length > 0 && deleted(dels, k))) throw etcdError('DUPLICATE_KEY');
    puts.add(k);
  }
  return { puts, dels };
}
