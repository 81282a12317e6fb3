// Typed values for server-side apply: structured-merge-diff's walkers over a JSON value and the schema
// model — validation (with SMD's messages: "field not declared in schema", a list item that "omits key
// field"), the field set a value sets, the comparison of two values (added, modified, removed fields),
// the merge of an applied configuration onto a live object (associative lists merged by key, in SMD's
// order; atomic lists and maps replaced) and the removal of a set of fields. Absent is undefined; a JSON
// null is a value, as SMD distinguishes them.

import { goSprintV } from '../field-errors.js';
import type { SchemaRegistry } from '../schema/registry.js';
import type { Field, Schema } from '../schema/schema.js';
import { FieldSet } from './field-set.js';
import { comparePE, fieldPE, indexPE, keyPE, peString, valuePE } from './path-element.js';
import type { Path, PathElement } from './path-element.js';

type JSONObject = Record<string, unknown>;

/** SMD's view of a schema node. */
type Atom =
  | { readonly t: 'scalar'; readonly scalar: 'string' | 'numeric' | 'boolean' | 'untyped' }
  | { readonly t: 'list'; readonly items: Schema; readonly associative: boolean; readonly keys: readonly string[] }
  | {
      readonly t: 'map';
      /** Declared fields of a struct; undefined for a plain map. */
      readonly fields: Readonly<Record<string, Field>> | undefined;
      /** The type of undeclared keys; undefined for a struct, where they are errors. */
      readonly values: Schema | undefined;
      readonly atomic: boolean;
    };

const deduced: Schema = { kind: 'any' };

const isObject = (v: unknown): v is JSONObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export class ValidationError extends Error {
  readonly code = 'SSA_INVALID_VALUE';
  readonly errors: readonly { readonly path: string; readonly message: string }[];
  constructor(errors: readonly { readonly path: string; readonly message: string }[]) {
    const one = (e: { path: string; message: string }): string => (e.path === '' ? e.message : `${e.path}: ${e.message}`);
    super(errors.length === 1 ? one(errors[0] as { path: string; message: string }) : ['errors:', ...errors.map((e) => `  ${one(e)}`)].join('\n'));
    this.name = 'ValidationError';
    this.errors = errors;
  }
}

interface VError {
  path: string;
  message: string;
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a as JSONObject);
  const kb = Object.keys(b as JSONObject);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !jsonEqual((a as JSONObject)[k], (b as JSONObject)[k])) return false;
  }
  return true;
}

/** The typed operations on values of one schema registry. */
export class Typed {
  readonly #reg: SchemaRegistry;
  readonly #atoms = new WeakMap<Schema, Atom>();

  constructor(reg: SchemaRegistry) {
    this.#reg = reg;
  }

  #atom(s: Schema, v: unknown): Atom {
    if (s.kind === 'any') {
      // Untyped data is "deduced" from the value: scalars, atomic lists, granular maps.
      if (Array.isArray(v)) return { t: 'list', items: deduced, associative: false, keys: [] };
      if (v === null || v === undefined || typeof v === 'object') return { t: 'map', fields: undefined, values: deduced, atomic: false };
      return { t: 'scalar', scalar: 'untyped' };
    }
    const cached = this.#atoms.get(s);
    if (cached !== undefined) return cached;
    const r = this.#reg.resolve(s);
    let a: Atom;
    switch (r.kind) {
      case 'string':
        a = { t: 'scalar', scalar: 'string' };
        break;
      case 'integer':
      case 'number':
        a = { t: 'scalar', scalar: 'numeric' };
        break;
      case 'boolean':
        a = { t: 'scalar', scalar: 'boolean' };
        break;
      case 'quantity':
      case 'int-or-string':
      case 'time':
        a = { t: 'scalar', scalar: 'untyped' };
        break;
      case 'any':
        return this.#atom(r, v);
      case 'list':
        a = { t: 'list', items: r.items, associative: r.listType !== 'atomic', keys: r.listType === 'map' ? (r.mapKeys ?? []) : [] };
        break;
      case 'map':
        a = { t: 'map', fields: undefined, values: r.values, atomic: r.mapType === 'atomic' };
        break;
      case 'struct':
        a = { t: 'map', fields: r.fields, values: undefined, atomic: r.structType === 'atomic' };
        break;
    }
    this.#atoms.set(s, a);
    return a;
  }

  #fieldSchema(a: Atom & { t: 'map' }, key: string): Schema | undefined {
    return a.fields?.[key]?.schema ?? a.values;
  }

  // listItemToPathElement: the key of an item of an associative list.
  #itemPE(a: Atom & { t: 'list' }, item: unknown): PathElement {
    if (a.keys.length > 0) {
      if (item === null) throw new Error('associative list with keys may not have a null element');
      if (!isObject(item)) throw new Error('associative list with keys may not have non-map elements');
      const st = this.#reg.struct(a.items);
      const fields: [string, unknown][] = [];
      for (const k of a.keys) {
        if (Object.prototype.hasOwnProperty.call(item, k)) fields.push([k, item[k]]);
        else if (st?.fields[k]?.default !== undefined) fields.push([k, st.fields[k]?.default]);
        else throw new Error(`associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`);
      }
      return keyPE(fields);
    }
    if (isObject(item)) throw new Error("associative list without keys has an element that's a map type");
    if (Array.isArray(item)) throw new Error('not supported: associative list with lists as elements');
    if (item === null) throw new Error("associative list without keys has an element that's an explicit null");
    return valuePE(item);
  }

  /** Checks a value against its schema; throws ValidationError with SMD's messages. */
  validate(schema: Schema, value: unknown, allowDuplicates: boolean): void {
    const errs: VError[] = [];
    this.#validate(schema, value, '', allowDuplicates, errs);
    if (errs.length > 0) throw new ValidationError(errs);
  }

  #validate(s: Schema, v: unknown, path: string, dups: boolean, errs: VError[]): void {
    if (v === undefined) return;
    const a = this.#atom(s, v);
    if (a.t === 'scalar') {
      if (v === null) return;
      const bad =
        (a.scalar === 'string' && typeof v !== 'string') ||
        (a.scalar === 'numeric' && typeof v !== 'number') ||
        (a.scalar === 'boolean' && typeof v !== 'boolean') ||
        (a.scalar === 'untyped' && typeof v === 'object');
      if (bad) {
        const what = a.scalar === 'numeric' ? `expected numeric (int or float), got ${Array.isArray(v) ? '[]interface {}' : isObject(v) ? 'map[string]interface {}' : typeof v === 'boolean' ? 'bool' : 'string'}` : a.scalar === 'untyped' ? `expected any scalar, got &{${goSprintV(v)}}` : `expected ${a.scalar}, got &{${goSprintV(v)}}`;
        errs.push({ path, message: what });
      }
      return;
    }
    if (a.t === 'list') {
      if (v === null) return;
      if (!Array.isArray(v)) {
        errs.push({ path, message: `expected list, got &{${goSprintV(v)}}` });
        return;
      }
      const seen: PathElement[] = [];
      for (let i = 0; i < v.length; i++) {
        let pe: PathElement;
        if (!a.associative) pe = indexPE(i);
        else {
          try {
            pe = this.#itemPE(a, v[i]);
          } catch (e) {
            errs.push({ path, message: `element ${i}: ${(e as Error).message}` });
            return;
          }
          if (!dups && seen.some((x) => comparePE(x, pe) === 0)) errs.push({ path, message: `duplicate entries for key ${peString(pe)}` });
          seen.push(pe);
        }
        this.#validate(a.items, v[i], path + peString(pe), dups, errs);
      }
      return;
    }
    if (v === null) return;
    if (!isObject(v)) {
      errs.push({ path, message: `expected map, got &{${goSprintV(v)}}` });
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      const fs = this.#fieldSchema(a, k);
      if (fs === undefined) {
        errs.push({ path: `${path}.${k}`, message: 'field not declared in schema' });
        return;
      }
      this.#validate(fs, x, `${path}.${k}`, dups, errs);
    }
  }

  /** The fields a value sets (ToFieldSet). */
  toFieldSet(schema: Schema, value: unknown): FieldSet {
    const set = FieldSet.empty();
    this.#toSet(schema, value, [], set);
    return set;
  }

  #toSet(s: Schema, v: unknown, path: PathElement[], set: FieldSet): void {
    const a = this.#atom(s, v);
    if (a.t === 'scalar') {
      set.insert(path);
      return;
    }
    if (a.t === 'list') {
      if (!a.associative) {
        set.insert(path);
        return;
      }
      if (!Array.isArray(v)) return;
      const pes = v.map((item) => this.#itemPE(a, item));
      // Items whose key repeats are owned as a whole, not field by field.
      const dup = new Set<number>();
      pes.forEach((pe, i) => {
        for (let j = 0; j < i; j++) if (comparePE(pes[j] as PathElement, pe) === 0) dup.add(j).add(i);
      });
      const inserted: PathElement[] = [];
      pes.forEach((pe, i) => {
        if (dup.has(i) && !inserted.some((x) => comparePE(x, pe) === 0)) {
          set.insert([...path, pe]);
          inserted.push(pe);
        }
      });
      pes.forEach((pe, i) => {
        if (dup.has(i)) return;
        const p = [...path, pe];
        this.#toSet(a.items, v[i], p, set);
        set.insert(p);
      });
      return;
    }
    if (a.atomic) {
      set.insert(path);
      return;
    }
    if (!isObject(v)) return;
    for (const [k, x] of Object.entries(v)) {
      const p = [...path, fieldPE(k)];
      const fs = this.#fieldSchema(a, k) ?? deduced;
      this.#toSet(fs, x, p, set);
      if (x === null || (isObject(x) && Object.keys(x).length === 0) || a.fields?.[k] === undefined) set.insert(p);
    }
  }

  /** What changed from lhs to rhs, as SMD's Compare reports it. */
  compare(schema: Schema, lhs: unknown, rhs: unknown): { removed: FieldSet; modified: FieldSet; added: FieldSet } {
    const c = { removed: FieldSet.empty(), modified: FieldSet.empty(), added: FieldSet.empty() };
    this.#compare(schema, lhs, rhs, [], c);
    return c;
  }

  #compare(s: Schema, lhs: unknown, rhs: unknown, path: PathElement[], c: { removed: FieldSet; modified: FieldSet; added: FieldSet }): void {
    const la = lhs === undefined ? undefined : this.#atom(s, lhs);
    const ra = rhs === undefined ? undefined : this.#atom(s, rhs);
    const leaf = (): void => {
      if (lhs === undefined) c.added.insert(path);
      else if (rhs === undefined) c.removed.insert(path);
      else if (!jsonEqual(lhs, rhs)) c.modified.insert(path);
    };
    let inLeaf = false;
    const visit = (a: Atom, l: unknown, r: unknown): void => {
      if (a.t === 'scalar') {
        leaf();
        inLeaf = true;
        return;
      }
      if (a.t === 'list') {
        const ll = Array.isArray(l) ? l : undefined;
        const rl = Array.isArray(r) ? r : undefined;
        if (!a.associative || ((ll === undefined || ll.length === 0) && (rl === undefined || rl.length === 0))) {
          leaf();
          inLeaf = true;
          return;
        }
        this.#compareItems(a, ll ?? [], rl ?? [], path, c);
        return;
      }
      const lm = isObject(l) ? l : undefined;
      const rm = isObject(r) ? r : undefined;
      const empty = (m: JSONObject | undefined): boolean => m === undefined || Object.keys(m).length === 0;
      if (a.atomic || (empty(lm) && empty(rm))) {
        leaf();
        inLeaf = true;
        return;
      }
      const keys = new Set([...Object.keys(lm ?? {}), ...Object.keys(rm ?? {})]);
      for (const k of keys) {
        const fs = this.#fieldSchema(a, k) ?? deduced;
        path.push(fieldPE(k));
        this.#compare(fs, lm?.[k], rm?.[k], path, c);
        path.pop();
      }
    };
    if (ra === undefined) visit(la as Atom, lhs, rhs);
    else if (la === undefined || la.t === ra.t) visit(ra, lhs, rhs);
    else {
      // Values of different shapes (untyped data): SMD walks both views; the second decides.
      visit(la, lhs, rhs);
      inLeaf = false;
      visit(ra, lhs, rhs);
    }
    if (!inLeaf) {
      if (lhs === undefined) c.added.insert(path);
      else if (rhs === undefined) c.removed.insert(path);
    }
  }

  #compareItems(a: Atom & { t: 'list' }, lhs: unknown[], rhs: unknown[], path: PathElement[], c: { removed: FieldSet; modified: FieldSet; added: FieldSet }): void {
    const order: PathElement[] = [];
    const lv = new Map<number, unknown[]>();
    const rv = new Map<number, unknown[]>();
    const slot = (pe: PathElement): number => {
      const at = order.findIndex((x) => comparePE(x, pe) === 0);
      if (at >= 0) return at;
      order.push(pe);
      return order.length - 1;
    };
    for (const item of lhs) {
      const i = slot(this.#itemPE(a, item));
      lv.set(i, [...(lv.get(i) ?? []), item]);
    }
    for (const item of rhs) {
      const i = slot(this.#itemPE(a, item));
      rv.set(i, [...(rv.get(i) ?? []), item]);
    }
    order.forEach((pe, i) => {
      const l = lv.get(i) ?? [];
      const r = rv.get(i) ?? [];
      path.push(pe);
      if (l.length <= 1 && r.length <= 1) this.#compare(a.items, l[0], r[0], path, c);
      else if (l.length >= 2 && r.length >= 2) {
        if (!jsonEqual(l, r)) c.modified.insert(path);
      } else if (l.length >= 2) {
        if (r.length > 0) this.#compare(a.items, undefined, r[0], path, c);
        c.removed.insert(path);
      } else {
        if (l.length > 0) this.#compare(a.items, l[0], undefined, path, c);
        c.added.insert(path);
      }
      path.pop();
    });
  }

  /** Merges rhs (an applied configuration) onto lhs (the live object), as SMD's Merge does. */
  merge(schema: Schema, lhs: unknown, rhs: unknown): unknown {
    return this.#merge(schema, lhs, rhs);
  }

  #merge(s: Schema, lhs: unknown, rhs: unknown): unknown {
    const keepRHS = (): unknown => (rhs !== undefined ? rhs : lhs);
    const a = rhs !== undefined ? this.#atom(s, rhs) : this.#atom(s, lhs);
    if (a.t === 'scalar') return keepRHS();
    if (a.t === 'list') {
      const ll = Array.isArray(lhs) ? lhs : undefined;
      const rl = Array.isArray(rhs) ? rhs : undefined;
      if (!a.associative || ((ll === undefined || ll.length === 0) && (rl === undefined || rl.length === 0))) return keepRHS();
      if (ll === undefined && rl === undefined) return undefined;
      return this.#mergeItems(a, ll ?? [], rl ?? []);
    }
    const lm = isObject(lhs) ? lhs : undefined;
    const rm = isObject(rhs) ? rhs : undefined;
    const empty = (m: JSONObject | undefined): boolean => m === undefined || Object.keys(m).length === 0;
    if (a.atomic || (empty(lm) && empty(rm))) return keepRHS();
    if (lm === undefined && rm === undefined) return undefined;
    const out: JSONObject = {};
    for (const k of new Set([...Object.keys(lm ?? {}), ...Object.keys(rm ?? {})])) {
      const v = this.#merge(this.#fieldSchema(a, k) ?? deduced, lm?.[k], rm?.[k]);
      if (v !== undefined) out[k] = v;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }

  // visitListItems of SMD's merging walker: live items keep their places; applied items shared with
  // the live list follow the applied order, and new applied items go where the applied list puts them.
  #mergeItems(a: Atom & { t: 'list' }, lhs: unknown[], rhs: unknown[]): unknown[] | undefined {
    const rPEs = rhs.map((x) => this.#itemPE(a, x));
    const rSeen: { pe: PathElement; value: unknown }[] = [];
    for (let i = 0; i < rhs.length; i++) {
      const pe = rPEs[i] as PathElement;
      if (rSeen.some((x) => comparePE(x.pe, pe) === 0)) throw new ValidationError([{ path: '', message: `duplicate entries for key ${peString(pe)}` }]);
      rSeen.push({ pe, value: rhs[i] });
    }
    const lPEs = lhs.map((x) => this.#itemPE(a, x));
    // A key repeated on the live side merges as if absent there (SMD keeps a nil for it).
    const lSeen: { pe: PathElement; value: unknown }[] = [];
    for (let i = 0; i < lhs.length; i++) {
      const pe = lPEs[i] as PathElement;
      const at = lSeen.findIndex((x) => comparePE(x.pe, pe) === 0);
      if (at >= 0) (lSeen[at] as { value: unknown }).value = undefined;
      else lSeen.push({ pe, value: lhs[i] });
    }
    const getL = (pe: PathElement): { found: boolean; value: unknown } => {
      const x = lSeen.find((e) => comparePE(e.pe, pe) === 0);
      return x === undefined ? { found: false, value: undefined } : { found: true, value: x.value };
    };
    const getR = (pe: PathElement): { found: boolean; value: unknown } => {
      const x = rSeen.find((e) => comparePE(e.pe, pe) === 0);
      return x === undefined ? { found: false, value: undefined } : { found: true, value: x.value };
    };
    const shared = rPEs.filter((pe) => getL(pe).found);
    let nextShared: PathElement | undefined = shared.shift();
    const mergedRHS: PathElement[] = [];
    const isMerged = (pe: PathElement): boolean => mergedRHS.some((x) => comparePE(x, pe) === 0);
    const out: unknown[] = [];
    const push = (pe: PathElement, l: unknown, r: unknown): void => {
      const v = this.#merge(a.items, l, r);
      if (v !== undefined) out.push(v);
    };
    let li = 0;
    let ri = 0;
    while (li < lPEs.length || ri < rPEs.length) {
      if (li < lPEs.length && ri < rPEs.length) {
        const pe = lPEs[li] as PathElement;
        if (comparePE(pe, rPEs[ri] as PathElement) === 0) {
          mergedRHS.push(pe);
          push(pe, getL(pe).value, getR(pe).value);
          li++;
          ri++;
          nextShared = shared.shift();
          continue;
        }
        if (getR(pe).found && nextShared !== undefined && comparePE(nextShared, pe) !== 0) {
          li++;
          continue;
        }
      }
      if (li < lPEs.length) {
        const pe = lPEs[li] as PathElement;
        if (!getR(pe).found) {
          push(pe, lhs[li], undefined);
          li++;
          continue;
        } else if (isMerged(pe)) {
          li++;
        }
      }
      if (ri < rPEs.length) {
        const pe = rPEs[ri] as PathElement;
        mergedRHS.push(pe);
        push(pe, getL(pe).value, getR(pe).value);
        ri++;
        if (nextShared !== undefined && comparePE(nextShared, pe) === 0) nextShared = shared.shift();
      }
    }
    return out.length > 0 ? out : undefined;
  }

  /** The value without the fields of `set` (RemoveItems). */
  removeItems(schema: Schema, value: unknown, set: FieldSet): unknown {
    return this.#remove(schema, value, set);
  }

  #remove(s: Schema, v: unknown, set: FieldSet): unknown {
    const a = this.#atom(s, v);
    if (a.t === 'scalar') return v;
    if (a.t === 'list') {
      if (!Array.isArray(v) || v.length === 0) return null;
      if (!a.associative) return null;
      const out: unknown[] = [];
      for (const item of v) {
        const pe = this.#itemPE(a, item);
        if (set.has([pe])) continue;
        const sub = set.withPrefix(pe);
        out.push(sub.isEmpty() ? item : this.#remove(a.items, item, sub));
      }
      return out.length > 0 ? out : null;
    }
    if (!isObject(v) || Object.keys(v).length === 0) return null;
    if (a.atomic) return null;
    const out: JSONObject = {};
    for (const [k, x] of Object.entries(v)) {
      const pe = fieldPE(k);
      if (set.has([pe])) continue;
      const sub = set.withPrefix(pe);
      out[k] = sub.isEmpty() ? x : this.#remove(this.#fieldSchema(a, k) ?? deduced, x, sub);
    }
    return Object.keys(out).length > 0 ? out : null;
  }

  /** Adds as members the declared struct fields that the set only has children under. */
  ensureNamedFieldsAreMembers(schema: Schema, set: FieldSet): FieldSet {
    const out = FieldSet.empty();
    this.#ensure(schema, set, [], out);
    return out;
  }

  #ensure(s: Schema | undefined, set: FieldSet, prefix: Path, out: FieldSet): void {
    const a = s === undefined ? undefined : this.#atom(s, undefined);
    for (const m of set.members()) out.insert([...prefix, m]);
    for (const c of set.children()) {
      let child: Schema | undefined;
      if (c.pe.kind === 'field' && a?.t === 'map') {
        if (a.fields?.[c.pe.name] !== undefined) out.insert([...prefix, c.pe]);
        child = this.#fieldSchema(a, c.pe.name);
      } else if (c.pe.kind === 'key' && a?.t === 'list') {
        child = a.items;
      }
      this.#ensure(child, c.set, [...prefix, c.pe], out);
    }
  }
}
