// The smallest failing sub-history, found by greedy deletion (remove an operation while the rest stays
// non-linearizable), then explained: which operations must precede which in real time, and where the
// closest legal order breaks.
import { checkLinearizable, type LinOp, type Model } from './linearizable.js';

export interface Witness<I, O> {
  ops: LinOp<I, O>[];
  /** Sentences for a reader. */
  explanation: string[];
}

export function minimizeWitness<S, I, O>(model: Model<S, I, O>, ops: readonly LinOp<I, O>[], budgetMs: number): LinOp<I, O>[] {
  const deadline = Date.now() + budgetMs;
  let cur = [...ops];
  const stillBad = (cand: LinOp<I, O>[]): boolean => checkLinearizable(model, cand, { deadline: Math.min(deadline + 1000, Date.now() + 2000), maxSteps: 200_000 }).valid === false;
  // Halving first (drop big chunks), then single operations.
  for (let chunk = Math.floor(cur.length / 2); chunk >= 1; chunk = Math.floor(chunk / 2)) {
    for (let i = 0; i < cur.length && Date.now() < deadline; ) {
      const cand = [...cur.slice(0, i), ...cur.slice(i + chunk)];
      if (cand.length > 0 && stillBad(cand)) cur = cand;
      else i += chunk;
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
  const before: string[] = [];
  for (const a of sorted) for (const b of sorted) if (a.output !== undefined && a.ret < b.call) before.push(`${name.get(a.id)} before ${name.get(b.id)}`);
  if (before.length) lines.push(`Real time forces ${before.join(', ')} (each finished before the other began).`);
  // Small witnesses: try every order allowed by real time; report the one that gets furthest.
  if (sorted.length <= 7) {
    let best: { order: LinOp<I, O>[]; at: number; why: string } | undefined;
    const perm = (done: LinOp<I, O>[], rest: LinOp<I, O>[]): void => {
      if (rest.length === 0) return;
      for (const o of rest) {
        if (rest.some((p) => p !== o && p.output !== undefined && p.ret < o.call)) continue; // p must come first
        perm([...done, o], rest.filter((x) => x !== o));
      }
      if (done.length === 0) return;
      let s = model.init;
      for (let i = 0; i < done.length; i++) {
        const o = done[i]!;
        const n = model.step(s, o.input, o.output);
        if (n === undefined) {
          if (!best || i > best.at) best = { order: done, at: i, why: whyIllegal(s, o.input, o.output) };
          return;
        }
        s = n;
      }
    };
    perm([], sorted);
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
