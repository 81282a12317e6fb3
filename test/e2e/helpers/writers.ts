// Clients writing while the cluster is hurt: concurrent loops, each putting unique keys under one prefix
// and recording every put the cluster acknowledged, so a test can check afterwards that none was lost, and
// reading each one back at once through any member, which catches a stale read as it happens. Errors are
// expected while members die: they are counted, and the loop goes on with its next key.
import type { Etcd3 } from 'etcd3';
import { orUndefined, pause, waitFor } from '../../../src/harness/wait.js';

export class Writers {
  /** key → value of every acknowledged put. */
  readonly acked = new Map<string, string>();
  errors = 0;
  /** Linearizable reads, made right after an acknowledged put, that did not return it. */
  readonly staleReads: string[] = [];
  /** The most recent error messages, for a failure's explanation. */
  readonly recentErrors: string[] = [];
  /** Every error message seen, with how often. */
  readonly errorCounts = new Map<string, number>();
  /** The longest stretch without any acknowledged write since measureGaps() (ms). */
  longestGapMs = 0;
  private lastAckAt = Date.now();
  private stopped = false;
  private readonly loops: Promise<void>[];
  private readonly run = Math.random().toString(36).slice(2, 8);

  constructor(
    private readonly client: Etcd3,
    readonly prefix: string,
    concurrency = 4,
  ) {
    this.loops = Array.from({ length: concurrency }, (_, i) => this.loop(i));
  }

  private async loop(w: number): Promise<void> {
    for (let seq = 0; !this.stopped; seq++) {
      const key = `${this.prefix}${w}/${String(seq).padStart(6, '0')}`;
      const value = `${this.run}.${w}.${seq}`;
      try {
        await this.client.put(key).value(value);
        this.acked.set(key, value);
        const now = Date.now();
        this.longestGapMs = Math.max(this.longestGapMs, now - this.lastAckAt);
        this.lastAckAt = now;
        // Read your write through any member (a linearizable get goes to a random one): once a put is
        // acknowledged, no member may answer with what was there before.
        const got = await orUndefined(this.client.get(key).string());
        if (got !== undefined && got !== value) this.staleReads.push(`${key} read as ${String(got)} after its put was acknowledged`);
      } catch (e) {
        this.errors++;
        const message = (e as Error).message;
        this.errorCounts.set(message, (this.errorCounts.get(message) ?? 0) + 1);
        this.recentErrors.push(message);
        if (this.recentErrors.length > 10) this.recentErrors.shift();
        await pause(25); // a client's back-off before its next try
      }
    }
  }

  /** Starts measuring the longest stretch without an acknowledged write from now. */
  measureGaps(): void {
    this.lastAckAt = Date.now();
    this.longestGapMs = 0;
  }

  /** Waits until `n` more writes than now have been acknowledged. */
  async waitForAcks(n: number, timeoutMs = 60_000): Promise<void> {
    const target = this.acked.size + n;
    await waitFor(`${target} acknowledged writes`, () => (this.acked.size >= target ? true : undefined), { timeoutMs, intervalMs: 20 }).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}; have ${this.acked.size}, ${this.errors} errors, recent: ${this.recentErrors.join(' | ')}`);
    });
  }

  /** Stops every loop and waits for puts in flight to settle. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  close(): Promise<void> {
    return this.stop();
  }

  summary(): string {
    return `${this.acked.size} acknowledged puts under ${this.prefix}, ${this.errors} failed, ${this.staleReads.length} stale reads, longest stretch without an acknowledgement ${this.longestGapMs} ms`;
  }

  /** Acknowledged writes that a linearizable read of the prefix through `client` does not return as written. */
  async missingOn(client: Etcd3): Promise<string[]> {
    const got = await client.getAll().prefix(this.prefix).strings();
    return [...this.acked].filter(([k, v]) => got[k] !== v).map(([k]) => k);
  }
}
