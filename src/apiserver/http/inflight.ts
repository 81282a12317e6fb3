// Kubernetes' max-in-flight filter: at most --max-requests-inflight read-only and
// --max-mutating-requests-inflight mutating requests at once; one more is refused at once with 429 and
// Retry-After: 1 (never queued, so a flood costs a refusal each). Long-running requests are not counted,
// and system:masters is never refused, as in Kubernetes. 0 turns a limit off.
import { MASTERS_GROUP, type UserInfo } from '../authn/user-info.js';

export type RequestKind = 'readOnly' | 'mutating';

export class InflightLimiter {
  private readonly current: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };
  /** The most in flight since the last watermark read (apiserver_current_inflight_requests). */
  private readonly peak: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };

  constructor(private readonly limits: Record<RequestKind, number>) {}

  /** A release function, or undefined when the request must be refused. */
  tryAcquire(kind: RequestKind, user: UserInfo): (() => void) | undefined {
    const limit = this.limits[kind];
    if (limit !== 0 && this.current[kind] >= limit && !user.groups.includes(MASTERS_GROUP)) return undefined;
    this.current[kind]++;
    if (this.current[kind] > this.peak[kind]) this.peak[kind] = this.current[kind];
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.current[kind]--;
    };
  }

  inFlight(kind: RequestKind): number {
    return this.current[kind];
  }

  /** The highest count since the previous call, then restarts from the current one. */
  takeWatermark(kind: RequestKind): number {
    const w = this.peak[kind];
    this.peak[kind] = this.current[kind];
    return w;
  }
}
