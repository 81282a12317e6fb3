// client-go's LeaderElector on a coordination.k8s.io/v1 Lease. A candidate polls the Lease every retry
// period; it judges the holder's lease expired by its own monotonic clock: leaseDurationSeconds after it
// last saw the record change, never by comparing renewTime with its wall clock. The leader renews every
// retry period and gives up when no renewal succeeds within the renew deadline (or it sees another
// holder). On a graceful stop it releases the Lease (holderIdentity '', as ReleaseOnCancel does), so the
// next candidate takes over within one retry period. Leadership is not exclusive in time (a paused
// leader may still act): every write a leader makes should carry fencingToken(), which the API server
// checks against the Lease in the same transaction as the write (fencedClient()).
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { isAlreadyExists, isConflict, isNotFound } from './api-status-error.js';
import { realClock, sleepOn, type Clock } from './clock.js';
import { FENCING_HEADER, fencingTokenOf, leaseRecordOf, microTime, sameLeaseRecord, type LeaseObject, type LeaseRecord } from './lease-record.js';
import { ResourceClient } from './resource-client.js';
import { LEASES } from './resource-types.js';
import type { RestClient } from './rest-client.js';

export interface LeaderCallbacks {
  /**
   * Called once this candidate holds the Lease; `signal` aborts when it stops leading. A returned promise
   * is awaited (after the abort) before the Lease is released, so the leader's last writes finish first.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called after leading ended (lost or stopped); not called when this candidate never led. */
  onStoppedLeading?(): void;
  /** Called when the observed holder changes (this candidate included). */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectionTiming {
  /** How long a candidate waits after it last saw the record change before taking over. */
  readonly leaseDurationMs: number;
  /** How long the leader keeps trying to renew before it gives up. */
  readonly renewDeadlineMs: number;
  /** Between attempts, to acquire and to renew. */
  readonly retryPeriodMs: number;
}

/**
 * Setpoint's defaults: failover within 3 s of a leader's death. A candidate notices the holder's last
 * renewal within one (jittered) retry period and takes over at its first attempt past one lease duration
 * after that: at worst lease + 2 × 1.2 × retry = 2 + 0.96 s. The renew deadline leaves the leader 0.5 s
 * to stop acting before anyone may take over, and three renew attempts within it.
 */
export const SETPOINT_LEADER_ELECTION_TIMING: LeaderElectionTiming = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 400 };

/** client-go's JitterFactor is 1.2 (a wait of 1–2.2 periods); a smaller one keeps failover bounded. */
const ACQUIRE_JITTER = 0.2;

export interface LeaderElectionConfig extends LeaderElectionTiming {
  readonly lock: { readonly namespace: string; readonly name: string };
  /** Unique per process: `hostname_uuid` by default, as kube-scheduler's. Must not contain '/'. */
  readonly identity?: string;
  /** Release the Lease when run()'s signal aborts (default true). */
  readonly releaseOnCancel?: boolean;
  readonly callbacks: LeaderCallbacks;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** In [0, 1): the acquire loop's jitter (tests pin it). */
  readonly random?: () => number;
}

export class LeaderElectionConfigError extends Error {
  readonly code = 'LEADER_ELECTION_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'LeaderElectionConfigError';
  }
}

/** client-go's NewLeaderElector checks. */
export function validateTiming(t: LeaderElectionTiming): void {
  if (!(t.retryPeriodMs > 0)) throw new LeaderElectionConfigError('retryPeriod must be greater than zero');
  if (!(t.leaseDurationMs > t.renewDeadlineMs)) throw new LeaderElectionConfigError('leaseDuration must be greater than renewDeadline');
  if (!(t.renewDeadlineMs > t.retryPeriodMs * (1 + ACQUIRE_JITTER))) throw new LeaderElectionConfigError(`renewDeadline must be greater than retryPeriod*${1 + ACQUIRE_JITTER}`);
  if (t.leaseDurationMs % 1000 !== 0) throw new LeaderElectionConfigError('leaseDuration must be a whole number of seconds (a Lease holds leaseDurationSeconds)');
}

export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

type Attempt = 'acquired' | 'held' | 'failed';

export class LeaderElector {
  readonly identity: string;
  private readonly leases: ResourceClient<LeaseObject>;
  private readonly clock: Clock;
  private observed: LeaseRecord | undefined;
  private observedRv = '';
  /** clock.now() when the record was last seen to change: the basis of expiry. */
  private observedTime = 0;
  private reportedLeader: string | undefined;
  /** The transitions count of the holding this elector has (or last had). */
  private heldTransitions: number | undefined;
  private leading = false;
  private ran = false;

  constructor(
    rest: RestClient,
    private readonly config: LeaderElectionConfig,
  ) {
    validateTiming(config);
    this.identity = config.identity ?? defaultIdentity();
    if (this.identity === '' || this.identity.includes('/')) throw new LeaderElectionConfigError(`identity ${JSON.stringify(this.identity)} must be non-empty and contain no '/'`);
    this.leases = new ResourceClient<LeaseObject>(rest, LEASES);
    this.clock = config.clock ?? realClock;
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder last observed ('' when released or unknown). */
  getLeader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /**
   * The fencing token of this elector's holding. Before it ever led, or after it lost, the token is
   * still this identity's, so a write made then is refused rather than sent unfenced.
   */
  fencingToken(): string {
    const transitions = this.heldTransitions ?? this.observed?.leaseTransitions ?? 0;
    return fencingTokenOf(this.config.lock.namespace, this.config.lock.name, this.identity, transitions);
  }

  /** A client on the same connection whose every write carries this elector's fencing token. */
  fencedClient(rest: RestClient): RestClient {
    return rest.withWriteHeaders(() => ({ [FENCING_HEADER]: this.fencingToken() }));
  }

  /** Campaigns, leads, and returns when leading ended or the signal aborted. Runs once per elector. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.ran) throw new LeaderElectionConfigError('a LeaderElector runs once');
    this.ran = true;
    if (!(await this.acquire(signal))) return;
    const leadership = new AbortController();
    // Every informer, worker and timer of the loops listens on it: not a leak.
    setMaxListeners(0, leadership.signal);
    const onAbort = (): void => leadership.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let led: Promise<void> = Promise.resolve();
    try {
      // A callback that throws, at once or later, ends nothing but itself: the renewals go on.
      led = (async () => this.config.callbacks.onStartedLeading(leadership.signal))().catch((e: unknown) => this.config.log?.error({ err: e }, 'leader election: onStartedLeading failed'));
      await this.renew(signal, leadership.signal);
    } finally {
      signal.removeEventListener('abort', onAbort);
      leadership.abort();
      this.leading = false;
      await led;
      if (signal.aborted && this.config.releaseOnCancel !== false) await this.release();
      this.config.callbacks.onStoppedLeading?.();
    }
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    const { lock } = this.config;
    this.config.log?.info({ lease: `${lock.namespace}/${lock.name}`, identity: this.identity }, 'attempting to acquire leader lease');
    for (;;) {
      if (signal.aborted) return false;
      if ((await this.tryAcquireOrRenew(this.config.retryPeriodMs * 5)) === 'acquired') {
        this.leading = true;
        this.config.log?.info({ lease: `${lock.namespace}/${lock.name}`, identity: this.identity, transitions: this.heldTransitions }, 'successfully acquired lease');
        return true;
      }
      const wait = this.config.retryPeriodMs * (1 + ACQUIRE_JITTER * (this.config.random ?? Math.random)());
      if (!(await sleepOn(this.clock, wait, signal))) return false;
    }
  }

  /** Renews every retry period until a round passes its deadline, another holder is seen, or either signal aborts. */
  private async renew(signal: AbortSignal, leadership: AbortSignal): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs } = this.config;
    for (;;) {
      if (!(await sleepOn(this.clock, retryPeriodMs, signal)) || leadership.aborted) return;
      const deadline = this.clock.now() + renewDeadlineMs;
      let outcome: Attempt = 'failed';
      for (;;) {
        const left = deadline - this.clock.now();
        if (left <= 0) break;
        outcome = await this.tryAcquireOrRenew(left);
        if (outcome !== 'failed' || signal.aborted) break;
        const wait = Math.min(retryPeriodMs, deadline - this.clock.now());
        if (wait <= 0 || !(await sleepOn(this.clock, wait, signal))) break;
      }
      if (signal.aborted) return;
      if (outcome !== 'acquired') {
        this.config.log?.warn({ lease: `${this.config.lock.namespace}/${this.config.lock.name}`, identity: this.identity, holder: this.getLeader(), outcome }, 'failed to renew lease: leader election lost');
        return;
      }
    }
  }

  private observe(rec: LeaseRecord, rv: string): void {
    if (!sameLeaseRecord(this.observed, rec)) {
      this.observed = rec;
      this.observedTime = this.clock.now();
    }
    this.observedRv = rv;
    if (rec.holderIdentity !== this.reportedLeader) {
      this.reportedLeader = rec.holderIdentity;
      if (rec.holderIdentity !== '') this.config.callbacks.onNewLeader?.(rec.holderIdentity);
    }
  }

  /** One attempt: create the Lease, take it over once expired or released, or renew our own. */
  private async tryAcquireOrRenew(timeoutMs: number): Promise<Attempt> {
    const { lock } = this.config;
    const wall = microTime(this.clock.wallNow());
    const mine = (prev: LeaseRecord | undefined): LeaseRecord => {
      const ours = prev !== undefined && prev.holderIdentity === this.identity && this.heldTransitions === prev.leaseTransitions;
      return {
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.round(this.config.leaseDurationMs / 1000),
        acquireTime: ours ? prev.acquireTime : wall,
        renewTime: wall,
        leaseTransitions: prev === undefined ? 0 : ours ? prev.leaseTransitions : prev.leaseTransitions + 1,
      };
    };
    let current: LeaseObject;
    try {
      current = await this.leases.rest.request<LeaseObject>({ path: this.leases.path(lock.namespace, lock.name), timeoutMs });
    } catch (e) {
      if (!isNotFound(e)) return this.failed(e, 'get');
      const rec = mine(undefined);
      try {
        const made = await this.leases.rest.request<LeaseObject>({
          method: 'POST',
          path: this.leases.path(lock.namespace),
          timeoutMs: Math.max(1, timeoutMs),
          body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: lock.name, namespace: lock.namespace }, spec: rec },
        });
        return this.took(rec, made);
      } catch (err) {
        return isAlreadyExists(err) ? 'failed' : this.failed(err, 'create');
      }
    }
    const prev = leaseRecordOf(current);
    this.observe(prev, current.metadata?.resourceVersion ?? '');
    const ours = prev.holderIdentity === this.identity && this.heldTransitions === prev.leaseTransitions;
    if (!ours && prev.holderIdentity !== '' && this.observedTime + prev.leaseDurationSeconds * 1000 > this.clock.now()) return 'held';
    // A holding of ours from before (another elector with this identity) is one we did not make: take it anew.
    const rec = mine(prev);
    try {
      const updated = await this.leases.rest.request<LeaseObject>({
        method: 'PUT',
        path: this.leases.path(lock.namespace, lock.name),
        timeoutMs: Math.max(1, timeoutMs),
        body: { ...current, spec: { ...(current.spec ?? {}), ...rec }, metadata: { ...current.metadata, resourceVersion: this.observedRv } },
      });
      return this.took(rec, updated);
    } catch (e) {
      // Another candidate wrote first: the next attempt reads its record.
      return isConflict(e) ? 'failed' : this.failed(e, 'update');
    }
  }

  private took(rec: LeaseRecord, stored: LeaseObject): Attempt {
    this.heldTransitions = rec.leaseTransitions;
    this.observe(rec, stored.metadata?.resourceVersion ?? '');
    // Our own write is a change we saw now.
    this.observedTime = this.clock.now();
    return 'acquired';
  }

  private failed(e: unknown, op: string): Attempt {
    this.config.log?.warn({ err: e, op, lease: `${this.config.lock.namespace}/${this.config.lock.name}` }, 'leader election: lease request failed');
    return 'failed';
  }

  /** ReleaseOnCancel: holderIdentity '' and a 1 s duration, keeping the transitions count. */
  private async release(): Promise<void> {
    const { lock } = this.config;
    if (this.observed?.holderIdentity !== this.identity || this.heldTransitions !== this.observed.leaseTransitions) return;
    const wall = microTime(this.clock.wallNow());
    const rec: LeaseRecord = { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: wall, renewTime: wall, leaseTransitions: this.observed.leaseTransitions };
    try {
      await this.leases.rest.request({
        method: 'PUT',
        path: this.leases.path(lock.namespace, lock.name),
        timeoutMs: this.config.renewDeadlineMs,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: lock.name, namespace: lock.namespace, resourceVersion: this.observedRv }, spec: rec },
      });
      this.observe(rec, '');
      this.config.log?.info({ lease: `${lock.namespace}/${lock.name}`, identity: this.identity }, 'released leader lease');
    } catch (e) {
      this.config.log?.warn({ err: e, lease: `${lock.namespace}/${lock.name}` }, 'failed to release the leader lease');
    }
  }
}
