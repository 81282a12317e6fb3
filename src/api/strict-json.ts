// A JSON parser for request bodies that keeps what JSON.parse throws away: which objects repeated a
// key (Kubernetes' strict decoding reports `duplicate field "spec.paused"`), and Go's wording for
// syntax errors ("invalid character '}' looking for beginning of value", "unexpected end of JSON
// input") so a malformed body gets the message kubectl users know.

import { ApiError } from './api-error.js';

export interface ParsedJSON {
  readonly value: unknown;
  /**
   * For objects that repeated a key: every key in document order, repeats included. Objects without
   * repeats are absent (their Object.keys order is the document order).
   */
  readonly keyOrder: WeakMap<object, readonly string[]>;
}

// Go's quoteChar: how its scanner shows the offending character.
function quoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return `'"'`;
  const s = JSON.stringify(c);
  return `'${s.slice(1, -1)}'`;
}

function syntaxError(message: string): ApiError {
  return new ApiError('JSON_INVALID', 'BadRequest', message);
}

// Space, tab, newline, carriage return.
const isWS = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

class Parser {
  readonly #s: string;
  #i = 0;
  readonly keyOrder = new WeakMap<object, readonly string[]>();

  constructor(s: string) {
    this.#s = s;
  }

  #ws(): void {
    const s = this.#s;
    let i = this.#i;
    while (i < s.length && isWS(s.charCodeAt(i))) i++;
    this.#i = i;
  }

  #fail(context: string): never {
    if (this.#i >= this.#s.length) throw syntaxError('unexpected end of JSON input');
    throw syntaxError(`invalid character ${quoteChar(this.#s[this.#i] as string)} ${context}`);
  }

  parseDocument(): unknown {
    this.#ws();
    const v = this.#value();
    this.#ws();
    if (this.#i < this.#s.length) this.#fail('after top-level value');
    return v;
  }

  #value(): unknown {
    const s = this.#s;
    const c = s[this.#i];
    switch (c) {
      case '{':
        return this.#object();
      case '[':
        return this.#array();
      case '"':
        return this.#string();
      case 't':
        return this.#literal('true', true);
      case 'f':
        return this.#literal('false', false);
      case 'n':
        return this.#literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.#number();
        return this.#fail('looking for beginning of value');
    }
  }

  #literal(word: string, v: unknown): unknown {
    for (let k = 0; k < word.length; k++) {
      if (this.#s[this.#i] !== word[k]) this.#fail(`in literal ${word} (expecting ${quoteChar(word[k] as string)})`);
      this.#i++;
    }
    return v;
  }

  #number(): number {
    const s = this.#s;
    const start = this.#i;
    if (s[this.#i] === '-') this.#i++;
    const digit = (): boolean => {
      const c = s[this.#i];
      return c !== undefined && c >= '0' && c <= '9';
    };
    if (s[this.#i] === '0') this.#i++;
    else if (digit()) while (digit()) this.#i++;
    else this.#fail('in numeric literal');
    if (s[this.#i] === '.') {
      this.#i++;
      if (!digit()) this.#fail('after decimal point in numeric literal');
      while (digit()) this.#i++;
    }
    if (s[this.#i] === 'e' || s[this.#i] === 'E') {
      this.#i++;
      if (s[this.#i] === '+' || s[this.#i] === '-') this.#i++;
      if (!digit()) this.#fail('in exponent of numeric literal');
      while (digit()) this.#i++;
    }
    return Number(s.slice(start, this.#i));
  }

  #string(): string {
    const s = this.#s;
    const start = ++this.#i;
    // Fast path: up to the next quote, when that stretch has no escape and no control character.
    const q = s.indexOf('"', start);
    if (q >= 0) {
      let plain = true;
      for (let k = start; k < q; k++) {
        const c = s.charCodeAt(k);
        if (c === 0x5c || c < 0x20) {
          plain = false;
          break;
        }
      }
      if (plain) {
        this.#i = q + 1;
        return s.slice(start, q);
      }
    }
    for (;;) {
      const c = s.charCodeAt(this.#i);
      if (Number.isNaN(c)) this.#fail('in string literal');
      if (c === 0x22) break;
      if (c < 0x20) this.#fail('in string literal');
      if (c === 0x5c) {
        const e = s[this.#i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(s.slice(this.#i + 2, this.#i + 6))) {
            this.#i += 2;
            while (/[0-9a-fA-F]/.test(s[this.#i] ?? '')) this.#i++;
            this.#fail('in \\u hexadecimal character escape');
          }
          this.#i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) {
          this.#i++;
          this.#fail('in string escape code');
        }
        this.#i += 2;
        continue;
      }
      this.#i++;
    }
    const raw = s.slice(start, this.#i);
    this.#i++;
    return JSON.parse(`"${raw}"`) as string;
  }

  #object(): Record<string, unknown> {
    this.#i++;
    const out: Record<string, unknown> = {};
    let keys: string[] | undefined;
    let dup = false;
    this.#ws();
    if (this.#s[this.#i] === '}') {
      this.#i++;
      return out;
    }
    for (;;) {
      this.#ws();
      if (this.#s[this.#i] !== '"') this.#fail('looking for beginning of object key string');
      const k = this.#string();
      this.#ws();
      if (this.#s[this.#i] !== ':') this.#fail('after object key');
      this.#i++;
      this.#ws();
      const v = this.#value();
      if (Object.prototype.hasOwnProperty.call(out, k)) {
        dup = true;
        // Go decodes a repeated key over the first value; the last one wins.
        delete out[k];
      }
      // "__proto__" stays an ordinary key, as JSON.parse keeps it.
      if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      else out[k] = v;
      (keys ??= []).push(k);
      this.#ws();
      const c = this.#s[this.#i];
      if (c === ',') {
        this.#i++;
        continue;
      }
      if (c === '}') {
        this.#i++;
        break;
      }
      this.#fail('after object key:value pair');
    }
    if (dup && keys !== undefined) this.keyOrder.set(out, keys);
    return out;
  }

  #array(): unknown[] {
    this.#i++;
    const out: unknown[] = [];
    this.#ws();
    if (this.#s[this.#i] === ']') {
      this.#i++;
      return out;
    }
    for (;;) {
      this.#ws();
      out.push(this.#value());
      this.#ws();
      const c = this.#s[this.#i];
      if (c === ',') {
        this.#i++;
        continue;
      }
      if (c === ']') {
        this.#i++;
        return out;
      }
      this.#fail('after array element');
    }
  }
}

/** Parses JSON text, throwing ApiError JSON_INVALID with Go's message for malformed input. */
export function parseJSON(text: string): ParsedJSON {
  const p = new Parser(text);
  const value = p.parseDocument();
  return { value, keyOrder: p.keyOrder };
}
