// Linearizable reads: callers wait here until the member has confirmed, through Raft's ReadIndex, that
// its state is at least as new as any write acknowledged before the read began. Reads arriving together
// share one ReadIndex round; reads arriving during a round wait for the next one, which starts after it.
import type { ReadState } from '../../raft/types.js';
import type { MemberClock, TimerHandle } from './member-clock.js';
import type { PlantedLoopBug } from './planted-bugs.js';
import { etcdError } from '../../kv/errors.js';
import { realClock } from './member-clock.js';

interface Waiting {
  resolve(): void;
  reject(e: unknown): void;
  readonly deadline: number;
}

export interface ReadBarrierDeps {
  /** Issues a ReadIndex request with this context. */
  readIndex(ctx: Uint8Array): void;
  /**
   * Starts every context, so that no two members' contexts are equal: the leader keeps one pending request
   * per context and ignores a second one with the same context (it would never be answered).
   */
  readonly ctxPrefix: string;
  /** The applied index right now. */
  applied(): number;
  /** A round with no answer after this long asks again, with the same context (a lost message, a new leader). */
  readonly retryMs: number;
  /** A read waiting longer than this fails with "request timed out". */
  readonly timeoutMs: number;
  /** Deadlines and retries (default: Node's timers; the simulation's virtual clock under src/sim/). */
  readonly clock?: MemberClock;
  /** TEST ONLY (planted-bugs.ts): 'read-before-applied' releases a round as soon as its ReadState arrives. */
  readonly plantedBug?: PlantedLoopBug;
}

interface Round {
  readonly ctx: string;
  waiting: Waiting[];
  /** Known once the ReadState arrives: the read is safe when applied reaches it. */
  index: number | undefined;
  retry: TimerHandle;
}

export class ReadBarrier {
  private queued: Waiting[] = [];
  private round: Round | undefined;
  private seq = 0;
  private closed: unknown;
  private readonly clock: MemberClock;

  constructor(private readonly deps: ReadBarrierDeps) {
    this.clock = deps.clock ?? realClock;
  }

  wait(): Promise<void> {
    if (this.closed) return Promise.reject(this.closed);
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ resolve, reject, deadline: this.clock.now() + this.deps.timeoutMs });
      if (!this.round) queueMicrotask(() => this.startRound());
    });
  }

  private startRound(): void {
    if (this.round || this.queued.length === 0 || this.closed) return;
    const waiting = this.expire(this.queued);
    this.queued = [];
    if (waiting.length === 0) return;
    const ctx = `${this.deps.ctxPrefix}:${++this.seq}`;
    const retry = this.clock.setTimeout(() => this.retryRound(), this.deps.retryMs);
    this.round = { ctx, waiting, index: undefined, retry };
    this.deps.readIndex(Buffer.from(ctx));
  }

  /** Fails the reads past their deadline, returns the rest. */
  private expire(ws: Waiting[]): Waiting[] {
    const now = this.clock.now();
    const live: Waiting[] = [];
    for (const w of ws) {
      if (w.deadline <= now) w.reject(etcdError('TIMEOUT'));
      else live.push(w);
    }
    return live;
  }

  /**
   * The round has no answer yet: ask again with the same context, so that an answer to any of its requests
   * serves it. (Each was sent after every read of the round began, so any answer is safe to use.) A fresh
   * context each time would make earlier answers useless, and a leader slower to answer than retryMs would
   * never serve a read again.
   */
  private retryRound(): void {
    const r = this.round;
    if (!r || r.index !== undefined) return;
    this.clock.clearTimeout(r.retry);
    r.waiting = this.expire(r.waiting);
    if (r.waiting.length === 0) {
      this.round = undefined;
      this.startRound();
      return;
    }
    r.retry = this.clock.setTimeout(() => this.retryRound(), this.deps.retryMs);
    this.deps.readIndex(Buffer.from(r.ctx));
  }

  onReadState(rs: ReadState): void {
    const r = this.round;
    if (!r || Buffer.from(rs.requestCtx).toString() !== r.ctx) return;
    this.clock.clearTimeout(r.retry);
    r.index = rs.index;
    this.onApplied();
  }

  /** Called after entries are applied: releases the round once applied reaches its read index. */
  onApplied(): void {
    const r = this.round;
    if (!r || r.index === undefined) return;
    if (this.deps.applied() < r.index && this.deps.plantedBug !== 'read-before-applied') return;
    this.round = undefined;
    for (const w of r.waiting) w.resolve();
    this.startRound();
  }

  /** A request sent to the old leader will not be answered: ask the new one at once rather than waiting out the timer. */
  onLeaderChange(): void {
    this.retryRound();
  }

  close(err: unknown): void {
    this.closed = err;
    if (this.round) {
      this.clock.clearTimeout(this.round.retry);
      for (const w of this.round.waiting) w.reject(err);
      this.round = undefined;
    }
    for (const w of this.queued) w.reject(err);
    this.queued = [];
  }
}
