// Proposals and their waiters: a request becomes a log entry (batched per turn of the event loop), and its
// caller waits until the entry applies (settle) or its deadline passes. Also the waits for "everything
// committed so far is applied" that lease answers need.
import type { InternalRequest } from './requests.js';
import type { MemberCore } from './member-core.js';
import type { TimerHandle } from './member-clock.js';
import { RaftError } from '../../raft/errors.js';
import { NONE } from '../../raft/types.js';
import { etcdError } from '../../kv/errors.js';
import { encodeRequest } from './requests.js';

interface Waiter {
  resolve(v: unknown): void;
  reject(e: unknown): void;
  /** The member clock's now() after which the request fails with a timeout. */
  readonly deadline: number;
  /** What was proposed ('put', 'txn', 'confChange', ...), for the slow-request warning. */
  readonly kind: string;
}

/** A caller of waitAppliedCommitted(): released once the applied index reaches `index`. */
interface AppliedWaiter {
  readonly index: number;
  resolve(): void;
  reject(e: unknown): void;
}

/** A proposal applied later than this after it was made is logged (etcd warns of applies over 100 ms). */
const SLOW_REQUEST_MS = 100;
/** Slow-request warnings: at most one line this often, counting the slow requests since the last one. */
const SLOW_LOG_EVERY_MS = 1000;
/** The apply loop may fall this far behind commit before new requests are refused (etcd: 5000). */
const MAX_GAP_BETWEEN_APPLY_AND_COMMIT = 5000;

export class Proposals {
  /** Proposals waiting to be applied, oldest first (all have the same timeout, so deadlines ascend). */
  private readonly waiters = new Map<string, Waiter>();
  /** One timer for all waiters, set for the oldest one's deadline (see sweepWaiters). */
  private waiterTimer: TimerHandle | undefined;
  /** Callers of waitAppliedCommitted(), oldest first. */
  private appliedWaiters: AppliedWaiter[] = [];
  /** Proposals gathered in this turn of the event loop, proposed together (one append, one message). */
  private batch: Uint8Array[] = [];
  private batchScheduled = false;
  private slow = { count: 0, maxMs: 0, kind: '', loggedAt: -Infinity };

  constructor(private readonly c: MemberCore<unknown>) {}

  checkAcceptingWrites(): void {
    if (this.c.stopped) throw etcdError('STOPPED');
    if (this.c.node.committed() - this.c.node.applied() > MAX_GAP_BETWEEN_APPLY_AND_COMMIT) throw etcdError('TOO_MANY_REQUESTS');
  }

  /** Proposes a request and resolves with its applied result. */
  proposeRequest<T>(r: InternalRequest): Promise<T> {
    this.checkAcceptingWrites();
    const data = encodeRequest(r);
    return this.waitFor<T>(r.id, r.t, () => this.enqueue(data));
  }

  /**
   * A promise settled when request `id` is applied (settle) or fails. Waiters share one timer instead of
   * a timer each: with thousands of requests in flight, a timer, two closures and a `finally` per request
   * were garbage that every scavenge had to copy while the request waited.
   */
  waitFor<T>(id: string, kind: string, propose: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiters.set(id, { resolve: resolve as (v: unknown) => void, reject, deadline: this.c.clock.now() + this.c.requestTimeoutMs, kind });
      this.c.cfg.metrics?.proposalsPending.inc();
      this.waiterTimer ??= this.c.clock.setTimeout(() => this.sweepWaiters(), this.c.requestTimeoutMs);
      try {
        propose();
      } catch (e) {
        this.fail(id, e);
      }
    });
  }

  /** Whether a client of this member waits for proposal `id`. */
  isWaiting(id: string): boolean {
    return this.waiters.has(id);
  }

  /** Settles the proposal `id` with its applied result or its error (a no-op if nobody waits here). */
  settle(id: string, err: unknown, result: unknown): void {
    const w = this.take(id);
    if (!w) return;
    const took = this.c.clock.now() - (w.deadline - this.c.requestTimeoutMs);
    if (took > SLOW_REQUEST_MS) this.noteSlow(took, w.kind);
    if (err) {
      this.c.cfg.metrics?.proposalsFailed.inc();
      w.reject(err);
    } else w.resolve(result);
  }

  /** Fails everything waiting: the member stops. */
  close(err: unknown): void {
    for (const w of this.appliedWaiters.splice(0)) w.reject(err);
    for (const id of [...this.waiters.keys()]) this.fail(id, err);
    this.c.clock.clearTimeout(this.waiterTimer);
  }

  /**
   * Says why writes are slow where an operator looks: a request applied more than 100 ms after this
   * member proposed it is counted, and a warning goes out at most once a second with the count since the
   * last one and the slowest (the next line after a quiet spell comes with the first slow request).
   */
  private noteSlow(took: number, kind: string): void {
    const s = this.slow;
    s.count++;
    if (took > s.maxMs) {
      s.maxMs = took;
      s.kind = kind;
    }
    const now = this.c.clock.now();
    if (now - s.loggedAt < SLOW_LOG_EVERY_MS) return;
    this.c.log.warn(
      { took: `${Math.round(s.maxMs)}ms`, expectedDuration: `${SLOW_REQUEST_MS}ms`, request: s.kind, slowRequests: s.count, role: this.c.softState.raftState },
      'request took too long',
    );
    this.slow = { count: 0, maxMs: 0, kind: '', loggedAt: now };
  }

  /** Rejects one waiting proposal, if it is still waiting. */
  private fail(id: string, err: unknown): void {
    this.take(id)?.reject(err);
  }

  /** Removes a proposal's waiter (it is about to be settled); undefined if it was no longer waiting. */
  private take(id: string): Waiter | undefined {
    const w = this.waiters.get(id);
    if (!w) return undefined;
    this.waiters.delete(id);
    this.c.cfg.metrics?.proposalsPending.dec();
    return w;
  }

  /** Fails the waiters whose deadline has passed (the oldest first) and sets the timer for the next one. */
  private sweepWaiters(): void {
    this.waiterTimer = undefined;
    const now = this.c.clock.now();
    for (const [id, w] of this.waiters) {
      if (w.deadline > now) {
        this.waiterTimer = this.c.clock.setTimeout(() => this.sweepWaiters(), w.deadline - now);
        return;
      }
      this.fail(id, etcdError(this.c.softState.lead === NONE ? 'TIMEOUT_DUE_TO_LEADER_FAIL' : 'TIMEOUT'));
    }
  }

  // ---- batching ----

  private enqueue(data: Uint8Array): void {
    this.batch.push(data);
    if (this.batchScheduled) return;
    this.batchScheduled = true;
    this.c.clock.setImmediate(() => this.flush());
  }

  /** Proposals held while there was no leader go now rather than at their next retry. */
  onLeaderFound(): void {
    if (this.batch.length > 0) this.c.clock.setImmediate(() => this.flush());
  }

  /** A follower's proposals and read requests go to the leader at once, not with the next Ready (RawNode.takeForwards). */
  sendForwards(): void {
    const fw = this.c.node.takeForwards();
    if (fw.length > 0) this.c.transport.send(fw);
  }

  /** Proposes everything gathered since the last turn as one batch; waits for a leader if there is none. */
  private flush(): void {
    this.batchScheduled = false;
    if (this.batch.length === 0 || this.c.stopped) return;
    if (this.c.softState.lead === NONE) {
      // Nobody to propose to yet: keep the batch and try again shortly (callers time out on their own).
      this.retryFlush();
      return;
    }
    const datas = this.batch;
    this.batch = [];
    try {
      this.c.node.proposeBatch(datas);
      this.sendForwards();
    } catch (e) {
      if (!(e instanceof RaftError) || e.code !== 'RAFT_PROPOSAL_DROPPED') throw e;
      // Leader transfer in progress or leadership just lost: retry after a beat; nothing was appended.
      this.batch = datas.concat(this.batch);
      this.retryFlush();
      return;
    }
    this.c.kick();
  }

  private retryFlush(): void {
    this.batchScheduled = true;
    this.c.clock.setTimeout(() => this.flush(), this.c.cfg.heartbeatMs);
  }

  // ---- waiting for the applied index ----

  /**
   * Resolves once this member has applied every entry committed when it was called (etcd's
   * waitAppliedIndex). A leader answers lease renewals, and lease questions forwarded by followers, from its
   * own leases, and it applies a commit only after telling its followers of it: without this wait, a client
   * granted a lease through a follower could have its first keep-alive answered "no such lease" (TTL 0) by a
   * leader that had not applied the grant yet, and its session would end at once.
   */
  waitAppliedCommitted(): Promise<void> {
    const index = this.c.node.committed();
    if (this.c.node.applied() >= index) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const w: AppliedWaiter = {
        index,
        resolve: () => {
          this.c.clock.clearTimeout(timer);
          resolve();
        },
        reject: (e) => {
          this.c.clock.clearTimeout(timer);
          reject(e);
        },
      };
      const timer = this.c.clock.setTimeout(() => {
        this.appliedWaiters = this.appliedWaiters.filter((x) => x !== w);
        reject(etcdError('TIMEOUT'));
      }, this.c.requestTimeoutMs);
      this.appliedWaiters.push(w);
    });
  }

  /** The Ready loop advanced: releases the waits the applied index now covers. */
  onApplied(): void {
    if (this.appliedWaiters.length === 0) return;
    const applied = this.c.node.applied();
    const still: AppliedWaiter[] = [];
    for (const w of this.appliedWaiters) {
      if (w.index <= applied) w.resolve();
      else still.push(w);
    }
    this.appliedWaiters = still;
  }
}
