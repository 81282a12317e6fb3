// The outbound Raft message stream to one peer: a bounded queue that send() appends to without ever
// waiting, and a writer that drains it into one long-lived Send stream, one batch per gRPC write, with
// at most one write in flight (so messages that arrive meanwhile make the next batch bigger). When the
// stream fails the peer is reported unreachable, its queue is dropped (Raft resends what matters) and the
// stream is dialled again after a jittered exponential backoff.
import type { Logger } from 'pino';
import type { Message, NodeId } from '../../raft/types.js';
import { approxMessageBytes } from './codec.js';
import type { PeerTimings } from './channel.js';
import { backoffDelay } from './channel.js';
import type { PeerUrl } from './credentials.js';
import { refusalMessage, refusalOf } from './errors.js';
import type { PeerRefusalCode } from './errors.js';
import { MESSAGE_BATCH_BYTES } from './proto.js';
import type { SendCallEnd, SendStreamCall, SendStreamEvents } from './send-client.js';

export interface PeerStreamLimits {
  /** etcd's stream buffer is 4096 messages; beyond it messages are dropped and the peer reported. */
  readonly maxQueueMessages: number;
  readonly maxQueueBytes: number;
  readonly batchBytes: number;
}

export const DEFAULT_STREAM_LIMITS: PeerStreamLimits = {
  maxQueueMessages: 4096,
  maxQueueBytes: 64 * 1024 * 1024,
  batchBytes: MESSAGE_BATCH_BYTES,
};

export interface PeerStreamDeps {
  readonly self: NodeId;
  readonly peer: NodeId;
  readonly clusterId: string;
  readonly timings: PeerTimings;
  readonly limits: PeerStreamLimits;
  readonly log: Logger;
  /** The peer's URLs now (they change with updatePeer); attempts rotate through them. */
  urls(): readonly PeerUrl[];
  /** Opens the Send call to one of the peer's URLs (openSendStream, or a stand-in in tests). */
  open(url: PeerUrl, on: SendStreamEvents): SendStreamCall;
  /** The stream failed or was never accepted: the core should stop assuming delivery. */
  onUnreachable(): void;
  /** An accepted stream broke without a refusal: the peer's process is probably gone. */
  onLost?(): void;
  /** The peer accepted our stream: proof of a round trip. */
  onAccepted(): void;
  /** The peer refused our stream because we were removed from the cluster. */
  onRemoved?(): void;
}

export type EnqueueResult = 'queued' | 'dropped';

type State = 'connecting' | 'active' | 'backoff' | 'stopped';

export interface PeerStreamStats {
  /** gRPC writes, each one MessageBatch. */
  batches: number;
  messages: number;
  bytes: number;
  /** Messages dropped: queue full, peer down, or lost with a failed stream. */
  dropped: number;
  /** Streams that failed or were never accepted. */
  failures: number;
  /** performance.now() when the peer accepted the stream that is up now; undefined while none is. */
  activeSince: number | undefined;
}

export class PeerStream {
  private state: State = 'backoff';
  // FIFO of messages not yet written; queue[head..] are pending (a moving head keeps dequeues O(1)).
  private queue: (Message | undefined)[] = [];
  private head = 0;
  private queuedBytes = 0;
  private call: SendStreamCall | undefined;
  private writing = false;
  private flushScheduled = false;
  /** Bumped whenever the current call is torn down, so late callbacks of an old call are ignored. */
  private generation = 0;
  /** Consecutive failed attempts; decides the next backoff. */
  private failedAttempts = 0;
  private urlIndex = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The refusal last logged, so a peer refusing every attempt is logged once, not every 2 s. */
  private loggedRefusal: PeerRefusalCode | undefined;
  private wasActive = false;
  readonly stats: PeerStreamStats = { batches: 0, messages: 0, bytes: 0, dropped: 0, failures: 0, activeSince: undefined };

  constructor(private readonly deps: PeerStreamDeps) {}

  start(): void {
    if (this.state === 'stopped') return;
    this.dial();
  }

  /** The stream is up: accepted by the peer and not failed since. */
  get active(): boolean {
    return this.state === 'active';
  }

  get queued(): number {
    return this.queue.length - this.head;
  }

  /** Never blocks. 'dropped' means the caller should report the peer unreachable. */
  enqueue(m: Message): EnqueueResult {
    if (this.state === 'stopped') return 'dropped';
    // A peer known to be down gets nothing queued: by the time it is back, these would be stale, and
    // the core falls back to probing once told it is unreachable.
    if (this.state === 'backoff') return this.drop(1);
    const size = approxMessageBytes(m);
    if (this.queued >= this.deps.limits.maxQueueMessages || this.queuedBytes + size > this.deps.limits.maxQueueBytes) {
      return this.drop(1);
    }
    this.queue.push(m);
    this.queuedBytes += size;
    this.scheduleFlush();
    return 'queued';
  }

  /** New URLs: dial them now instead of waiting for the old connection to fail. */
  redial(): void {
    if (this.state === 'stopped') return;
    this.teardown();
    this.urlIndex = 0;
    this.failedAttempts = 0;
    this.dial();
  }

  /**
   * The peer has just opened its own message stream to us, so it is up: if ours is waiting out a backoff,
   * dial now. A peer that restarted comes back long before a backoff grown while it was down runs out (up
   * to backoffMaxMs), and until then everything for it — a vote, an append — would be dropped.
   */
  peerIsUp(): void {
    if (this.state !== 'backoff') return;
    this.clearTimer();
    this.deps.log.debug({ peer: this.deps.peer.toString(16) }, 'peer dialled us: ending our backoff');
    this.dial();
  }

  /** For good (peer removed, transport closed). */
  stop(): void {
    if (this.state === 'stopped') return;
    this.teardown();
    this.state = 'stopped';
  }

  private drop(n: number): EnqueueResult {
    this.stats.dropped += n;
    return 'dropped';
  }

  private dial(): void {
    const urls = this.deps.urls();
    const url = urls[this.urlIndex % Math.max(1, urls.length)];
    if (!url) {
      this.scheduleRedial();
      return;
    }
    const gen = ++this.generation;
    this.state = 'connecting';
    this.call = this.deps.open(url, {
      // The peer sends response headers as soon as it has checked who we are: that is our "connected".
      accepted: () => this.onAccepted(gen, url),
      ended: (end) => this.onCallEnded(gen, url, end),
    });
    this.timer = setTimeout(() => {
      this.fail(gen, url, `not accepted within ${this.deps.timings.connectTimeoutMs} ms`, undefined);
    }, this.deps.timings.connectTimeoutMs);
    this.timer.unref();
    // Queued messages may be written before the peer answers: HTTP/2 holds them until connected.
    this.scheduleFlush();
  }

  private onAccepted(gen: number, url: PeerUrl): void {
    if (gen !== this.generation || this.state !== 'connecting') return;
    this.clearTimer();
    this.state = 'active';
    this.stats.activeSince = performance.now();
    this.failedAttempts = 0;
    this.loggedRefusal = undefined;
    if (!this.wasActive) this.deps.log.info({ peer: this.deps.peer.toString(16), url: url.url }, 'peer became active');
    this.wasActive = true;
    this.deps.onAccepted();
    this.scheduleFlush();
  }

  private onCallEnded(gen: number, url: PeerUrl, err: SendCallEnd): void {
    if (gen !== this.generation) return;
    this.fail(gen, url, err ? (err.details || err.message || 'call failed') : 'stream ended by the peer', err ?? undefined);
  }

  private fail(gen: number, url: PeerUrl, reason: string, err: SendCallEnd | undefined): void {
    if (gen !== this.generation || this.state === 'stopped') return;
    const wasAccepted = this.state === 'active';
    this.teardown();
    this.stats.failures++;
    this.failedAttempts++;
    this.urlIndex++;
    const refusal = err ? refusalOf(err) : undefined;
    if (refusal) {
      if (this.loggedRefusal !== refusal) {
        this.loggedRefusal = refusal;
        this.deps.log.error({ peer: this.deps.peer.toString(16), url: url.url, refusal, reason }, `peer refused our stream: ${refusalMessage(refusal)}`);
      }
    } else if (this.wasActive) {
      this.wasActive = false;
      this.deps.log.warn({ peer: this.deps.peer.toString(16), url: url.url, reason }, 'peer became inactive');
    } else {
      this.deps.log.debug({ peer: this.deps.peer.toString(16), url: url.url, reason, attempt: this.failedAttempts }, 'peer stream attempt failed');
    }
    this.deps.onUnreachable();
    if (wasAccepted && !refusal) this.deps.onLost?.();
    if (refusal === 'PEER_MEMBER_REMOVED') this.deps.onRemoved?.();
    // A refusal will not change by retrying soon (another cluster, a removed member): wait the longest.
    this.scheduleRedial(refusal !== undefined);
  }

  private scheduleRedial(longest = false): void {
    this.state = 'backoff';
    const t = this.deps.timings;
    const delay = longest ? t.backoffMaxMs : backoffDelay(t, this.failedAttempts);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.state === 'backoff') this.dial();
    }, delay);
    this.timer.unref();
  }

  /** Drops the call, its connection and everything queued for it. */
  private teardown(): void {
    this.generation++;
    this.stats.activeSince = undefined;
    this.clearTimer();
    const call = this.call;
    this.call = undefined;
    this.writing = false;
    call?.cancel();
    const lost = this.queued;
    if (lost > 0) this.drop(lost);
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.writing) return;
    this.flushScheduled = true;
    // A microtask lets every message of the current Ready (and of the same tick) join one batch.
    queueMicrotask(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    const call = this.call;
    if (this.writing || !call || this.queued === 0) return;
    const batch: Message[] = [];
    let bytes = 0;
    while (this.head < this.queue.length) {
      const m = this.queue[this.head] as Message;
      const size = approxMessageBytes(m);
      if (batch.length > 0 && bytes + size > this.deps.limits.batchBytes) break;
      batch.push(m);
      bytes += size;
      this.queue[this.head++] = undefined;
    }
    this.queuedBytes -= bytes;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.stats.batches++;
    this.stats.messages += batch.length;
    this.stats.bytes += bytes;
    this.writing = true;
    const gen = this.generation;
    // One write in flight: its callback comes once HTTP/2 has taken the batch, which it holds while
    // the peer's flow-control window is shut, so a stalled peer stalls us here, not in memory.
    call.write(batch, () => {
      if (gen !== this.generation) return;
      this.writing = false;
      this.flush();
    });
  }
}
