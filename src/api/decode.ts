// Decoding a request body into one of our kinds the way Kubernetes' typed decoder does: fields checked
// against the schema (unknown and duplicate fields collected for fieldValidation=Strict|Warn, with
// Kubernetes' messages), values type-checked with Go's "json: cannot unmarshal …" errors, and the
// object re-serialized as Go would: quantities and timestamps in canonical form, unknown fields and
// nulls dropped, map keys sorted, fields in declaration order, and the fields Go always writes filled
// in (status: {}, creationTimestamp: null).

import { ApiError } from './api-error.js';
import { quantityFromJSON } from './quantity.js';
import type { SchemaRegistry } from './schema/registry.js';
import type { Field, GroupVersionKind, Schema, StructSchema } from './schema/schema.js';
import { parseJSON } from './strict-json.js';
import type { ParsedJSON } from './strict-json.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface DecodeOptions {
  /** Collect unknown and duplicate fields (fieldValidation Strict or Warn). */
  readonly reportStrict?: boolean;
  /** Fill in the fields Go always serializes when unset (default true). */
  readonly emitZeroFields?: boolean;
}

export interface Decoded {
  readonly object: Record<string, unknown>;
  /** `unknown field "spec.foo"` and `duplicate field "spec.paused"`, in document order. */
  readonly strictErrors: readonly string[];
}

/** "Pod in version "v1" cannot be handled as a Pod: …", Kubernetes' wrapper for decode failures. */
export function cannotBeHandledMessage(gvk: GroupVersionKind, detail: string): string {
  return `${gvk.kind} in version ${JSON.stringify(gvk.version)} cannot be handled as a ${gvk.kind}: ${detail}`;
}

/** "strict decoding error: unknown field "x", duplicate field "y"". */
export function strictDecodingMessage(errors: readonly string[]): string {
  return `strict decoding error: ${errors.join(', ')}`;
}

function decodeError(message: string): ApiError {
  return new ApiError('DECODE_FAILED', 'BadRequest', message);
}

// The JSON kind Go's errors name ("string", "number", "bool", "array", "object").
function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

const int32Range = [-(2 ** 31), 2 ** 31 - 1] as const;

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

// Parses RFC 3339 as Go's time.Parse(time.RFC3339) accepts it, returning epoch milliseconds and the
// microseconds beyond them; throws Go's message for what it rejects.
function parseTime(s: string): { readonly ms: number; readonly micros: number } {
  const m = rfc3339.exec(s);
  const fail = (why: string): never => {
    throw decodeError(`parsing time ${JSON.stringify(s)} as "2006-01-02T15:04:05Z07:00": ${why}`);
  };
  if (m === null) return fail(`cannot parse ${JSON.stringify(s)} as "2006"`);
  const [, y, mo, d, h, mi, se, frac, zone] = m as unknown as string[];
  const month = Number(mo);
  if (month < 1 || month > 12) throw decodeError(`parsing time ${JSON.stringify(s)}: month out of range`);
  const day = Number(d);
  const dim = new Date(Date.UTC(Number(y), month, 0)).getUTCDate();
  if (day < 1 || day > dim) throw decodeError(`parsing time ${JSON.stringify(s)}: day out of range`);
  if (Number(h) > 23) throw decodeError(`parsing time ${JSON.stringify(s)}: hour out of range`);
  if (Number(mi) > 59) throw decodeError(`parsing time ${JSON.stringify(s)}: minute out of range`);
  if (Number(se) > 59) throw decodeError(`parsing time ${JSON.stringify(s)}: second out of range`);
  let offset = 0;
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    offset = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  }
  const digits = (frac ?? '').slice(1).padEnd(6, '0').slice(0, 6);
  const micros = Number(digits);
  const ms = Date.UTC(Number(y), month - 1, day, Number(h), Number(mi), Number(se)) - offset * 60_000;
  return { ms, micros };
}

/** metav1.Time's form: RFC 3339 in UTC, whole seconds. */
export function formatTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** metav1.MicroTime's form: RFC 3339 in UTC with six fractional digits. */
export function formatMicroTime(ms: number, micros: number): string {
  const base = new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19);
  return `${base}.${String(micros).padStart(6, '0')}Z`;
}

const base64Char = /[A-Za-z0-9+/]/;

// Go's base64.StdEncoding: padding required, \r and \n ignored; the error names the first bad byte.
function checkBase64(s: string): void {
  const clean = s.replace(/[\r\n]/g, '');
  let i = 0;
  for (; i < clean.length; i++) if (!base64Char.test(clean[i] as string)) break;
  const dataLen = i;
  let pad = 0;
  for (; i < clean.length && clean[i] === '='; i++) pad++;
  const bad = (at: number): never => {
    throw decodeError(`illegal base64 data at input byte ${at}`);
  };
  if (i < clean.length) bad(pad > 0 ? dataLen : i);
  if ((dataLen + pad) % 4 !== 0 || pad > 2 || (pad > 0 && dataLen % 4 === 0)) bad(Math.min(clean.length, dataLen - (dataLen % 4)));
  if (pad === 0 && dataLen % 4 !== 0) bad(dataLen - (dataLen % 4));
}

// Where the walker is, as a chain to the root: paths are only spelled out for an error.
interface Context {
  readonly parent: Context | undefined;
  /** A field name or map key, or a list index. */
  readonly key: string | number;
  /** The key is a map key: part of strict paths, not of Go's field paths. */
  readonly mapKey?: true;
  /** The Go struct the current field belongs to, as type errors name it. */
  readonly struct: string;
}

/** The path for strict errors, with indexes: spec.containers[0].image */
function pathOf(ctx: Context | undefined): string {
  if (ctx === undefined) return '';
  const head = pathOf(ctx.parent);
  if (typeof ctx.key === 'number') return `${head}[${ctx.key}]`;
  return head === '' ? ctx.key : `${head}.${ctx.key}`;
}

/** The path for type errors, fields only: spec.containers.image */
function goPathOf(ctx: Context | undefined): string {
  if (ctx === undefined) return '';
  const head = goPathOf(ctx.parent);
  if (typeof ctx.key === 'number' || ctx.mapKey === true) return head;
  return head === '' ? ctx.key : `${head}.${ctx.key}`;
}

function joinPath(p: string, k: string): string {
  return p === '' ? k : `${p}.${k}`;
}

// The fields of a struct that Go writes even when unset, per struct schema.
const emittedCache = new WeakMap<StructSchema, readonly (readonly [string, Field])[]>();
function emittedFields(st: StructSchema): readonly (readonly [string, Field])[] {
  let e = emittedCache.get(st);
  if (e === undefined) {
    e = Object.entries(st.fields).filter(([, f]) => f.emitted === true);
    emittedCache.set(st, e);
  }
  return e;
}

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

class Walker {
  readonly #reg: SchemaRegistry;
  readonly #keyOrder: WeakMap<object, readonly string[]> | undefined;
  readonly #strict: boolean;
  readonly #zero: boolean;
  readonly errors: string[] = [];

  constructor(reg: SchemaRegistry, keyOrder: WeakMap<object, readonly string[]> | undefined, opts: DecodeOptions) {
    this.#reg = reg;
    this.#keyOrder = keyOrder;
    this.#strict = opts.reportStrict === true;
    this.#zero = opts.emitZeroFields !== false;
  }

  #typeError(v: unknown, s: Schema, ctx: Context | undefined, literal = false): never {
    const what = literal && typeof v === 'number' ? `number ${String(v)}` : jsonKind(v);
    const struct = ctx?.struct ?? '';
    const target = struct === '' ? 'Go value' : `Go struct field ${struct}.${goPathOf(ctx)}`;
    throw decodeError(`json: cannot unmarshal ${what} into ${target} of type ${this.#reg.goType(s)}`);
  }

  /** The normalized value, or undefined where Go would leave the field unset. */
  value(s: Schema, v: unknown, ctx: Context | undefined, structName: string): unknown {
    if (v === null || v === undefined) return undefined;
    const r = s.kind === 'ref' ? this.#reg.resolve(s) : s;
    switch (r.kind) {
      case 'string':
        if (typeof v !== 'string') return this.#typeError(v, s, ctx);
        if (r.format === 'byte') checkBase64(v);
        return v;
      case 'integer': {
        if (typeof v !== 'number') return this.#typeError(v, s, ctx);
        const ok = Number.isInteger(v) && (r.format === 'int64' || (v >= int32Range[0] && v <= int32Range[1]));
        if (!ok) return this.#typeError(v, s, ctx, true);
        return v;
      }
      case 'number':
        return typeof v === 'number' ? v : this.#typeError(v, s, ctx);
      case 'boolean':
        return typeof v === 'boolean' ? v : this.#typeError(v, s, ctx);
      case 'quantity':
        return quantityFromJSON(v).toString();
      case 'int-or-string':
        if (typeof v === 'string') return v;
        if (typeof v === 'number' && Number.isInteger(v) && v >= int32Range[0] && v <= int32Range[1]) return v;
        throw decodeError(`json: cannot unmarshal ${typeof v === 'number' ? `number ${String(v)}` : jsonKind(v)} into Go value of type int32`);
      case 'time': {
        if (typeof v !== 'string') throw decodeError(`json: cannot unmarshal ${jsonKind(v)} into Go value of type string`);
        const t = parseTime(v);
        return r.precision === 'second' ? formatTime(t.ms) : formatMicroTime(t.ms, t.micros);
      }
      case 'any':
        return v;
      case 'list': {
        if (!Array.isArray(v)) return this.#typeError(v, s, ctx);
        const out = new Array<unknown>(v.length);
        for (let i = 0; i < v.length; i++) {
          const item = this.value(r.items, v[i], { parent: ctx, key: i, struct: structName }, structName);
          out[i] = item === undefined ? this.#zeroOf(r.items) : item;
        }
        return out;
      }
      case 'map': {
        if (typeof v !== 'object' || Array.isArray(v)) return this.#typeError(v, s, ctx);
        const obj = v as Record<string, unknown>;
        if (this.#strict && this.#keyOrder?.has(obj) === true) this.#report(obj, ctx, () => true);
        const out: Record<string, unknown> = {};
        for (const k of Object.keys(obj).sort()) {
          const val = this.value(r.values, obj[k], { parent: ctx, key: k, mapKey: true, struct: structName }, structName);
          out[k] = val === undefined ? this.#zeroOf(r.values) : val;
        }
        return out;
      }
      case 'struct': {
        if (typeof v !== 'object' || Array.isArray(v)) return this.#typeError(v, s, ctx);
        const name = s.kind === 'ref' ? (s.name.split('.').pop() ?? '') : structName;
        return this.#struct(r, v as Record<string, unknown>, ctx, name);
      }
    }
  }

  // Duplicates and unknown fields, reported in document order as Kubernetes' decoder meets them.
  #report(obj: Record<string, unknown>, ctx: Context | undefined, known: (k: string) => boolean): void {
    const order = this.#keyOrder?.get(obj) ?? Object.keys(obj);
    const seen = new Set<string>();
    const path = pathOf(ctx);
    for (const k of order) {
      const isKnown = known(k);
      if (seen.has(k)) {
        // A field both unknown and repeated is reported once, as unknown.
        if (isKnown) this.errors.push(`duplicate field ${JSON.stringify(joinPath(path, k))}`);
        continue;
      }
      seen.add(k);
      if (!isKnown) this.errors.push(`unknown field ${JSON.stringify(joinPath(path, k))}`);
    }
  }

  #struct(st: StructSchema, obj: Record<string, unknown>, ctx: Context | undefined, structName: string): Record<string, unknown> {
    const fields = st.fields;
    const keys = Object.keys(obj);
    if (this.#strict) {
      // Only objects with a repeat, or an unknown key, need the full report.
      if (this.#keyOrder?.has(obj) === true || keys.some((k) => !hasOwn(fields, k))) this.#report(obj, ctx, (k) => hasOwn(fields, k));
    }
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      if (!hasOwn(fields, k)) continue;
      const given = obj[k];
      if (given === undefined || given === null) continue;
      const val = this.value((fields[k] as Field).schema, given, { parent: ctx, key: k, struct: structName }, structName);
      if (val !== undefined) out[k] = val;
    }
    if (this.#zero) {
      for (const [k, f] of emittedFields(st)) if (!hasOwn(out, k)) out[k] = f.pointer === true ? null : this.#zeroOf(f.schema);
    }
    return out;
  }

  #zeroOf(s: Schema): unknown {
    const r = s.kind === 'ref' ? this.#reg.resolve(s) : s;
    switch (r.kind) {
      case 'string':
        return r.format === 'byte' ? null : '';
      case 'integer':
      case 'number':
        return 0;
      case 'boolean':
        return false;
      case 'quantity':
        return '0';
      case 'int-or-string':
        return 0;
      case 'struct': {
        const out: Record<string, unknown> = {};
        if (!this.#zero) return out;
        for (const [k, f] of emittedFields(r)) out[k] = f.pointer === true ? null : this.#zeroOf(f.schema);
        return out;
      }
      default:
        return null;
    }
  }
}

/**
 * Decodes a parsed value against a schema. Throws ApiError DECODE_FAILED (400) with Go's message for a
 * value of the wrong type, a malformed quantity, timestamp or base64 string.
 */
export function decodeValue(reg: SchemaRegistry, schema: Schema, input: ParsedJSON | { readonly value: unknown }, opts: DecodeOptions = {}): Decoded {
  const keyOrder = 'keyOrder' in input ? input.keyOrder : undefined;
  const w = new Walker(reg, keyOrder, opts);
  const name = schema.kind === 'ref' ? (schema.name.split('.').pop() ?? '') : '';
  const out = w.value(schema, input.value, undefined, name);
  if (out === undefined || typeof out !== 'object' || Array.isArray(out)) {
    throw decodeError(`json: cannot unmarshal ${input.value === null ? 'null' : jsonKind(input.value)} into Go value of type ${reg.goType(schema)}`);
  }
  return { object: out as Record<string, unknown>, strictErrors: w.errors };
}

/**
 * Decodes a JSON body as a kind: parses (Go's syntax errors), then decodeValue. Unknown and duplicate
 * fields are collected unless fieldValidation is Ignore; what to do with them (fail with
 * strictDecodingMessage, or warn) is the caller's call, as it differs between create and patch.
 */
export function decodeJSON(reg: SchemaRegistry, gvk: GroupVersionKind, text: string, fieldValidation: FieldValidation, opts: Omit<DecodeOptions, 'reportStrict'> = {}): Decoded {
  const schema = reg.kindSchema(gvk);
  if (schema === undefined) throw new Error(`schema: no kind ${gvk.group}/${gvk.version} ${gvk.kind}`);
  const parsed = fieldValidation === 'Ignore' ? { value: parseJSON(text).value } : parseJSON(text);
  return decodeValue(reg, schema, parsed, { ...opts, reportStrict: fieldValidation !== 'Ignore' });
}
