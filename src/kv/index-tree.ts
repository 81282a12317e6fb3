// The key index: a B+ tree in key order, for ranges, with a Map beside it for the point lookups that every
// put, txn compare and single-key read makes. A Map lookup hashes the key once; a tree walk compares it
// with a dozen or more keys that often share a long prefix, which showed up as several percent of a
// member's CPU under `check perf`.
import btree from 'sorted-btree';
import type { KeyIndex } from './key-index.js';

// sorted-btree is CommonJS with its class on `default`; Node's ESM loader hands us the exports object,
// while bundlers (vitest) may hand us the class itself.
type BTreeClass = typeof btree.default;
const BTree: BTreeClass = (btree as unknown as { default?: BTreeClass }).default ?? (btree as unknown as BTreeClass);

/** Keys are latin1 strings, so plain string order is byte order (key-range.ts). */
const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class KeyIndexTree {
  private readonly tree = new BTree<string, KeyIndex>(undefined, compareKeys);
  private readonly byKey = new Map<string, KeyIndex>();

  get(key: string): KeyIndex | undefined {
    return this.byKey.get(key);
  }

  set(key: string, ki: KeyIndex): void {
    this.byKey.set(key, ki);
    this.tree.set(key, ki);
  }

  delete(key: string): void {
    this.byKey.delete(key);
    this.tree.delete(key);
  }

  clear(): void {
    this.byKey.clear();
    this.tree.clear();
  }

  /** Entries in key order, from `from` (inclusive) when given. */
  entries(from?: string): IterableIterator<[string, KeyIndex]> {
    return this.tree.entries(from);
  }

  get size(): number {
    return this.byKey.size;
  }
}
