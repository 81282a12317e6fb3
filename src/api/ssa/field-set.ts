// A set of field paths as structured-merge-diff keeps it: a tree whose nodes hold the path elements that
// are members (owned fields) and the children that lead deeper, both sorted in SMD's order. The set
// algebra server-side apply needs (union, intersection, difference, recursive difference) and the
// FieldsV1 JSON encoding of managedFields ({"f:spec":{"f:replicas":{}},…}, "." for a member with children).

import { comparePE, deserializePE, pathString, serializePE } from './path-element.js';
import type { Path, PathElement } from './path-element.js';

interface Node {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

// The position of pe in a sorted array, or where it would go (as -(insertion point) - 1).
function search<T>(arr: readonly T[], pe: PathElement, get: (t: T) => PathElement): number {
  let lo = 0;
  let hi = arr.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = comparePE(get(arr[mid] as T), pe);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -lo - 1;
}

const id = (pe: PathElement): PathElement => pe;
const nodePE = (n: Node): PathElement => n.pe;

export class FieldSet {
  // Both sorted by comparePE, without repeats.
  readonly #members: PathElement[];
  readonly #children: Node[];

  private constructor(members: PathElement[], children: Node[]) {
    this.#members = members;
    this.#children = children;
  }

  static empty(): FieldSet {
    return new FieldSet([], []);
  }

  static of(...paths: Path[]): FieldSet {
    const s = FieldSet.empty();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path; only while building a set (sets are otherwise treated as immutable). */
  insert(path: Path): void {
    if (path.length === 0) return;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- walking down the tree
    let s: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) s = s.#descend(path[i] as PathElement);
    const last = path[path.length - 1] as PathElement;
    const at = search(s.#members, last, id);
    if (at < 0) s.#members.splice(-at - 1, 0, last);
  }

  /** Adds a member at this level (building only). */
  addMember(pe: PathElement): void {
    const m = this.#members;
    // Builders mostly add in order: appending needs one comparison.
    const last = m[m.length - 1];
    if (last === undefined || comparePE(last, pe) < 0) {
      m.push(pe);
      return;
    }
    const at = search(m, pe, id);
    if (at < 0) m.splice(-at - 1, 0, pe);
  }

  /** Puts a whole subtree under pe, merging with what is there (building only). */
  attach(pe: PathElement, sub: FieldSet): void {
    const c = this.#children;
    const last = c[c.length - 1];
    if (last === undefined || comparePE(last.pe, pe) < 0) {
      c.push({ pe, set: sub });
      return;
    }
    const at = search(this.#children, pe, nodePE);
    if (at >= 0) {
      const cur = this.#children[at] as Node;
      this.#children[at] = { pe, set: cur.set.union(sub) };
    } else {
      this.#children.splice(-at - 1, 0, { pe, set: sub });
    }
  }

  #descend(pe: PathElement): FieldSet {
    const at = search(this.#children, pe, nodePE);
    if (at >= 0) return (this.#children[at] as Node).set;
    const set = FieldSet.empty();
    this.#children.splice(-at - 1, 0, { pe, set });
    return set;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- walking down the tree
    let s: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && s !== undefined; i++) s = s.#child(path[i] as PathElement);
    return s !== undefined && search(s.#members, path[path.length - 1] as PathElement, id) >= 0;
  }

  #child(pe: PathElement): FieldSet | undefined {
    const at = search(this.#children, pe, nodePE);
    return at >= 0 ? (this.#children[at] as Node).set : undefined;
  }

  hasMember(pe: PathElement): boolean {
    return search(this.#members, pe, id) >= 0;
  }

  /** The subset under one path element (WithPrefix), empty if there is none. */
  withPrefix(pe: PathElement): FieldSet {
    return this.#child(pe) ?? FieldSet.empty();
  }

  // Invariant: no child set is empty (builders and operations drop empty subtrees), so emptiness is
  // decided at the top.
  isEmpty(): boolean {
    return this.#members.length === 0 && this.#children.length === 0;
  }

  size(): number {
    return this.#members.length + this.#children.reduce((n, c) => n + c.set.size(), 0);
  }

  members(): readonly PathElement[] {
    return this.#members;
  }

  children(): readonly { readonly pe: PathElement; readonly set: FieldSet }[] {
    return this.#children;
  }

  union(o: FieldSet): FieldSet {
    return new FieldSet(
      mergeSorted(this.#members, o.#members, id, (a) => a),
      mergeSorted(this.#children, o.#children, nodePE, (a, b) => (b === undefined ? a : { pe: a.pe, set: a.set.union(b.set) })),
    );
  }

  intersection(o: FieldSet): FieldSet {
    const members = this.#members.filter((m) => o.hasMember(m));
    const children: Node[] = [];
    for (const c of this.#children) {
      const oc = o.#child(c.pe);
      if (oc === undefined) continue;
      const r = c.set.intersection(oc);
      if (!r.isEmpty()) children.push({ pe: c.pe, set: r });
    }
    return new FieldSet(members, children);
  }

  /** Members of o are removed from this level; o's children are subtracted from ours (Difference). */
  difference(o: FieldSet): FieldSet {
    return this.#subtract(o, false);
  }

  /** Like difference, but a member of o also removes everything under it (RecursiveDifference). */
  recursiveDifference(o: FieldSet): FieldSet {
    return this.#subtract(o, true);
  }

  #subtract(o: FieldSet, recursive: boolean): FieldSet {
    const members = this.#members.filter((m) => !o.hasMember(m));
    const children: Node[] = [];
    for (const c of this.#children) {
      if (recursive && o.hasMember(c.pe)) continue;
      const oc = o.#child(c.pe);
      if (oc === undefined) {
        children.push(c);
        continue;
      }
      const d = c.set.#subtract(oc, recursive);
      if (!d.isEmpty()) children.push({ pe: c.pe, set: d });
    }
    return new FieldSet(members, children);
  }

  equals(o: FieldSet): boolean {
    if (this.#members.length !== o.#members.length || this.#children.length !== o.#children.length) return false;
    for (let i = 0; i < this.#members.length; i++) if (comparePE(this.#members[i] as PathElement, o.#members[i] as PathElement) !== 0) return false;
    for (let i = 0; i < this.#children.length; i++) {
      const a = this.#children[i] as Node;
      const b = o.#children[i] as Node;
      if (comparePE(a.pe, b.pe) !== 0 || !a.set.equals(b.set)) return false;
    }
    return true;
  }

  /** Every member path: this level's members first, then each child's, in order (Iterate). */
  paths(prefix: Path = []): Path[] {
    const out: Path[] = this.#members.map((m) => [...prefix, m]);
    for (const c of this.#children) out.push(...c.set.paths([...prefix, c.pe]));
    return out;
  }

  toString(): string {
    return this.paths().map(pathString).join('\n');
  }

  /** The FieldsV1 JSON object of this set. */
  toFieldsV1(): Record<string, unknown> {
    return this.#emit(false);
  }

  #emit(self: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (self && (this.#members.length > 0 || this.#children.length > 0)) out['.'] = {};
    let mi = 0;
    let ci = 0;
    const children = this.#children;
    while (mi < this.#members.length || ci < children.length) {
      const m = this.#members[mi];
      const c = children[ci];
      const cmp = m === undefined ? 1 : c === undefined ? -1 : comparePE(m, c.pe);
      if (cmp < 0 && m !== undefined) {
        out[serializePE(m)] = {};
        mi++;
      } else if (cmp > 0 && c !== undefined) {
        out[serializePE(c.pe)] = c.set.#emit(false);
        ci++;
      } else if (c !== undefined) {
        out[serializePE(c.pe)] = c.set.#emit(true);
        mi++;
        ci++;
      }
    }
    return out;
  }

  /** Reads a FieldsV1 JSON object; unknown element types are skipped, as SMD skips them. */
  static fromFieldsV1(v: unknown): FieldSet {
    const { set } = read(v);
    return set ?? FieldSet.empty();
  }
}

function read(v: unknown): { set: FieldSet | undefined; member: boolean } {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('FieldsV1: expected an object');
  let set: FieldSet | undefined;
  let member = false;
  const obj = v as Record<string, unknown>;
  for (const k in obj) {
    const child = obj[k];
    if (k === '.') {
      member = true;
      continue;
    }
    const pe = deserializePE(k);
    if (pe === undefined) continue;
    const sub = read(child);
    set ??= FieldSet.empty();
    if (sub.member) set.addMember(pe);
    if (sub.set !== undefined) set.attach(pe, sub.set);
  }
  // An empty object is a member with nothing under it.
  return { set, member: member || set === undefined };
}

function mergeSorted<T>(a: readonly T[], b: readonly T[], key: (t: T) => PathElement, both: (x: T, y: T | undefined) => T): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const c = comparePE(key(a[i] as T), key(b[j] as T));
    if (c < 0) out.push(a[i++] as T);
    else if (c > 0) out.push(b[j++] as T);
    else out.push(both(a[i++] as T, b[j++] as T));
  }
  while (i < a.length) out.push(a[i++] as T);
  while (j < b.length) out.push(b[j++] as T);
  return out;
}
