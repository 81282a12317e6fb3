// The metrics a member updates, by role. The Prometheus registry (embed/metrics.ts) provides objects with these
// shapes under etcd's metric names; a member without metrics simply skips the updates.

export interface Gauge {
  set(v: number): void;
  inc(v?: number): void;
  dec(v?: number): void;
}

export interface Counter {
  inc(v?: number): void;
}

export interface Histogram {
  observe(v: number): void;
}

export interface MemberMetrics {
  readonly hasLeader: Gauge;
  readonly leaderChanges: Counter;
  readonly proposalsCommitted: Gauge;
  readonly proposalsApplied: Gauge;
  readonly proposalsPending: Gauge;
  readonly proposalsFailed: Counter;
  readonly walFsyncSeconds: Histogram;
  readonly dbSize: Gauge;
}
