// Strategic merge patch as the API server applies it (apimachinery's strategicpatch with parallel lists
// merged and unmatched nulls ignored), driven by the schema's patch strategies and merge keys: lists of
// objects merge by key, primitive lists with the merge strategy merge as sets, and the directives
// $patch (replace, delete, merge), $setElementOrder/<list>, $retainKeys and
// $deleteFromPrimitiveList/<list> do what kubectl's patches expect. The order of merged lists follows
// Kubernetes: $setElementOrder first, then the patch's order, then the live object's. Errors carry
// Kubernetes' messages and statuses (400, 422 or 500, as its patch handler answers).

import { ApiError } from '../api-error.js';
import { goSprintV } from '../field-errors.js';
import { unprocessableMessage } from './json-patch.js';
import type { SchemaRegistry } from '../schema/registry.js';
import type { Schema } from '../schema/schema.js';

type JSONObject = Record<string, unknown>;

const directiveMarker = '$patch';
const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList';
const retainKeysDirective = '$retainKeys';
const setElementOrderPrefix = '$setElementOrder';

/** The mergepatch errors whose messages clients see. */
export const smpMessages = {
  badJSONDoc: 'invalid JSON document',
  noListOfLists: 'lists of lists are not supported',
  badPrimitiveList: 'invalid patch format of primitive list',
  badRetainKeys: 'invalid patch format of retainKeys',
  badSetElementOrder: 'invalid patch format of setElementOrder list',
  contentNotMatchRetainKeys: "patch content doesn't match retainKeys list",
} as const;

// Errors the patch handler answers with 400, 422 or 500, as interpretStrategicMergePatchError does.
function badRequest(message: string): ApiError {
  return new ApiError('SMP_BAD_REQUEST', 'BadRequest', message);
}

class UnprocessableError extends ApiError {
  readonly detail: string;
  constructor(detail: string) {
    super('SMP_UNPROCESSABLE', 'Invalid', unprocessableMessage);
    this.detail = detail;
  }
}

function failed(message: string): ApiError {
  return new ApiError('SMP_FAILED', '', message);
}

const isObject = (v: unknown): v is JSONObject => typeof v === 'object' && v !== null && !Array.isArray(v);

// Go's reflect.TypeOf(v) as mergepatch's messages print it.
function goTypeOf(v: unknown): string {
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'object') return 'map[string]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v === 'boolean' ? 'bool' : 'string';
}

function badArgType(expected: 'map' | 'slice', actual: unknown): ApiError {
  return failed(`expected a ${expected === 'map' ? 'map[string]interface {}' : '[]interface {}'}, but received a ${goTypeOf(actual)}`);
}

function noMergeKey(m: JSONObject, key: string): ApiError {
  return failed(`map: ${goSprintV(m)} does not contain declared merge key: ${key}`);
}

// A value's kind, standing in for Go's reflect.Type of decoded JSON.
function kindOf(v: unknown): string {
  if (v === null) return 'nil';
  if (Array.isArray(v)) return 'slice';
  if (typeof v === 'object') return 'map';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v;
}

function clone(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clone);
  if (isObject(v)) {
    const out: JSONObject = {};
    for (const k of Object.keys(v)) out[k] = clone(v[k]);
    return out;
  }
  return v;
}

interface PatchMeta {
  readonly schema: Schema;
  /** The strategy other than retainKeys: '', 'merge' or 'replace'. */
  readonly strategy: string;
  readonly mergeKey: string;
}

// Go's sort.SliceStable for the sizes patches have: an insertion sort, kept for its exact behaviour
// with Kubernetes' comparator (which says "less" for items it cannot place).
function insertionSort<T>(a: T[], less: (x: T, y: T) => boolean): T[] {
  for (let i = 1; i < a.length; i++) {
    for (let j = i; j > 0 && less(a[j] as T, a[j - 1] as T); j--) {
      const t = a[j] as T;
      a[j] = a[j - 1] as T;
      a[j - 1] = t;
    }
  }
  return a;
}

class Merger {
  readonly #reg: SchemaRegistry;

  constructor(reg: SchemaRegistry) {
    this.#reg = reg;
  }

  // LookupPatchMetadataForStruct: the schema, strategy and merge key of a field of `parent`.
  #lookup(parent: Schema, key: string): PatchMeta {
    const r = this.#reg.resolve(parent);
    if (r.kind !== 'struct') {
      if (r.kind === 'any') {
        const name = parent.kind === 'ref' ? (parent.name.split('.').pop() ?? '') : '';
        throw failed(`unable to find api field in struct ${name} for the json field ${JSON.stringify(key)}`);
      }
      throw failed(`merging an object in json but data type is not struct, instead is: ${r.kind === 'list' ? 'slice' : r.kind === 'map' ? 'map' : 'string'}`);
    }
    const f = r.fields[key];
    if (f === undefined) {
      const name = parent.kind === 'ref' ? (parent.name.split('.').pop() ?? '') : '';
      throw failed(`unable to find api field in struct ${name} for the json field ${JSON.stringify(key)}`);
    }
    const strategies = (f.patchStrategy ?? '').split(',');
    let strategy: string;
    if (strategies.length === 1) strategy = strategies[0] === 'retainKeys' ? '' : (strategies[0] ?? '');
    else if (strategies[0] === 'retainKeys') strategy = strategies[1] ?? '';
    else if (strategies[1] === 'retainKeys') strategy = strategies[0] ?? '';
    else throw failed(`unexpected patch strategy: [${strategies.join(' ')}]`);
    return { schema: f.schema, strategy, mergeKey: f.patchMergeKey ?? '' };
  }

  // LookupPatchMetadataForSlice: as above, with the element schema of the list.
  #lookupSlice(parent: Schema, key: string): PatchMeta {
    const m = this.#lookup(parent, key);
    const r = this.#reg.resolve(m.schema);
    // Like Go's lookup through a pointer, a struct field holding a list is a list of that struct.
    if (r.kind === 'struct') return m;
    if (r.kind !== 'list') throw failed(`expected slice or array type, but got: ${this.#reg.resolve(parent).kind === 'struct' ? 'struct' : 'map'}`);
    if (this.#reg.resolve(r.items).kind === 'list') throw failed('unexpected slice of slice');
    return { ...m, schema: r.items };
  }

  mergeMap(original: JSONObject | null, patch: JSONObject, schema: Schema): JSONObject {
    if (Object.prototype.hasOwnProperty.call(patch, directiveMarker)) {
      const directive = patch[directiveMarker];
      if (directive === 'replace') {
        delete patch[directiveMarker];
        return patch;
      }
      if (directive === 'delete') return {};
      throw failed(`unknown patch type: ${goSprintV(directive)} in map: ${goSprintV(patch)}`);
    }
    const orig = original ?? {};
    this.#retainKeys(orig, patch);
    this.#setElementOrders(orig, patch, schema);

    // Deletions from primitive lists go last, after the lists' own additions, so that the outcome does
    // not depend on the order of the patch's keys (Go iterates a map).
    const keys = Object.keys(patch);
    const ordered = [...keys.filter((k) => !k.startsWith(deleteFromPrimitiveListPrefix)), ...keys.filter((k) => k.startsWith(deleteFromPrimitiveListPrefix))];
    for (const rawKey of ordered) {
      const patchV = patch[rawKey];
      let k = rawKey;
      let isDeleteList = false;
      if (rawKey.startsWith(deleteFromPrimitiveListPrefix)) {
        k = extractKey(rawKey, deleteFromPrimitiveListPrefix);
        isDeleteList = true;
      }
      if (patchV === null) {
        delete orig[k];
        continue;
      }
      if (!Object.prototype.hasOwnProperty.call(orig, k)) {
        if (!isDeleteList) {
          discardNulls(patchV);
          const { value, keep } = removeDirectives(patchV);
          if (keep) orig[k] = value;
        }
        continue;
      }
      const origV = orig[k];
      if (kindOf(origV) !== kindOf(patchV)) {
        if (!isDeleteList) {
          discardNulls(patchV);
          const { value, keep } = removeDirectives(patchV);
          if (keep) orig[k] = value;
          else delete orig[k];
        }
        continue;
      }
      if (isObject(origV) && isObject(patchV)) {
        const meta = this.#lookup(schema, k);
        orig[k] = meta.strategy === 'replace' ? patchV : this.mergeMap(origV, patchV, meta.schema);
      } else if (Array.isArray(origV) && Array.isArray(patchV)) {
        const meta = this.#lookupSlice(schema, k);
        orig[k] = meta.strategy === 'merge' || isDeleteList ? this.#mergeSlice(origV, patchV, meta, isDeleteList) : patchV;
      } else {
        orig[k] = patchV;
      }
    }
    return orig;
  }

  #retainKeys(original: JSONObject, patch: JSONObject): void {
    if (!Object.prototype.hasOwnProperty.call(patch, retainKeysDirective)) return;
    const list = patch[retainKeysDirective];
    delete patch[retainKeysDirective];
    if (!Array.isArray(list)) throw badRequest(smpMessages.badRetainKeys);
    const keep = new Set<unknown>(list);
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || k.startsWith(deleteFromPrimitiveListPrefix) || k.startsWith(setElementOrderPrefix)) continue;
      if (!keep.has(k)) throw badRequest(smpMessages.badRetainKeys);
    }
    for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
  }

  // mergePatchIntoOriginal: each $setElementOrder/<list> with its list, merged and put in order.
  #setElementOrders(original: JSONObject, patch: JSONObject, schema: Schema): void {
    for (const key of Object.keys(patch)) {
      if (!key.startsWith(setElementOrderPrefix)) continue;
      const order = patch[key];
      delete patch[key];
      if (!Array.isArray(order)) throw badArgType('slice', order);
      const field = extractKey(key, setElementOrderPrefix);
      const foundOriginal = Object.prototype.hasOwnProperty.call(original, field);
      const foundPatch = Object.prototype.hasOwnProperty.call(patch, field);
      const originalList = original[field];
      const patchList = patch[field];
      if (foundOriginal && !Array.isArray(originalList)) throw badArgType('slice', originalList);
      if (foundPatch && !Array.isArray(patchList)) throw badArgType('slice', patchList);
      const origArr = (foundOriginal ? originalList : undefined) as unknown[] | undefined;
      const patchArr = (foundPatch ? patchList : undefined) as unknown[] | undefined;
      const meta = this.#lookupSlice(schema, field);
      validateWithSetOrder(patchArr ?? [], order, meta.mergeKey);
      let merged: unknown[];
      let view = origArr ?? [];
      if (origArr !== undefined && patchArr === undefined) merged = origArr;
      else if (origArr === undefined && patchArr !== undefined) merged = removeDirectives(patchArr).value as unknown[];
      else if (origArr !== undefined && patchArr !== undefined) {
        if (meta.strategy === 'merge') ({ merged, view } = this.#mergeSliceWithView(origArr, patchArr, meta, false));
        else merged = patchArr;
      } else continue;
      const [inPatch, serverOnly] = meta.mergeKey === '' ? partitionPrimitives(merged, order) : partitionMaps(merged, order, meta.mergeKey);
      const kind = sliceElementKind(origArr ?? [], patchArr ?? []);
      original[field] = normalizeElementOrder(inPatch, serverOnly, order, view, meta.mergeKey, kind);
      delete patch[field];
    }
  }

  #mergeSlice(original: unknown[], patch: unknown[], meta: PatchMeta, isDeleteList: boolean): unknown[] {
    return this.#mergeSliceWithView(original, patch, meta, isDeleteList).merged;
  }

  // mergeSlice, also returning the live list as Go's caller still sees it afterwards. Kubernetes deletes
  // items by shifting them down inside the live list's array and appends new items into the slots that
  // frees, so a caller holding the old list reads [survivors…, new items…, stale tail]; that view is the
  // "live order" its $setElementOrder step sorts by, and the results Kubernetes' tests expect depend on it.
  #mergeSliceWithView(original: unknown[], patch: unknown[], meta: PatchMeta, isDeleteList: boolean): { merged: unknown[]; view: unknown[] } {
    if (original.length === 0 && patch.length === 0) return { merged: original, view: original };
    const kind = sliceElementKind(original, patch);
    const mergeKey = meta.mergeKey;
    if (kind !== 'map') {
      if (isDeleteList) {
        const drop = new Set(patch);
        return { merged: original.filter((v) => !drop.has(v)), view: original };
      }
      const merged = deduplicate([...original, ...patch]);
      const [inPatch, serverOnly] = partitionPrimitives(merged, patch);
      return { merged: normalizeElementOrder(inPatch, serverOnly, patch, original, '', kind), view: original };
    }
    if (mergeKey === '') throw failed('cannot merge lists without merge key for struct');
    const backing = [...original];
    let len = backing.length;
    const rest: unknown[] = [];
    let replace = false;
    for (const v of patch) {
      const item = v as JSONObject;
      if (!Object.prototype.hasOwnProperty.call(item, directiveMarker)) {
        rest.push(v);
        continue;
      }
      const directive = item[directiveMarker];
      if (directive === 'delete') {
        if (!Object.prototype.hasOwnProperty.call(item, mergeKey)) throw noMergeKey(item, mergeKey);
        for (let i = findByKey(backing.slice(0, len), mergeKey, item[mergeKey]); i >= 0; i = findByKey(backing.slice(0, len), mergeKey, item[mergeKey])) {
          backing.copyWithin(i, i + 1, len);
          len--;
        }
      } else if (directive === 'replace') {
        replace = true;
      } else if (directive === 'merge') {
        throw failed('merging lists cannot yet be specified in the patch');
      } else {
        throw failed(`unknown patch type: ${goSprintV(directive)} in map: ${goSprintV(item)}`);
      }
    }
    // $patch: replace keeps only the patch's own items, in their order.
    const base = replace ? rest : backing.slice(0, len);
    const items = replace ? [] : rest;
    const serverOrder = [...base];
    const merged = [...base];
    for (const v of items) {
      const item = v as JSONObject;
      if (!Object.prototype.hasOwnProperty.call(item, mergeKey)) throw noMergeKey(item, mergeKey);
      const idx = findByKey(merged, mergeKey, item[mergeKey]);
      if (idx >= 0) {
        merged[idx] = this.mergeMap(merged[idx] as JSONObject, item, meta.schema);
        if (!replace && idx < backing.length) backing[idx] = merged[idx];
      } else {
        if (!replace && len < backing.length) backing[len++] = item;
        merged.push(item);
      }
    }
    const [inPatch, serverOnly] = partitionMaps(merged, items, mergeKey);
    return { merged: normalizeElementOrder(inPatch, serverOnly, items, serverOrder, mergeKey, kind), view: replace ? original : backing };
  }
}

function extractKey(s: string, prefix: string): string {
  const i = s.indexOf('/');
  if (i < 0 || s.slice(0, i) !== prefix) {
    throw badRequest(prefix === deleteFromPrimitiveListPrefix ? smpMessages.badPrimitiveList : smpMessages.badSetElementOrder);
  }
  return s.slice(i + 1);
}

// discardNullValuesFromPatch: nulls in maps are dropped throughout.
function discardNulls(v: unknown): void {
  if (Array.isArray(v)) for (const x of v) discardNulls(x);
  else if (isObject(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else discardNulls(v[k]);
    }
  }
}

// removeDirectives: maps carrying $patch disappear, in place, at any depth.
function removeDirectives(v: unknown): { value: unknown; keep: boolean } {
  if (isObject(v)) {
    if (Object.prototype.hasOwnProperty.call(v, directiveMarker)) return { value: undefined, keep: false };
    for (const k of Object.keys(v)) {
      const r = removeDirectives(v[k]);
      if (r.keep) v[k] = r.value;
      else delete v[k];
    }
    return { value: v, keep: true };
  }
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      const r = removeDirectives(x);
      if (r.keep) out.push(r.value);
    }
    return { value: out, keep: true };
  }
  return { value: v, keep: true };
}

function findByKey(list: readonly unknown[], key: string, value: unknown): number {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!isObject(item)) throw failed(`value for key ${i} is not a map`);
    if (Object.prototype.hasOwnProperty.call(item, key) && item[key] === value) return i;
  }
  return -1;
}

// Kubernetes' deduplicateScalars keeps one of each value (its order is reset by the sort that follows).
function deduplicate(values: unknown[]): unknown[] {
  return [...new Set(values)];
}

function sliceElementKind(...slices: readonly (readonly unknown[])[]): string {
  let prev: string | undefined;
  for (const s of slices) {
    for (const v of s) {
      const k = kindOf(v);
      if (prev === undefined) {
        prev = k;
        if (k === 'slice') throw new UnprocessableError(smpMessages.noListOfLists);
      } else if (prev !== k) {
        throw failed(`list element types are not identical: ${goSprintV(slices)}`);
      }
    }
  }
  if (prev === undefined) throw failed('no elements in any of the given slices');
  return prev;
}

function partitionPrimitives(list: readonly unknown[], by: readonly unknown[]): [unknown[], unknown[]] {
  const present = new Set(by);
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of list) (present.has(v) ? inPatch : serverOnly).push(v);
  return [inPatch, serverOnly];
}

function partitionMaps(list: readonly unknown[], by: readonly unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of list) {
    if (!isObject(v)) throw badArgType('map', v);
    if (!Object.prototype.hasOwnProperty.call(v, mergeKey)) throw noMergeKey(v, mergeKey);
    (findByKey(by, mergeKey, v[mergeKey]) >= 0 ? inPatch : serverOnly).push(v);
  }
  return [inPatch, serverOnly];
}

// validatePatchWithSetOrderList: the patch's items (deletions aside) must appear in $setElementOrder,
// in the same relative order.
function validateWithSetOrder(patchList: readonly unknown[], order: readonly unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  let nonDelete: unknown[] = [...patchList];
  if (mergeKey !== '') {
    nonDelete = [];
    for (const v of patchList) {
      if (!isObject(v)) throw badArgType('map', v);
      if (v[directiveMarker] !== 'delete') nonDelete.push(v);
    }
  }
  let p = 0;
  let o = 0;
  const keyOf = (v: unknown): unknown => {
    if (mergeKey === '') return v;
    if (!isObject(v)) throw badArgType('map', v);
    if (!Object.prototype.hasOwnProperty.call(v, mergeKey)) throw noMergeKey(v, mergeKey);
    return v[mergeKey];
  };
  while (p < nonDelete.length && o < order.length) {
    const item = nonDelete[p];
    if (isObject(item) && Object.prototype.hasOwnProperty.call(item, directiveMarker)) {
      p++;
      continue;
    }
    if (keyOf(item) === keyOf(order[o])) p++;
    o++;
  }
  if (p < nonDelete.length && o >= order.length) {
    throw failed(`The order in patch list:\n${goSprintV(patchList)}\n doesn't match ${setElementOrderPrefix} list:\n${goSprintV(order)}\n`);
  }
}

function indexIn(list: readonly unknown[], v: unknown, mergeKey: string, kind: string): number {
  const val = kind === 'map' ? (isObject(v) ? v[mergeKey] : undefined) : v;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const other = kind === 'map' ? (isObject(item) ? item[mergeKey] : undefined) : item;
    if (other === val) return i;
  }
  return -1;
}

function normalizeSliceOrder(toSort: unknown[], order: readonly unknown[], mergeKey: string, kind: string): unknown[] {
  let items = toSort;
  let deletions: unknown[] = [];
  if (kind === 'map') {
    for (const list of [toSort, order]) {
      for (const v of list) {
        if (!isObject(v)) throw badArgType('map', v);
        if (!Object.prototype.hasOwnProperty.call(v, mergeKey)) throw noMergeKey(v, mergeKey);
      }
    }
    items = toSort.filter((v) => (v as JSONObject)[directiveMarker] !== 'delete');
    deletions = toSort.filter((v) => (v as JSONObject)[directiveMarker] === 'delete');
  }
  insertionSort(items, (a, b) => {
    const ia = indexIn(order, a, mergeKey, kind);
    const ib = indexIn(order, b, mergeKey, kind);
    return ia >= 0 && ib >= 0 ? ia < ib : true;
  });
  return [...items, ...deletions];
}

// normalizeElementOrder: each part sorted by its own order, then the server-only items interleaved
// into the patch's items where the live order puts them.
function normalizeElementOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: readonly unknown[],
  serverOrder: readonly unknown[],
  mergeKey: string,
  kind: string,
): unknown[] {
  const right = normalizeSliceOrder(patchItems, patchOrder, mergeKey, kind);
  const left = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey, kind);
      const ri = indexIn(serverOrder, right[j], mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

/**
 * Applies a strategic merge patch to an object of the given schema. Neither input is mutated. Throws
 * ApiError: SMP_BAD_REQUEST (400), SMP_UNPROCESSABLE (422) or SMP_FAILED (500), as Kubernetes answers.
 */
export function applyStrategicMergePatch(reg: SchemaRegistry, schema: Schema, original: unknown, patch: unknown): JSONObject {
  if (!isObject(patch)) throw badRequest(smpMessages.badJSONDoc);
  const orig = isObject(original) ? (clone(original) as JSONObject) : {};
  return new Merger(reg).mergeMap(orig, clone(patch) as JSONObject, schema);
}
