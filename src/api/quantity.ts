// resource.Quantity: Kubernetes' fixed-point numbers ("500m", "1.5Gi", "2e3") with its grammar, its
// rounding (up, to the nanounit), its cap (BinarySI at 2^63-1) and its canonical form. Exact: a value is
// a bigint times a power of ten, never a float, so "0.1" + "0.2" is "300m" as it is in Kubernetes.

import { ApiError } from './api-error.js';

export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** The scales of Quantity.scaledValue, as powers of ten. */
export const Scale = { Nano: -9, Micro: -6, Milli: -3, Unit: 0, Kilo: 3, Mega: 6, Giga: 9, Tera: 12, Peta: 15, Exa: 18 } as const;

const splitRegExp = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
/** Kubernetes' messages, which clients and tests match on. */
export const quantityMessages = {
  format: `quantities must match the regular expression '${splitRegExp}'`,
  numeric: 'unable to parse numeric part of quantity',
  suffix: "unable to parse quantity's suffix",
} as const;

const decimalSuffixes: ReadonlyMap<string, number> = new Map([
  ['n', -9], ['u', -6], ['m', -3], ['', 0], ['k', 3], ['M', 6], ['G', 9], ['T', 12], ['P', 15], ['E', 18],
]);
const binarySuffixes: ReadonlyMap<string, number> = new Map([
  ['Ki', 10], ['Mi', 20], ['Gi', 30], ['Ti', 40], ['Pi', 50], ['Ei', 60],
]);
const decimalByExponent = new Map([...decimalSuffixes].map(([s, e]) => [e, s]));
const binaryByExponent = new Map([...binarySuffixes].map(([s, e]) => [e, s]));
const suffixChars = 'eEinumkKMGTP';
const maxInt64 = (1n << 63n) - 1n;
// Kubernetes keeps at most 18 significant digits on its int64 fast path (maxInt64Factors).
const maxInt64Factors = 18;

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

function digitCount(v: bigint): number {
  return (v < 0n ? -v : v).toString().length;
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

interface Scanned {
  readonly positive: boolean;
  readonly value: string;
  readonly num: string;
  readonly denom: string;
  readonly suffix: string;
}

function formatError(): ApiError {
  return new ApiError('QUANTITY_FORMAT', 'BadRequest', quantityMessages.format);
}

// Splits a quantity into sign, integer digits (leading zeros dropped), fraction digits and suffix, the way
// Kubernetes' scanner does: permissive here, the suffix is checked afterwards.
function scan(str: string): Scanned {
  const end = str.length;
  let pos = 0;
  let positive = true;
  if (str[0] === '-' || str[0] === '+') {
    positive = str[0] !== '-';
    pos = 1;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) return { positive, value: str, num: str.slice(pos), denom: '', suffix: '' };
  let num = str.slice(pos, i);
  if (num === '') num = '0';
  pos = i;
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = i;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && suffixChars.includes(str[pos] as string)) pos++;
  if (pos >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) throw formatError();
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

interface Suffix {
  readonly base: 2 | 10;
  readonly exponent: number;
  readonly format: QuantityFormat;
}

function interpretSuffix(s: string): Suffix | undefined {
  const dec = decimalSuffixes.get(s);
  if (dec !== undefined) return { base: 10, exponent: dec, format: 'DecimalSI' };
  const bin = binarySuffixes.get(s);
  if (bin !== undefined) return { base: 2, exponent: bin, format: 'BinarySI' };
  if (s.length > 1 && (s[0] === 'e' || s[0] === 'E') && /^[+-]?[0-9]+$/.test(s.slice(1))) {
    const parsed = BigInt(s.slice(1));
    // Go parses the exponent as an int64 and keeps its low 32 bits.
    if (parsed > maxInt64 || parsed < -maxInt64 - 1n) return undefined;
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: 'DecimalExponent' };
  }
  return undefined;
}

// Divides a magnitude by 10^n, rounding away from zero; `exact` says whether nothing was lost.
function divRoundUp(v: bigint, n: number): { readonly q: bigint; readonly exact: boolean } {
  if (n <= 0) return { q: v * pow10(-n), exact: true };
  if (v === 0n) return { q: 0n, exact: true };
  const neg = v < 0n;
  const mag = neg ? -v : v;
  // Past its digits the quotient is below one: a non-zero value rounds up to one unit.
  if (n > digitCount(mag)) return { q: neg ? -1n : 1n, exact: false };
  const d = pow10(n);
  const q = mag / d;
  const exact = q * d === mag;
  const r = exact ? q : q + 1n;
  return { q: neg ? -r : r, exact };
}

/**
 * An immutable Kubernetes quantity. `toString()` is what Kubernetes serializes: the string as given when
 * Kubernetes keeps it (its parser reuses well-formed input on the fast path, so "+1" and "1.001" come
 * back as written), otherwise the canonical form, which `canonical()` always gives.
 */
export class Quantity {
  // value = unscaled * 10^scale
  readonly #unscaled: bigint;
  readonly #scale: number;
  readonly format: QuantityFormat;
  readonly #given: string | undefined;

  private constructor(unscaled: bigint, scale: number, format: QuantityFormat, given?: string) {
    this.#unscaled = unscaled;
    this.#scale = scale;
    this.format = format;
    this.#given = given;
  }

  /** Parses a quantity string, throwing an ApiError with Kubernetes' message when it is malformed. */
  static parse(str: string): Quantity {
    if (str.length === 0) throw formatError();
    if (str === '0') return new Quantity(0n, 0, 'DecimalSI', str);
    const { positive, value, num, denom, suffix } = scan(str);
    const sfx = interpretSuffix(suffix);
    if (sfx === undefined) throw new ApiError('QUANTITY_SUFFIX', 'BadRequest', quantityMessages.suffix);

    const fast = Quantity.#fastPath(str, positive, num, denom, sfx);
    if (fast !== undefined) return fast;
    return Quantity.#exactPath(value, sfx);
  }

  /** Parses, or returns undefined for a malformed string. */
  static tryParse(str: string): Quantity | undefined {
    try {
      return Quantity.parse(str);
    } catch {
      return undefined;
    }
  }

  // Kubernetes' int64 path: at most 18 digits, scale no finer than nano. It keeps the input string when
  // that string already looks canonical, which is why some non-canonical inputs survive verbatim.
  static #fastPath(str: string, positive: boolean, num: string, denom: string, sfx: Suffix): Quantity | undefined {
    let precision: number;
    let scale = 0;
    let mantissa = 1n;
    if (sfx.base === 10) {
      scale = sfx.exponent;
      precision = maxInt64Factors - (num.length + denom.length);
    } else if (denom.length === 0) {
      mantissa = 1n << BigInt(sfx.exponent);
      precision = 15 - num.length - Math.trunc((sfx.exponent * 3) / 10) - 1;
    } else {
      precision = -1;
    }
    if (precision < 0) return undefined;
    scale -= denom.length;
    if (scale < Scale.Nano) return undefined;
    const shifted = num + denom;
    const value = BigInt(shifted);
    const product = value * mantissa;
    if (product > maxInt64) return undefined;
    const result = positive ? product : -product;
    const keep =
      sfx.format === 'BinarySI'
        ? sfx.exponent % 10 === 0 && (value & 7n) !== 0n
        : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
    return new Quantity(result, scale, sfx.format, keep ? str : undefined);
  }

  // Kubernetes' arbitrary-precision path: rounds a non-zero value up to one nanounit, caps BinarySI at
  // 2^63-1 and shows a BinarySI value between 0 and 1 as DecimalSI.
  static #exactPath(value: string, sfx: Suffix): Quantity {
    const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?$/.exec(value);
    if (m === null || ((m[2] ?? '') === '' && (m[3] ?? '') === '')) {
      throw new ApiError('QUANTITY_NUMERIC', 'BadRequest', quantityMessages.numeric);
    }
    const frac = m[3] ?? '';
    let mag = BigInt((m[2] ?? '') + frac || '0');
    let scale = -frac.length;
    if (sfx.base === 10) scale += sfx.exponent;
    else mag <<= BigInt(sfx.exponent);
    let format = sfx.format;
    if (mag !== 0n && scale < Scale.Nano) {
      mag = divRoundUp(mag, Scale.Nano - scale).q;
      scale = Scale.Nano;
    }
    if (format === 'BinarySI') {
      // Binary values carry no decimal exponent here, so the scale lies between nano and one.
      const unit = pow10(-scale);
      if (mag > maxInt64 * unit) {
        mag = maxInt64;
        scale = 0;
      } else if (mag > 0n && mag < unit) {
        format = 'DecimalSI';
      }
    }
    return new Quantity(m[1] === '-' ? -mag : mag, scale, format);
  }

  /** A quantity of `value` units. */
  static of(value: bigint | number, format: QuantityFormat = 'DecimalSI'): Quantity {
    return Quantity.scaled(value, 0, format);
  }

  /** A quantity of `value` thousandths. */
  static milli(value: bigint | number, format: QuantityFormat = 'DecimalSI'): Quantity {
    return Quantity.scaled(value, Scale.Milli, format);
  }

  /** A quantity of value * 10^scale. */
  static scaled(value: bigint | number, scale: number, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(BigInt(value), scale, format);
  }

  isZero(): boolean {
    return this.#unscaled === 0n;
  }

  sign(): -1 | 0 | 1 {
    return this.#unscaled === 0n ? 0 : this.#unscaled < 0n ? -1 : 1;
  }

  /** -1, 0 or 1 as this is below, equal to or above `other`. */
  cmp(other: Quantity): -1 | 0 | 1 {
    const a = this.#unscaled;
    const b = other.#unscaled;
    const sa = this.sign();
    const sb = other.sign();
    if (sa !== sb) return sa < sb ? -1 : 1;
    if (sa === 0) return 0;
    // Same sign: compare orders of magnitude first, so "1e999999999" never builds a billion-digit number.
    const ma = digitCount(a) + this.#scale;
    const mb = digitCount(b) + other.#scale;
    if (ma !== mb) return (ma < mb) === (sa > 0) ? -1 : 1;
    const s = Math.min(this.#scale, other.#scale);
    const x = a * pow10(this.#scale - s);
    const y = b * pow10(other.#scale - s);
    return x === y ? 0 : x < y ? -1 : 1;
  }

  equals(other: Quantity): boolean {
    return this.cmp(other) === 0;
  }

  /** The sum; when this is zero the result takes `other`'s format, as Kubernetes' Add does. */
  add(other: Quantity): Quantity {
    const s = Math.min(this.#scale, other.#scale);
    const sum = this.#unscaled * pow10(this.#scale - s) + other.#unscaled * pow10(other.#scale - s);
    return new Quantity(sum, s, this.isZero() ? other.format : this.format);
  }

  sub(other: Quantity): Quantity {
    return this.add(other.neg());
  }

  neg(): Quantity {
    return new Quantity(-this.#unscaled, this.#scale, this.format);
  }

  /** The value times n. */
  mul(n: bigint | number): Quantity {
    return new Quantity(this.#unscaled * BigInt(n), this.#scale, this.format);
  }

  /** ceil(value / 10^scale), rounding away from zero (Kubernetes' ScaledValue on its int64 path). */
  scaledValue(scale: number): bigint {
    return divRoundUp(this.#unscaled, scale - this.#scale).q;
  }

  /** The value in whole units, rounded up. */
  value(): bigint {
    return this.scaledValue(0);
  }

  /** The value in thousandths, rounded up: what CPU requests are compared in. */
  milliValue(): bigint {
    return this.scaledValue(Scale.Milli);
  }

  /** An approximation as a float, for scoring and display only. */
  toNumber(): number {
    return Number(this.#unscaled) * 10 ** this.#scale;
  }

  /**
   * This value rounded up (away from zero) to a multiple of 10^scale, and whether that lost nothing
   * (Kubernetes' RoundUp).
   */
  roundUp(scale: number): { readonly quantity: Quantity; readonly exact: boolean } {
    if (this.#scale >= scale) return { quantity: this, exact: true };
    const { q, exact } = divRoundUp(this.#unscaled, scale - this.#scale);
    return { quantity: new Quantity(q, scale, this.format), exact };
  }

  /** What Kubernetes serializes: the given string when it kept it, else the canonical form. */
  toString(): string {
    return this.#given ?? this.canonical();
  }

  toJSON(): string {
    return this.toString();
  }

  /**
   * The canonical form: no fractional digits, the largest suffix of the quantity's own family that loses
   * nothing. BinarySI falls back to DecimalSI below 1024 or where it would round.
   */
  canonical(): string {
    if (this.#unscaled === 0n) return '0';
    if (this.format === 'BinarySI' && this.cmp(Quantity.of(-1024)) > 0 && this.cmp(Quantity.of(1024)) < 0) {
      return this.#decimal('DecimalSI');
    }
    if (this.format === 'BinarySI') {
      const { q, exact } = divRoundUp(this.#unscaled, -this.#scale);
      if (!exact) return this.#decimal('DecimalSI');
      let v = q;
      let e = 0;
      while (v % 1024n === 0n) {
        v /= 1024n;
        e += 10;
      }
      const suffix = e === 0 ? '' : binaryByExponent.get(e);
      // Past Ei there is no binary suffix; only sums can get there, and decimal keeps the magnitude.
      if (suffix === undefined) return this.#decimal('DecimalSI');
      return `${v}${suffix}`;
    }
    return this.#decimal(this.format);
  }

  #decimal(format: 'DecimalSI' | 'DecimalExponent'): string {
    let m = this.#unscaled;
    let e = this.#scale;
    while (m % 10n === 0n) {
      m /= 10n;
      e++;
    }
    while (e % 3 !== 0) {
      m *= 10n;
      e--;
    }
    if (format === 'DecimalSI') {
      const suffix = decimalByExponent.get(e);
      if (suffix !== undefined) return `${m}${suffix}`;
      // Beyond "E" or below "n" DecimalSI has no suffix; Kubernetes (from 1.36) falls back to the
      // exponent form rather than drop the magnitude as earlier releases did.
    }
    return e === 0 ? `${m}` : `${m}e${e}`;
  }
}

/** Parses a JSON value as Kubernetes decodes a Quantity field: a string, or a bare JSON number. */
export function quantityFromJSON(v: unknown): Quantity {
  if (typeof v === 'string') return Quantity.parse(v.trim());
  if (typeof v === 'number' && Number.isFinite(v)) return Quantity.parse(String(v));
  throw formatError();
}
