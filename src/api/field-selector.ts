// fields.Selector: "metadata.name=web,status.phase!=Running" with `=`, `==`, `!=`, commas and backslash
// escapes in values (\\, \, and \=), parsed, matched against a flat set of field values and printed as
// apimachinery does; `transform` lets a kind check and rename the fields it supports, and
// `fieldLabelNotSupported` is the error Kubernetes gives for the others.

import { ApiError } from './api-error.js';

export type Fields = Readonly<Record<string, string>>;

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

/** Renames or rejects one term; returning an empty field and value drops the term. */
export type FieldTransform = (field: string, value: string) => { readonly field: string; readonly value: string };

function invalid(message: string): ApiError {
  return new ApiError('FIELD_SELECTOR_INVALID', 'BadRequest', message);
}

/** The error for a field a kind cannot select on: "field label not supported: spec.foo". */
export function fieldLabelNotSupported(label: string): ApiError {
  return new ApiError('FIELD_LABEL_NOT_SUPPORTED', 'BadRequest', `field label not supported: ${label}`);
}

export function escapeValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

export function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') throw invalid(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      inSlash = false;
    } else if (c === '\\') {
      inSlash = true;
    } else if (c === ',' || c === '=') {
      // Go prints the rune with %v: its code point number.
      throw invalid(`invalid field selector: unescaped character in value: ${c.codePointAt(0) ?? 0}`);
    } else {
      out += c;
    }
  }
  if (inSlash) throw invalid('invalid field selector: invalid escape sequence: \\');
  return out;
}

export class FieldSelector {
  readonly requirements: readonly FieldRequirement[];

  private constructor(requirements: readonly FieldRequirement[]) {
    this.requirements = requirements;
  }

  static everything(): FieldSelector {
    return new FieldSelector([]);
  }

  /** Terms of field=value, in the order given (fields.SelectorFromSet iterates a map; sort if needed). */
  static fromSet(set: Fields): FieldSelector {
    return new FieldSelector(Object.entries(set).map(([field, value]) => ({ field, operator: '=' as const, value })));
  }

  static of(requirements: readonly FieldRequirement[]): FieldSelector {
    return new FieldSelector([...requirements]);
  }

  /** Missing fields count as the empty string, as in Kubernetes. */
  matches(fields: Fields): boolean {
    return this.requirements.every((r) => ((fields[r.field] ?? '') === r.value) === (r.operator === '='));
  }

  isEmpty(): boolean {
    return this.requirements.length === 0;
  }

  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === '=')?.value;
  }

  /** Applies `fn` to each term, dropping the terms it empties (Selector.Transform). */
  transform(fn: FieldTransform): FieldSelector {
    const out: FieldRequirement[] = [];
    for (const r of this.requirements) {
      const t = fn(r.field, r.value);
      if (t.field === '' && t.value === '') continue;
      out.push({ field: t.field, operator: r.operator, value: t.value });
    }
    return new FieldSelector(out);
  }

  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeValue(r.value)}`).join(',');
  }
}

// Splits on commas that are not escaped.
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

const termOperators = ['!=', '==', '='] as const;

/** fields.ParseSelector, with Kubernetes' errors (code FIELD_SELECTOR_INVALID). Terms come out sorted. */
export function parseFieldSelector(selector: string, fn?: FieldTransform): FieldSelector {
  const parts = splitTerms(selector).sort();
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    let found: FieldRequirement | undefined;
    for (let i = 0; i < part.length && found === undefined; i++) {
      for (const op of termOperators) {
        if (part.startsWith(op, i)) {
          found = { field: part.slice(0, i), operator: op === '!=' ? '!=' : '=', value: unescapeValue(part.slice(i + op.length)) };
          break;
        }
      }
    }
    if (found === undefined) throw invalid(`invalid selector: '${selector}'; can't understand '${part}'`);
    reqs.push(found);
  }
  const sel = FieldSelector.of(reqs);
  return fn === undefined ? sel : sel.transform(fn);
}
