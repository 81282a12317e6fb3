// labels.Selector: the label selector grammar ("app=web,tier in (a,b),!canary"), parsed by the same
// lexer and recursive descent as apimachinery, with its error messages; requirements validated as
// NewRequirement validates them; matching; and the canonical string Kubernetes prints (sorted by key,
// values sorted), e.g. a Scale's status.selector.

import { ApiError } from './api-error.js';
import { aggregateMessage, errorString, fieldError } from './field-errors.js';
import type { FieldError } from './field-errors.js';
import { FieldPath } from './field-path.js';
import { isQualifiedName, isValidLabelValue } from './name-validation.js';

/** selection.Operator, spelled as Kubernetes spells it. */
export type SelectorOperator = '!' | '=' | '==' | 'in' | '!=' | 'notin' | 'exists' | 'gt' | 'lt';

const binaryOperators: readonly SelectorOperator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
const validOperators: readonly SelectorOperator[] = [...binaryOperators, 'exists', '!'];

export type Labels = Readonly<Record<string, string>>;

export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  /** In the order given; printed sorted. */
  readonly values: readonly string[];
}

function isGoInt(s: string): boolean {
  if (!/^[+-]?[0-9]+$/.test(s)) return false;
  const v = BigInt(s);
  return v <= 2n ** 63n - 1n && v >= -(2n ** 63n);
}

function requirementErrors(key: string, op: SelectorOperator, values: readonly string[], path: FieldPath | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const keyPath = path === undefined ? FieldPath.of('key') : path.child('key');
  const valuesPath = path === undefined ? FieldPath.of('values') : path.child('values');
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length > 0) errs.push(fieldError.invalid(keyPath, key, keyErrs.join('; ')));
  switch (op) {
    case 'in':
    case 'notin':
      if (values.length === 0) errs.push(fieldError.invalid(valuesPath, values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) errs.push(fieldError.invalid(valuesPath, values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) errs.push(fieldError.invalid(valuesPath, values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) errs.push(fieldError.invalid(valuesPath, values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (!isGoInt(v)) errs.push(fieldError.invalid(valuesPath.index(i), v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
    default:
      errs.push(fieldError.notSupported(path === undefined ? FieldPath.of('operator') : path.child('operator'), op, validOperators));
  }
  values.forEach((v, i) => {
    const m = isValidLabelValue(v);
    if (m.length > 0) errs.push(fieldError.invalid(valuesPath.index(i).key(key), v, m.join('; ')));
  });
  return errs;
}

function selectorError(message: string): ApiError {
  return new ApiError('LABEL_SELECTOR_INVALID', 'BadRequest', message);
}

/** NewRequirement: validates and builds one requirement, throwing the aggregated field errors. */
export function newRequirement(key: string, operator: SelectorOperator, values: readonly string[], path?: FieldPath): Requirement {
  const errs = requirementErrors(key, operator, values, path);
  const msg = aggregateMessage(errs);
  if (msg !== undefined) throw selectorError(msg);
  return { key, operator, values: [...values] };
}

function requirementMatches(r: Requirement, labels: Labels): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return v !== undefined && r.values.includes(v);
    case 'notin':
    case '!=':
      return v === undefined || !r.values.includes(v);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (v === undefined || !isGoInt(v) || r.values.length !== 1 || !isGoInt(r.values[0] ?? '')) return false;
      const a = BigInt(v);
      const b = BigInt(r.values[0] ?? '0');
      return r.operator === 'gt' ? a > b : a < b;
    }
  }
}

const operatorText: Record<SelectorOperator, string> = {
  '=': '=', '==': '==', '!=': '!=', in: ' in ', notin: ' notin ', gt: '>', lt: '<', exists: '', '!': '',
};

export function requirementString(r: Requirement): string {
  const head = (r.operator === '!' ? '!' : '') + r.key;
  if (r.operator === 'exists' || r.operator === '!') return head;
  const values = r.values.length === 1 ? (r.values[0] ?? '') : [...r.values].sort().join(',');
  const body = r.operator === 'in' || r.operator === 'notin' ? `(${values})` : values;
  return head + operatorText[r.operator] + body;
}

/** An immutable selector: the AND of its requirements, kept sorted by key. */
export class Selector {
  readonly requirements: readonly Requirement[];
  /** True only for Selector.nothing(), which matches no object. */
  readonly matchesNothing: boolean;

  private constructor(requirements: readonly Requirement[], nothing = false) {
    this.requirements = requirements;
    this.matchesNothing = nothing;
  }

  static everything(): Selector {
    return new Selector([]);
  }

  static nothing(): Selector {
    return new Selector([], true);
  }

  /** A selector of key=value requirements, unchecked (labels.SelectorFromSet). */
  static fromSet(set: Labels): Selector {
    return new Selector(
      Object.keys(set)
        .sort()
        .map((key) => ({ key, operator: '=' as const, values: [set[key] ?? ''] })),
    );
  }

  /** A selector of the given requirements, sorted by key (stably, as Go's sort does at these sizes). */
  static of(requirements: readonly Requirement[]): Selector {
    return new Selector([...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
  }

  add(...requirements: Requirement[]): Selector {
    return Selector.of([...this.requirements, ...requirements]);
  }

  matches(labels: Labels | null | undefined): boolean {
    if (this.matchesNothing) return false;
    const l = labels ?? {};
    return this.requirements.every((r) => requirementMatches(r, l));
  }

  isEmpty(): boolean {
    return !this.matchesNothing && this.requirements.length === 0;
  }

  /** The value a selector requires the label to have, if it pins it to one (RequiresExactMatch). */
  requiresExactMatch(key: string): string | undefined {
    const r = this.requirements.find((x) => x.key === key);
    if (r === undefined) return undefined;
    if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1) return r.values[0];
    return undefined;
  }

  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

// ---- the lexer and parser ------------------------------------------------------------------------

type Token =
  | 'error' | 'eos' | ')' | ',' | '!' | '==' | '=' | '>' | 'id' | 'in' | '<' | '!=' | 'notin' | '(';

const keywordTokens: ReadonlyMap<string, Token> = new Map<string, Token>([
  [')', ')'], [',', ','], ['!', '!'], ['==', '=='], ['=', '='], ['>', '>'], ['in', 'in'], ['<', '<'], ['!=', '!='], ['notin', 'notin'], ['(', '('],
]);

interface Item {
  readonly tok: Token;
  readonly lit: string;
}

const isWhitespace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string): boolean => '=!(),><'.includes(c) && c !== '';

function lex(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos] as string)) pos++;
    if (pos >= s.length) {
      items.push({ tok: 'eos', lit: '' });
      return items;
    }
    const c = s[pos] as string;
    if (isSpecial(c)) {
      // The longest run of special characters that still spells a token.
      let buffer = '';
      let last: Item | undefined;
      while (pos < s.length && isSpecial(s[pos] as string)) {
        buffer += s[pos];
        const t = keywordTokens.get(buffer);
        if (t !== undefined) {
          last = { tok: t, lit: buffer };
          pos++;
        } else if (last !== undefined) {
          break;
        } else {
          pos++;
        }
      }
      items.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buffer}'` });
    } else {
      const start = pos;
      while (pos < s.length && !isSpecial(s[pos] as string) && !isWhitespace(s[pos] as string)) pos++;
      const word = s.slice(start, pos);
      const t = keywordTokens.get(word);
      items.push({ tok: t ?? 'id', lit: word });
    }
  }
}

class Parser {
  readonly #items: Item[];
  #pos = 0;
  readonly #path: FieldPath | undefined;

  constructor(input: string, path: FieldPath | undefined) {
    this.#items = lex(input);
    this.#path = path;
  }

  // In a values context "in" and "notin" are plain identifiers: "a in (in, notin)".
  #peek(values: boolean): Item {
    const it = this.#items[this.#pos] ?? { tok: 'eos', lit: '' };
    return values && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'id', lit: it.lit } : it;
  }

  #next(values: boolean): Item {
    const it = this.#peek(values);
    this.#pos++;
    return it;
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.#peek(true);
      if (tok === 'eos') return reqs;
      if (tok !== 'id' && tok !== '!') throw selectorError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      let r: Requirement;
      try {
        r = this.#requirement();
      } catch (e) {
        throw selectorError(`unable to parse requirement: ${(e as Error).message}`);
      }
      reqs.push(r);
      const t = this.#next(true);
      if (t.tok === 'eos') return reqs;
      if (t.tok !== ',') throw selectorError(`found '${t.lit}', expected: ',' or 'end of string'`);
      const t2 = this.#peek(true);
      if (t2.tok !== 'id' && t2.tok !== '!') throw selectorError(`found '${t2.lit}', expected: identifier after ','`);
    }
  }

  #requirement(): Requirement {
    let op: SelectorOperator | undefined;
    let t = this.#next(true);
    if (t.tok === '!') {
      op = '!';
      t = this.#next(true);
    }
    if (t.tok !== 'id') throw new Error(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length > 0) {
      // Kubernetes checks the key here with its parser's path, which is nil unless given: "<nil>: …".
      throw new Error(errorString(fieldError.invalid(this.#path, key, keyErrs.join('; '))));
    }
    const ahead = this.#peek(true).tok;
    if (ahead === 'eos' || ahead === ',') return newRequirement(key, op ?? 'exists', [], this.#path);
    if (op === '!') return newRequirement(key, op, [], this.#path);
    const o = this.#next(false);
    const operator = ({ in: 'in', '=': '=', '==': '==', '>': 'gt', '<': 'lt', notin: 'notin', '!=': '!=' } as Record<string, SelectorOperator>)[o.tok];
    if (operator === undefined) throw new Error(`found '${o.lit}', expected: ${binaryOperators.join(', ')}`);
    const values = operator === 'in' || operator === 'notin' ? this.#valueSet() : this.#exactValue();
    return newRequirement(key, operator, [...values].sort(), this.#path);
  }

  #valueSet(): Set<string> {
    const open = this.#next(true);
    if (open.tok !== '(') throw new Error(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.#peek(true);
    if (tok === ')') {
      this.#next(true);
      return new Set(['']);
    }
    if (tok !== 'id' && tok !== ',') throw new Error(`found '${lit}', expected: ',', ')' or identifier`);
    const s = this.#identifiers();
    if (this.#next(true).tok !== ')') throw new Error(`found '${lit}', expected: ')'`);
    return s;
  }

  // A comma-separated list where empty entries are the empty string: "(a,,b)", "(,a)", "(a,)".
  #identifiers(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const { tok, lit } = this.#next(true);
      if (tok === 'id') {
        s.add(lit);
        const t2 = this.#peek(true);
        if (t2.tok === ',') continue;
        if (t2.tok === ')') return s;
        throw new Error(`found '${t2.lit}', expected: ',' or ')'`);
      }
      if (tok === ',') {
        if (s.size === 0) s.add('');
        const t2 = this.#peek(true).tok;
        if (t2 === ')') {
          s.add('');
          return s;
        }
        if (t2 === ',') s.add('');
        continue;
      }
      throw new Error(`found '${lit}', expected: ',', or identifier`);
    }
  }

  #exactValue(): Set<string> {
    const ahead = this.#peek(true).tok;
    if (ahead === 'eos' || ahead === ',') return new Set(['']);
    const t = this.#next(true);
    if (t.tok === 'id') return new Set([t.lit]);
    throw new Error(`found '${t.lit}', expected: identifier`);
  }
}

/** labels.Parse: the string form of a selector, with Kubernetes' errors (code LABEL_SELECTOR_INVALID). */
export function parseSelector(selector: string, path?: FieldPath): Selector {
  return Selector.of(new Parser(selector, path).parse());
}

/** labels.ValidatedSelectorFromSet: key=value requirements, validated. */
export function validatedSelectorFromSet(set: Labels, path?: FieldPath): Selector {
  return Selector.of(Object.keys(set).map((k) => newRequirement(k, '=', [set[k] ?? ''], path)));
}
