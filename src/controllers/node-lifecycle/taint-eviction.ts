// Taint-based eviction as Kubernetes' taint eviction controller decides it: a pod on a node with NoExecute
// taints that it does not all tolerate goes at once; one that tolerates them all goes after the shortest
// tolerationSeconds among the tolerations used (one without tolerationSeconds tolerates forever). The
// clock starts when the controller first sees the pod under the taints, and stops when they go.
import type { Clock } from '../../client/clock.js';
import { toleratesTaint } from '../../scheduler/plugins/tolerations.js';
import type { NodeTaint, PodToleration } from './node-types.js';

export type EvictionDelay = { readonly kind: 'never' } | { readonly kind: 'after'; readonly ms: number };

/** getMinTolerationTime over the first toleration matching each taint. */
export function evictionDelay(taints: readonly NodeTaint[], tolerations: readonly PodToleration[]): EvictionDelay {
  if (taints.length === 0) return { kind: 'never' };
  let min = -1;
  for (const taint of taints) {
    const used = tolerations.find((t) => toleratesTaint(t, taint));
    if (used === undefined) return { kind: 'after', ms: 0 };
    const s = used.tolerationSeconds;
    if (s === undefined || s === null) continue;
    if (s <= 0) return { kind: 'after', ms: 0 };
    if (min < 0 || s < min) min = s;
  }
  return min < 0 ? { kind: 'never' } : { kind: 'after', ms: min * 1000 };
}

export type EvictionPlan = { readonly kind: 'none'; readonly cancelled: boolean } | { readonly kind: 'evict' } | { readonly kind: 'wait'; readonly ms: number };

/** When each pod came under its node's NoExecute taints, so the toleration is counted from then. */
export class EvictionTimer {
  private readonly since = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  plan(podKey: string, delay: EvictionDelay): EvictionPlan {
    if (delay.kind === 'never') {
      const cancelled = this.since.delete(podKey);
      return { kind: 'none', cancelled };
    }
    let start = this.since.get(podKey);
    if (start === undefined) this.since.set(podKey, (start = this.clock.now()));
    const left = start + delay.ms - this.clock.now();
    return left <= 0 ? { kind: 'evict' } : { kind: 'wait', ms: left };
  }

  /** Whether an eviction of this pod is counting down (for the "Cancelling deletion" event). */
  pending(podKey: string): boolean {
    return this.since.has(podKey);
  }

  forget(podKey: string): void {
    this.since.delete(podKey);
  }
}
