// The key index: a B+ tree in key order. Keys are compared as plain strings: sorted-btree's default
// comparator handles mixed types and numbers first, which showed up as several percent of a member's CPU
// under `check perf`. (A Map beside the tree for point lookups was tried and dropped: it added about
// 60 bytes per key, taking a store of a million keys past its 600 MB budget, for no gain that a
// `check perf` run could tell from noise.)
import btree from 'sorted-btree';
import type { KeyIndex } from './key-index.js';

// sorted-btree is CommonJS with its class on `default`; Node's ESM loader hands us the exports object,
// while bundlers (vitest) may hand us the class itself.
type BTreeClass = typeof btree.default;
const BTree: BTreeClass = (btree as unknown as { default?: BTreeClass }).default ?? (btree as unknown as BTreeClass);

/** Keys are latin1 strings, so plain string order is byte order (key-range.ts). */
const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export type KeyIndexTree = btree.default<string, KeyIndex>;

/** An empty index: sorted-btree with the plain string comparator. */
export function newKeyIndexTree(): KeyIndexTree {
  return new BTree<string, KeyIndex>(undefined, compareKeys);
}
