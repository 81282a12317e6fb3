// The smallest failing sub-history, found by greedy deletion (remove an operation while the rest stays
// non-linearizable), then explained: which operations must precede which in real time, and where the
// closest legal order breaks.
import { checkLinearizable, type LinOp, type Model } from './linearizable.js';

export interface Witness<I, O> {
  ops: LinOp<I, O>[];
  /** Sentences for a reader. */
  explanation: string[];
}

/**
 * `admissible` keeps the deletion honest: a sub-history that drops the write a remaining read observed
 * fails for an artificial reason, so such candidates are never considered.
 */
export function minimizeWitness<S, I, O>(
  model: Model<S, I, O>,
  ops: readonly LinOp<I, O>[],
  budgetMs: number,
  admissible: (cand: LinOp<I, O>[]) => boolean = () => true,
): LinOp<I, O>[] {
  const deadline = Date.now() + budgetMs;
  let cur = [...ops];
  const stillBad = (cand: LinOp<I, O>[]): boolean => checkLinearizable(model, cand, { deadline: Math.min(deadline + 1000, Date.now() + 2000), maxSteps: 200_000 }).valid === false;
  // Halving first (drop big chunks), then single operations from the latest back: an operation that
  // others depend on (the write a read observed) only becomes removable once its dependents are gone.
  for (let chunk = Math.floor(cur.length / 2); chunk >= 2; chunk = Math.floor(chunk / 2)) {
    for (let i = 0; i < cur.length && Date.now() < deadline; ) {
      const cand = [...cur.slice(0, i), ...cur.slice(i + chunk)];
      if (cand.length > 0 && admissible(cand) && stillBad(cand)) cur = cand;
      else i += chunk;
    }
  }
  for (let changed = true; changed && Date.now() < deadline; ) {
    changed = false;
    for (let i = cur.length - 1; i >= 0 && Date.now() < deadline; i--) {
      const cand = [...cur.slice(0, i), ...cur.slice(i + 1)];
      if (cand.length > 0 && admissible(cand) && stillBad(cand)) {
        cur = cand;
        changed = true;
      }
    }
  }
  return cur;
}

function fmtT(ms: number): string {
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(3)}s` : '∞';
}

export function explainWitness<S, I, O>(
  model: Model<S, I, O>,
  ops: LinOp<I, O>[],
  describe: (i: I, o: O | undefined) => string,
  whyIllegal: (s: S, i: I, o: O | undefined) => string,
  label: (op: LinOp<I, O>) => string,
): string[] {
  const sorted = [...ops].sort((a, b) => a.call - b.call);
  const name = new Map(sorted.map((o, i) => [o.id, String.fromCharCode(65 + (i % 26)) + (i >= 26 ? String(Math.floor(i / 26)) : '')]));
  const lines: string[] = [];
  for (const o of sorted) {
    lines.push(`${name.get(o.id)}: ${label(o)} ${describe(o.input, o.output)}, invoked ${fmtT(o.call)}, ${o.output === undefined ? 'never confirmed' : `returned ${fmtT(o.ret)}`}.`);
  }
  // Real-time order, transitively reduced: a before b when a returned before b was invoked and no c sits between.
  const prec = (a: LinOp<I, O>, b: LinOp<I, O>): boolean => a.output !== undefined && a.ret < b.call;
  const before: string[] = [];
  for (const a of sorted) for (const b of sorted) if (prec(a, b) && !sorted.some((c) => prec(a, c) && prec(c, b))) before.push(`${name.get(a.id)} before ${name.get(b.id)}`);
  if (before.length && before.length <= 30) lines.push(`Real time forces ${before.join(', ')} (each finished before the next began).`);
  // Small witnesses: try every order allowed by real time; report the one that gets furthest.
  if (sorted.length <= 7) {
    let best: { order: LinOp<I, O>[]; at: number; why: string } | undefined;
    const perm = (done: LinOp<I, O>[], state: S, rest: LinOp<I, O>[]): void => {
      for (const o of rest) {
        if (rest.some((p) => p !== o && p.output !== undefined && p.ret < o.call)) continue; // p must come first
        const next = model.step(state, o.input, o.output);
        if (next === undefined) {
          if (!best || done.length > best.at) best = { order: [...done, o], at: done.length, why: whyIllegal(state, o.input, o.output) };
          continue;
        }
        perm([...done, o], next, rest.filter((x) => x !== o));
      }
    };
    perm([], model.init, sorted);
    if (best) {
      const b = best;
      lines.push(
        `No order consistent with real time works. The closest is ${b.order.slice(0, b.at + 1).map((o) => name.get(o.id)).join(' → ')}: at ${name.get(b.order[b.at]!.id)}, ${b.why}.`,
      );
    }
  } else {
    lines.push(`No order of these ${sorted.length} operations consistent with real time explains every result.`);
  }
  return lines;
}
