// field.Error and field.ErrorList: validation errors as Kubernetes builds and prints them
// ("spec.containers[0].image: Required value"), the aggregate message ("[a: …, b: …]") that ends up in
// an Invalid Status, and the helpers that render bad values the way Go's fmt does.

import { pathString } from './field-path.js';
import type { FieldPath } from './field-path.js';

/** field.ErrorType: also the `reason` of each cause in an Invalid Status. */
export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid';

const typeText: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

/** Kubernetes' message for a change to an immutable field (apimachinery validation). */
export const fieldImmutableMessage = 'field is immutable';

/**
 * A bad value as Go would print it: for values that are not strings, numbers, booleans, null or string
 * lists, pass `{ goSyntax: '…' }` with the text Kubernetes' %#v would give, or accept the JSON rendering.
 */
export type BadValue = unknown;

/** Marks a value Kubernetes leaves out of the message (field.OmitValueType). */
export const omitValue: unique symbol = Symbol('omitValue');

export interface FieldError {
  readonly type: FieldErrorType;
  /** The path, printed: "spec.containers[0].image". */
  readonly field: string;
  readonly badValue: BadValue;
  readonly detail: string;
}

/** Quotes as Go's strconv.Quote does (%q): printable characters kept, the rest escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"': out += '\\"'; continue;
      case '\\': out += '\\\\'; continue;
      case '\x07': out += '\\a'; continue;
      case '\b': out += '\\b'; continue;
      case '\f': out += '\\f'; continue;
      case '\n': out += '\\n'; continue;
      case '\r': out += '\\r'; continue;
      case '\t': out += '\\t'; continue;
      case '\v': out += '\\v'; continue;
    }
    if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if ((c >= 0x80 && c < 0xa0) || c === 0x2028 || c === 0x2029 || (c >= 0xd800 && c < 0xe000)) {
      out += c > 0xffff ? `\\U${c.toString(16).padStart(8, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return `${out}"`;
}

// Go's %v for a float64: shortest digits, exponent form below 1e-4 and from 1e6 on (e+06).
function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return '0';
  const [mantissa, e] = v.toExponential().split('e') as [string, string];
  const exp = Number(e);
  if (exp < -4 || exp >= 21 || (exp >= 6 && !Number.isInteger(v))) {
    return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(v);
}

/**
 * Go's %v of a decoded JSON value (map[string]interface{} and friends): maps as map[k:v …] with keys
 * sorted, slices as [a b], nil as <nil>. Integral numbers print as the int64 Kubernetes decodes them to.
 */
export function goSprintV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e21 ? String(v) : goFloat(v);
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return `[${v.map(goSprintV).join(' ')}]`;
  const o = v as Record<string, unknown>;
  return `map[${Object.keys(o).sort().map((k) => `${k}:${goSprintV(o[k])}`).join(' ')}]`;
}

/** Renders a bad value as field.Error does: %v for scalars, %q for strings, Go syntax for the rest. */
export function renderBadValue(v: BadValue): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) {
    return `[]string{${v.map((x: string) => goQuote(x)).join(', ')}}`;
  }
  if (typeof v === 'object' && 'goSyntax' in v && typeof (v as { goSyntax: unknown }).goSyntax === 'string') {
    return (v as { goSyntax: string }).goSyntax;
  }
  return JSON.stringify(v);
}

/** The message without the field (ErrorBody): what a cause's `message` holds. */
export function errorBody(e: FieldError): string {
  let s: string;
  switch (e.type) {
    case 'FieldValueRequired':
    case 'FieldValueForbidden':
    case 'FieldValueTooLong':
    case 'InternalError':
      s = typeText[e.type];
      break;
    default:
      s = e.badValue === omitValue ? typeText[e.type] : `${typeText[e.type]}: ${renderBadValue(e.badValue)}`;
  }
  return e.detail.length > 0 ? `${s}: ${e.detail}` : s;
}

/** "field: body", as field.Error.Error() prints it. */
export function errorString(e: FieldError): string {
  return `${e.field}: ${errorBody(e)}`;
}

function make(type: FieldErrorType, path: FieldPath | undefined, badValue: BadValue, detail: string): FieldError {
  return { type, field: pathString(path), badValue, detail };
}

export const fieldError = {
  required: (path: FieldPath | undefined, detail = ''): FieldError => make('FieldValueRequired', path, '', detail),
  invalid: (path: FieldPath | undefined, value: BadValue, detail: string): FieldError => make('FieldValueInvalid', path, value, detail),
  /** "Unsupported value: "x": supported values: "a", "b"". */
  notSupported: (path: FieldPath | undefined, value: BadValue, valid: readonly string[]): FieldError =>
    make('FieldValueNotSupported', path, value, valid.length > 0 ? `supported values: ${valid.map((v) => goQuote(v)).join(', ')}` : ''),
  duplicate: (path: FieldPath | undefined, value: BadValue): FieldError => make('FieldValueDuplicate', path, value, ''),
  notFound: (path: FieldPath | undefined, value: BadValue): FieldError => make('FieldValueNotFound', path, value, ''),
  forbidden: (path: FieldPath | undefined, detail: string): FieldError => make('FieldValueForbidden', path, '', detail),
  /** "Too long: may not be more than N bytes" (Kubernetes 1.32's wording). */
  tooLong: (path: FieldPath | undefined, maxLength: number): FieldError =>
    make('FieldValueTooLong', path, '<value omitted>', maxLength >= 0 ? `may not be more than ${maxLength} bytes` : 'value is too long'),
  tooMany: (path: FieldPath | undefined, actual: number, max: number): FieldError =>
    make('FieldValueTooMany', path, actual >= 0 ? actual : omitValue, max >= 0 ? `must have at most ${max} items` : 'has too many items'),
  internal: (path: FieldPath | undefined, err: Error): FieldError => make('InternalError', path, null, err.message),
  typeInvalid: (path: FieldPath | undefined, value: BadValue, detail: string): FieldError => make('FieldValueTypeInvalid', path, value, detail),
  /** Invalid with Kubernetes' "field is immutable". */
  immutable: (path: FieldPath | undefined, value: BadValue): FieldError => make('FieldValueInvalid', path, value, fieldImmutableMessage),
};

/**
 * The aggregate message of an error list (ErrorList.ToAggregate().Error()): duplicates dropped, one
 * message alone as it is, several in brackets joined by ", ". Undefined for an empty list.
 */
export function aggregateMessage(errors: readonly FieldError[]): string | undefined {
  const seen = new Set<string>();
  for (const e of errors) seen.add(errorString(e));
  if (seen.size === 0) return undefined;
  const all = [...seen];
  return all.length === 1 ? all[0] : `[${all.join(', ')}]`;
}
