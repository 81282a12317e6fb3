// helper.DefaultNormalizeScore: scales scores to 0..max by the highest one, reversed when fewer is better.

import type { NodeScore } from '../framework.js';

export function defaultNormalizeScore(max: number, reverse: boolean, scores: NodeScore[]): void {
  let top = 0;
  for (const s of scores) if (s.score > top) top = s.score;
  if (top === 0) {
    if (reverse) for (const s of scores) s.score = max;
    return;
  }
  for (const s of scores) {
    // Integer division, as Go's int64 arithmetic does.
    const v = Math.trunc((max * s.score) / top);
    s.score = reverse ? max - v : v;
  }
}
