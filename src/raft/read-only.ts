// ReadIndex bookkeeping on the leader: reads wait for a heartbeat round that a quorum acknowledges, which
// proves the leader was still the leader after the read arrived. At most one round is in flight; reads
// arriving meanwhile are batched into the next round, so many reads share one heartbeat round.
import type { Message, NodeId } from './types.js';

export interface ReadIndexStatus {
  readonly req: Message;
  readonly index: number;
  readonly acks: Set<NodeId>;
}

export function ctxKey(ctx: Uint8Array | undefined): string {
  if (!ctx) return '';
  let s = '';
  for (const b of ctx) s += String.fromCharCode(b);
  return s;
}

export class ReadOnly {
  private readonly pending = new Map<string, ReadIndexStatus>();
  /** Request contexts in arrival order. */
  private queue: string[] = [];
  /** The context whose heartbeat round is in flight ('' when none). */
  roundCtx = '';

  /** Queues a read at commit index `index`. Duplicate contexts are ignored. */
  addRequest(index: number, m: Message): void {
    const key = ctxKey(m.context);
    if (this.pending.has(key)) return;
    this.pending.set(key, { req: m, index, acks: new Set() });
    this.queue.push(key);
  }

  /** Records that `id` acknowledged the round for ctx; returns the number of acks, or -1 if unknown. */
  recvAck(id: NodeId, ctx: Uint8Array | undefined): Set<NodeId> | undefined {
    const rs = this.pending.get(ctxKey(ctx));
    if (!rs) return undefined;
    rs.acks.add(id);
    return rs.acks;
  }

  /** Releases every read queued up to and including ctx (all are covered by its quorum). */
  advance(ctx: Uint8Array | undefined): ReadIndexStatus[] {
    const key = ctxKey(ctx);
    const at = this.queue.indexOf(key);
    if (at < 0) return [];
    const done = this.queue.slice(0, at + 1);
    this.queue = this.queue.slice(at + 1);
    const out: ReadIndexStatus[] = [];
    for (const k of done) {
      const rs = this.pending.get(k);
      if (rs) out.push(rs);
      this.pending.delete(k);
    }
    if (this.roundCtx !== '' && !this.pending.has(this.roundCtx)) this.roundCtx = '';
    return out;
  }

  /** The newest queued request's context, which a heartbeat round must carry to cover every queued read. */
  lastPendingRequestCtx(): Uint8Array | undefined {
    const key = this.queue[this.queue.length - 1];
    if (key === undefined) return undefined;
    return this.pending.get(key)?.req.context;
  }

  hasPending(): boolean {
    return this.queue.length > 0;
  }

  pendingCount(): number {
    return this.queue.length;
  }
}
