// Small non-cryptographic hashes: entry fingerprints for the safety checks, and the running trace hash
// that the determinism self-check compares. 32-bit FNV-1a is plenty here: a collision can only hide a
// difference, never invent one.
import type { Entry } from '../raft/types.js';

export const HASH_SEED = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

export function hashBytes(b: Uint8Array, h: number = HASH_SEED): number {
  for (const x of b) {
    h ^= x;
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

export function hashString(s: string, h: number = HASH_SEED): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

/** Folds a non-negative integer (up to 2^53) into a running hash. */
export function mixInt(h: number, v: number): number {
  h ^= v >>> 0;
  h = Math.imul(h, FNV_PRIME);
  h ^= Math.floor(v / 4294967296);
  h = Math.imul(h, FNV_PRIME);
  return h >>> 0;
}

/** Folds a node id into a running hash: as a Number, which a trace hash may round (it only has to be deterministic). */
export function mixId(h: number, id: bigint): number {
  return mixInt(h, Number(id));
}

/** An entry's identity apart from its index: term, type and payload. */
export function entryFingerprint(e: Entry): number {
  return hashBytes(e.data, mixInt(mixInt(HASH_SEED, e.term), e.type === 'confChange' ? 1 : 0));
}
