// v1helper's toleration matching: Toleration.ToleratesTaint and FindMatchingUntoleratedTaint.

import type { Taint, Toleration } from '../api-types.js';

export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false;
  if (t.key !== undefined && t.key !== '' && t.key !== taint.key) return false;
  switch (t.operator ?? '') {
    case '':
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** The first taint that passes the filter and no toleration tolerates. */
export function findUntoleratedTaint(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
  filter: (t: Taint) => boolean,
): Taint | undefined {
  for (const taint of taints) {
    if (!filter(taint)) continue;
    if (!tolerations.some((t) => toleratesTaint(t, taint))) return taint;
  }
  return undefined;
}
