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
import { comparePE, fieldPE, indexPE, keyPE, peString, serializePE, valuePE } from './path-element.js';
import type { PathElement } from './path-element.js';

type JSONObject = Record<string, unknown>;

/** SMD's view of a schema node. */
type Atom =
  | { readonly t: 'scalar'; readonly scalar: 'string' | 'numeric' | 'boolean' | 'untyped' }
  | {
      readonly t: 'list';
      readonly items: Schema;
      readonly associative: boolean;
      readonly keys: readonly string[];
      /** Defaults of the key fields, which stand in for a missing key (ContainerPort.protocol: TCP). */
      readonly keyDefaults: readonly unknown[];
    }
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

// Whether a map is absent or has no keys, without building its key list.
function isEmptyMap(m: JSONObject | undefined): boolean {
  if (m === undefined) return true;
  for (const _ in m) return false;
  return true;
}

// Calls fn for each key of lhs, then for each key only rhs has (MapZip).
function zipKeys(lhs: JSONObject | undefined, rhs: JSONObject | undefined, fn: (k: string) => void): void {
  if (lhs !== undefined) for (const k in lhs) fn(k);
  if (rhs !== undefined) for (const k in rhs) if (lhs === undefined || !Object.prototype.hasOwnProperty.call(lhs, k)) fn(k);
}

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

/** SMD's value equality: deep, with map keys in any order. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a as JSONObject);
  const kb = Object.keys(b as JSONObject);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !valuesEqual((a as JSONObject)[k], (b as JSONObject)[k])) return false;
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
      if (Array.isArray(v)) return { t: 'list', items: deduced, associative: false, keys: [], keyDefaults: [] };
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
      case 'list': {
        const keys = r.listType === 'map' ? (r.mapKeys ?? []) : [];
        const st = keys.length > 0 ? this.#reg.struct(r.items) : undefined;
        a = { t: 'list', items: r.items, associative: r.listType !== 'atomic', keys, keyDefaults: keys.map((k) => st?.fields[k]?.default) };
        break;
      }
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
      const fields: [string, unknown][] = [];
      for (let i = 0; i < a.keys.length; i++) {
        const k = a.keys[i] as string;
        if (Object.prototype.hasOwnProperty.call(item, k)) fields.push([k, item[k]]);
        else if (a.keyDefaults[i] !== undefined) fields.push([k, a.keyDefaults[i]]);
        else throw new Error(`associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`);
      }
      return fields.length === 1 ? { kind: 'key', fields } : keyPE(fields);
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
    const root = FieldSet.empty();
    this.#toSet(schema, value, root, undefined);
    return root;
  }

  // The fields of value v, found at parent/pe (pe undefined at the root).
  #toSet(s: Schema, v: unknown, parent: FieldSet, pe: PathElement | undefined): void {
    const a = this.#atom(s, v);
    if (a.t === 'scalar' || (a.t === 'list' && !a.associative) || (a.t === 'map' && a.atomic)) {
      if (pe !== undefined) parent.addMember(pe);
      return;
    }
    if (a.t === 'list') {
      if (!Array.isArray(v)) return;
      const node = pe === undefined ? parent : FieldSet.empty();
      const pes = v.map((item) => this.#itemPE(a, item));
      // Items whose key repeats are owned as a whole, not field by field.
      const count = new Map<string, number>();
      const keys = pes.map((p) => serializePE(p));
      for (const k of keys) count.set(k, (count.get(k) ?? 0) + 1);
      for (let i = 0; i < v.length; i++) {
        const p = pes[i] as PathElement;
        node.addMember(p);
        if ((count.get(keys[i] as string) ?? 0) > 1) continue;
        this.#toSet(a.items, v[i], node, p);
      }
      if (pe !== undefined && !node.isEmpty()) parent.attach(pe, node);
      return;
    }
    if (!isObject(v)) return;
    const node = pe === undefined ? parent : FieldSet.empty();
    for (const k in v) {
      const x = v[k];
      const p = fieldPE(k);
      const declared = a.fields?.[k] !== undefined;
      this.#toSet(this.#fieldSchema(a, k) ?? deduced, x, node, p);
      if (x === null || (isObject(x) && isEmptyMap(x)) || !declared) node.addMember(p);
    }
    if (pe !== undefined && !node.isEmpty()) parent.attach(pe, node);
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
      else if (!valuesEqual(lhs, rhs)) c.modified.insert(path);
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
      if (a.atomic || (isEmptyMap(lm) && isEmptyMap(rm))) {
        leaf();
        inLeaf = true;
        return;
      }
      zipKeys(lm, rm, (k) => {
        const fs = this.#fieldSchema(a, k) ?? deduced;
        path.push(fieldPE(k));
        this.#compare(fs, lm?.[k], rm?.[k], path, c);
        path.pop();
      });
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
    const slots = new Map<string, { pe: PathElement; l: unknown[]; r: unknown[] }>();
    const slot = (pe: PathElement): { pe: PathElement; l: unknown[]; r: unknown[] } => {
      const k = serializePE(pe);
      let e = slots.get(k);
      if (e === undefined) {
        e = { pe, l: [], r: [] };
        slots.set(k, e);
      }
      return e;
    };
    for (const item of lhs) slot(this.#itemPE(a, item)).l.push(item);
    for (const item of rhs) slot(this.#itemPE(a, item)).r.push(item);
    for (const { pe, l, r } of slots.values()) {
      path.push(pe);
      if (l.length <= 1 && r.length <= 1) this.#compare(a.items, l[0], r[0], path, c);
      else if (l.length >= 2 && r.length >= 2) {
        if (!valuesEqual(l, r)) c.modified.insert(path);
      } else if (l.length >= 2) {
        if (r.length > 0) this.#compare(a.items, undefined, r[0], path, c);
        c.removed.insert(path);
      } else {
        if (l.length > 0) this.#compare(a.items, l[0], undefined, path, c);
        c.added.insert(path);
      }
      path.pop();
    }
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
    if (a.atomic || (isEmptyMap(lm) && isEmptyMap(rm))) return keepRHS();
    if (lm === undefined && rm === undefined) return undefined;
    const out: JSONObject = {};
    let any = false;
    zipKeys(lm, rm, (k) => {
      const v = this.#merge(this.#fieldSchema(a, k) ?? deduced, lm?.[k], rm?.[k]);
      if (v !== undefined) {
        out[k] = v;
        any = true;
      }
    });
    return any ? out : undefined;
  }

  // visitListItems of SMD's merging walker: live items keep their places; applied items shared with
  // the live list follow the applied order, and new applied items go where the applied list puts them.
  #mergeItems(a: Atom & { t: 'list' }, lhs: unknown[], rhs: unknown[]): unknown[] | undefined {
    const rKeys = rhs.map((x) => serializePE(this.#itemPE(a, x)));
    const rSeen = new Map<string, unknown>();
    for (let i = 0; i < rhs.length; i++) {
      const k = rKeys[i] as string;
      if (rSeen.has(k)) throw new ValidationError([{ path: '', message: `duplicate entries for key ${peString(this.#itemPE(a, rhs[i]))}` }]);
      rSeen.set(k, rhs[i]);
    }
    const lKeys = lhs.map((x) => serializePE(this.#itemPE(a, x)));
    // A key repeated on the live side merges as if absent there (SMD keeps a nil for it).
    const lSeen = new Map<string, unknown>();
    for (let i = 0; i < lhs.length; i++) {
      const k = lKeys[i] as string;
      lSeen.set(k, lSeen.has(k) ? undefined : lhs[i]);
    }
    const shared = rKeys.filter((k) => lSeen.has(k));
    let nextShared: string | undefined = shared.shift();
    const mergedRHS = new Set<string>();
    const out: unknown[] = [];
    const push = (l: unknown, r: unknown): void => {
      const v = this.#merge(a.items, l, r);
      if (v !== undefined) out.push(v);
    };
    let li = 0;
    let ri = 0;
    while (li < lKeys.length || ri < rKeys.length) {
      if (li < lKeys.length && ri < rKeys.length) {
        const k = lKeys[li] as string;
        if (k === rKeys[ri]) {
          mergedRHS.add(k);
          push(lSeen.get(k), rSeen.get(k));
          li++;
          ri++;
          nextShared = shared.shift();
          continue;
        }
        if (rSeen.has(k) && nextShared !== undefined && nextShared !== k) {
          li++;
          continue;
        }
      }
      if (li < lKeys.length) {
        const k = lKeys[li] as string;
        if (!rSeen.has(k)) {
          push(lhs[li], undefined);
          li++;
          continue;
        } else if (mergedRHS.has(k)) {
          li++;
        }
      }
      if (ri < rKeys.length) {
        const k = rKeys[ri] as string;
        mergedRHS.add(k);
        push(lSeen.get(k), rSeen.get(k));
        ri++;
        if (nextShared !== undefined && nextShared === k) nextShared = shared.shift();
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
    if (!isObject(v) || isEmptyMap(v)) return null;
    if (a.atomic) return null;
    const out: JSONObject = {};
    for (const [k, x] of Object.entries(v)) {
      const pe = fieldPE(k);
      if (set.has([pe])) continue;
      const sub = set.withPrefix(pe);
      out[k] = sub.isEmpty() ? x : this.#remove(this.#fieldSchema(a, k) ?? deduced, x, sub);
    }
    return isEmptyMap(out) ? null : out;
  }

  /** Adds as members the declared struct fields that the set only has children under. */
  ensureNamedFieldsAreMembers(schema: Schema, set: FieldSet): FieldSet {
    const out = FieldSet.empty();
    this.#ensure(schema, set, out);
    return out;
  }

  #ensure(s: Schema | undefined, set: FieldSet, out: FieldSet): void {
    const a = s === undefined ? undefined : this.#atom(s, undefined);
    for (const m of set.members()) out.addMember(m);
    for (const c of set.children()) {
      let child: Schema | undefined;
      if (c.pe.kind === 'field' && a?.t === 'map') {
        if (a.fields?.[c.pe.name] !== undefined) out.addMember(c.pe);
        child = this.#fieldSchema(a, c.pe.name);
      } else if (c.pe.kind === 'key' && a?.t === 'list') {
        child = a.items;
      }
      const sub = FieldSet.empty();
      this.#ensure(child, c.set, sub);
      if (!sub.isEmpty()) out.attach(c.pe, sub);
    }
  }
}
