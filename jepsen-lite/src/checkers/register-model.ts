// A read/write/compare-and-set register whose initial value is null (the key does not exist).
import type { Model } from './linearizable.js';

export type RegInput = { f: 'read' } | { f: 'write'; value: number } | { f: 'cas'; from: number; to: number };
/** read: the value seen (null: absent); cas: whether it succeeded; write: true. */
export type RegOutput = number | null | boolean;
export type RegState = number | null;

export const registerModel: Model<RegState, RegInput, RegOutput> = {
  init: null,
  step(state, input, output) {
    switch (input.f) {
      case 'read':
        if (output === undefined) return state;
        return output === state ? state : undefined;
      case 'write':
        return input.value;
      case 'cas':
        if (output === undefined) return state === input.from ? input.to : state;
        if (output === true) return state === input.from ? input.to : undefined;
        return state !== input.from ? state : undefined;
    }
  },
  key: (s) => String(s),
};

export function describeRegOp(input: RegInput, output: RegOutput | undefined): string {
  const out = (v: RegOutput | undefined): string => (v === undefined ? '?' : v === null ? 'nothing' : String(v));
  switch (input.f) {
    case 'read':
      return `read → ${out(output)}`;
    case 'write':
      return `write ${input.value}${output === undefined ? ' (outcome unknown)' : ''}`;
    case 'cas':
      return `cas ${input.from}→${input.to}${output === undefined ? ' (outcome unknown)' : output ? ' succeeded' : ' failed'}`;
  }
}

/** Why `input`/`output` cannot happen in `state`, in words. */
export function whyIllegal(state: RegState, input: RegInput, output: RegOutput | undefined): string {
  const held = state === null ? 'no value (the key was absent)' : `${state}`;
  switch (input.f) {
    case 'read':
      return `the read returned ${output === null ? 'nothing' : String(output)}, but the register held ${held}`;
    case 'cas':
      return output === true
        ? `the cas expected ${input.from} and succeeded, but the register held ${held}`
        : `the cas expected ${input.from} and failed, but the register held exactly ${input.from}`;
    case 'write':
      return 'a write is always legal';
  }
}
