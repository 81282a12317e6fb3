// ControllerExpectations with UID tracking (k/k pkg/controller/controller_utils.go): before a ReplicaSet
// creates or deletes pods it records how many adds and which deletions it expects to see in its informer;
// until it has seen them (or the record is older than the TTL, 5 minutes, when a watch event may have
// been lost) the ReplicaSet is not synced again, so it never creates twice for the same gap.
import type { Clock } from '../../client/clock.js';

export const EXPECTATIONS_TTL_MS = 5 * 60 * 1000;

interface Record {
  add: number;
  /** Keys (`namespace/name`) of pods whose deletion has not been observed yet. */
  dels: Set<string>;
  /** clock.now() when set. */
  at: number;
}

export class Expectations {
  private readonly records = new Map<string, Record>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = EXPECTATIONS_TTL_MS,
  ) {}

  /** True when nothing is pending for the key (or nothing was ever recorded, or the record expired). */
  satisfied(key: string): boolean {
    const r = this.records.get(key);
    if (r === undefined) return true;
    if (r.add <= 0 && r.dels.size === 0) return true;
    return this.clock.now() - r.at > this.ttlMs;
  }

  expectCreations(key: string, n: number): void {
    this.records.set(key, { add: n, dels: new Set(), at: this.clock.now() });
  }

  expectDeletions(key: string, podKeys: readonly string[]): void {
    this.records.set(key, { add: 0, dels: new Set(podKeys), at: this.clock.now() });
  }

  /** An add the controller made was seen (or will never happen: a failed or skipped create). */
  creationObserved(key: string): void {
    const r = this.records.get(key);
    if (r !== undefined && r.add > 0) r.add--;
  }

  /** A deletion of this pod was seen (or the delete failed). */
  deletionObserved(key: string, podKey: string): void {
    this.records.get(key)?.dels.delete(podKey);
  }

  delete(key: string): void {
    this.records.delete(key);
  }

  /** For tests and traces. */
  pending(key: string): { add: number; del: number } | undefined {
    const r = this.records.get(key);
    return r === undefined ? undefined : { add: r.add, del: r.dels.size };
  }
}
