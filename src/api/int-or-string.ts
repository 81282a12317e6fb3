// intstr.IntOrString and percentages as Kubernetes reads them: a Deployment's maxSurge scales up (ceil),
// its maxUnavailable down (floor), "25%" of 10 being 3 and 2; and the validation Kubernetes applies to
// such fields, with its messages.

import { fieldError } from './field-errors.js';
import type { BadValue, FieldError } from './field-errors.js';
import type { FieldPath } from './field-path.js';
import { isValidPercent } from './name-validation.js';

/** The JSON form: a number, or a string such as "25%". */
export type IntOrString = number | string;

export class IntOrStringError extends Error {
  readonly code = 'INT_OR_STRING_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'IntOrStringError';
  }
}

// Go's strconv.Atoi: optional sign and decimal digits, within int64.
function atoi(s: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  if (v > 2n ** 63n - 1n || v < -(2n ** 63n)) return undefined;
  return Number(v);
}

function atoiError(s: string, whole: string): string {
  const reason = /^[+-]?[0-9]+$/.test(s) ? 'value out of range' : 'invalid syntax';
  return `invalid value ${JSON.stringify(whole)}: strconv.Atoi: parsing ${JSON.stringify(s)}: ${reason}`;
}

/**
 * GetScaledValueFromIntOrPercent: an int as is; a string must be "<int>%" and scales `total`, rounding
 * up or down. Throws Kubernetes' message for anything else.
 */
export function scaledValueFromIntOrPercent(v: IntOrString | null | undefined, total: number, roundUp: boolean): number {
  if (v === null || v === undefined) throw new IntOrStringError('nil value for IntOrString');
  if (typeof v === 'number') return Math.trunc(v);
  if (!v.endsWith('%')) throw new IntOrStringError('invalid value for IntOrString: invalid type: string is not a percentage');
  const digits = v.slice(0, -1);
  const n = atoi(digits);
  if (n === undefined) throw new IntOrStringError(`invalid value for IntOrString: ${atoiError(digits, v)}`);
  const scaled = (n * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

/** intstr.Parse: an int32 when the text is one, else the string. */
export function parseIntOrString(s: string): IntOrString {
  const n = atoi(s);
  return n !== undefined && n >= -(2 ** 31) && n <= 2 ** 31 - 1 ? n : s;
}

/** How Kubernetes prints an IntOrString as a bad value: through its String(), unquoted. */
export function intOrStringBadValue(v: IntOrString): BadValue {
  return { goSyntax: String(v) };
}

/** apps validation's ValidatePositiveIntOrPercent: a percentage string, or an int that is not negative. */
export function validatePositiveIntOrPercent(v: IntOrString, path: FieldPath): FieldError[] {
  if (typeof v === 'string') return isValidPercent(v).map((m) => fieldError.invalid(path, intOrStringBadValue(v), m));
  return v < 0 ? [fieldError.invalid(path, v, 'must be greater than or equal to 0')] : [];
}

/** apps validation's IsNotMoreThan100Percent. */
export function isNotMoreThan100Percent(v: IntOrString, path: FieldPath): FieldError[] {
  if (typeof v !== 'string' || isValidPercent(v).length > 0) return [];
  const n = Number(v.slice(0, -1));
  return n <= 100 ? [] : [fieldError.invalid(path, intOrStringBadValue(v), 'must not be greater than 100%')];
}
