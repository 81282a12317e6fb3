// Linearizability of one independent part of a history (one key), by Wing & Gong / Lowe's search:
// walk the time-ordered call/return entries, linearize a call as early as the model allows, backtrack
// when a return is reached whose call is not yet linearized, and memoize (linearized set, state) so no
// configuration is explored twice. An operation with an unknown outcome returns "at infinity": it may
// take effect at any point after its call, or never (taking effect last is the same as never).
// Written from the published algorithm; bounded by a step and time budget, past which it answers unknown.

export interface Model<S, I, O> {
  init: S;
  /** Next state if `input` producing `output` is legal in `state`; `output` undefined means unknown. */
  step(state: S, input: I, output: O | undefined): S | undefined;
  /** A string that identifies the state for memoization. */
  key(state: S): string;
}

export interface LinOp<I, O> {
  id: number;
  input: I;
  /** Undefined: the outcome is unknown (the op returns at infinity). */
  output: O | undefined;
  call: number;
  ret: number;
}

export type LinResult =
  | { valid: true; explored: number }
  | {
      valid: false;
      explored: number;
      /** Ids of the longest prefix the search could linearize, in linearization order. */
      longest: number[];
      /** The op whose return the search could not get past with that prefix. */
      blockedAt: number;
    }
  | { valid: 'unknown'; explored: number; reason: string };

interface Entry {
  op: number; // index into ops
  isCall: boolean;
  time: number;
  match: Entry | undefined; // call → its return
  prev: Entry | undefined;
  next: Entry | undefined;
}

class Bits {
  private readonly w: Uint32Array;
  constructor(n: number) {
    this.w = new Uint32Array(Math.ceil(n / 32) || 1);
  }
  set(i: number): void {
    this.w[i >>> 5]! |= 1 << (i & 31);
  }
  clear(i: number): void {
    this.w[i >>> 5]! &= ~(1 << (i & 31));
  }
  key(): string {
    let s = '';
    for (const x of this.w) s += x.toString(36) + '.';
    return s;
  }
}

export interface CheckBudget {
  maxSteps: number;
  deadline: number; // Date.now() value
}

export function checkLinearizable<S, I, O>(model: Model<S, I, O>, ops: readonly LinOp<I, O>[], budget?: Partial<CheckBudget>): LinResult {
  const maxSteps = budget?.maxSteps ?? 5_000_000;
  const deadline = budget?.deadline ?? Date.now() + 30_000;
  // Build the entry list: calls before returns at equal times, so touching operations count as concurrent.
  const entries: Entry[] = [];
  ops.forEach((o, i) => {
    const call: Entry = { op: i, isCall: true, time: o.call, match: undefined, prev: undefined, next: undefined };
    const ret: Entry = { op: i, isCall: false, time: o.output === undefined ? Infinity : o.ret, match: undefined, prev: undefined, next: undefined };
    call.match = ret;
    entries.push(call, ret);
  });
  entries.sort((a, b) => a.time - b.time || (a.isCall === b.isCall ? a.op - b.op : a.isCall ? -1 : 1));
  const head: Entry = { op: -1, isCall: false, time: -Infinity, match: undefined, prev: undefined, next: undefined };
  let prev = head;
  for (const e of entries) {
    prev.next = e;
    e.prev = prev;
    prev = e;
  }

  const lift = (e: Entry): void => {
    e.prev!.next = e.next;
    if (e.next) e.next.prev = e.prev;
    const r = e.match!;
    r.prev!.next = r.next;
    if (r.next) r.next.prev = r.prev;
  };
  const unlift = (e: Entry): void => {
    const r = e.match!;
    r.prev!.next = r;
    if (r.next) r.next.prev = r;
    e.prev!.next = e;
    if (e.next) e.next.prev = e;
  };

  const bits = new Bits(ops.length);
  const seen = new Set<string>();
  const stack: { entry: Entry; state: S }[] = [];
  let state = model.init;
  let entry = head.next;
  let steps = 0;
  let longest: number[] = [];
  let blockedAt = -1;

  while (head.next !== undefined) {
    if (++steps > maxSteps || (steps % 4096 === 0 && Date.now() > deadline)) {
      return { valid: 'unknown', explored: steps, reason: steps > maxSteps ? `gave up after ${maxSteps} search steps` : 'gave up: time budget spent' };
    }
    if (entry === undefined) break; // cannot happen: every remaining call has its return after it
    const op = ops[entry.op]!;
    if (entry.isCall) {
      const next = model.step(state, op.input, op.output);
      if (next !== undefined) {
        bits.set(entry.op);
        const k = bits.key() + '|' + model.key(next);
        if (!seen.has(k)) {
          seen.add(k);
          stack.push({ entry, state });
          state = next;
          lift(entry);
          entry = head.next;
          continue;
        }
        bits.clear(entry.op);
      }
      entry = entry.next;
    } else {
      if (stack.length >= longest.length) {
        longest = stack.map((s) => ops[s.entry.op]!.id);
        blockedAt = op.id;
      }
      const top = stack.pop();
      if (!top) return { valid: false, explored: steps, longest, blockedAt };
      state = top.state;
      bits.clear(top.entry.op);
      unlift(top.entry);
      entry = top.entry.next;
    }
  }
  return { valid: true, explored: steps };
}
