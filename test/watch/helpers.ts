// Shared helpers for the watch tests: a real KvStore on a temp dir (removed afterwards), sinks that record
// or hold back responses, and waiting on conditions instead of sleeping.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor as harnessWaitFor } from '../../src/harness/wait.js';
import { KvStore } from '../../src/kv/kv-store.js';
import type { KvEvent } from '../../src/kv/types.js';
import type { WatchSink, WatcherResponse } from '../../src/watch/types.js';
import { WatchableStore, type WatchableStoreOptions } from '../../src/watch/watchable-store.js';

export const enc = (s: string): Uint8Array => Buffer.from(s, 'latin1');
export const dec = (b: Uint8Array | undefined): string => (b ? Buffer.from(b).toString('latin1') : '');

export interface Env {
  readonly kv: KvStore;
  readonly ws: WatchableStore;
}

/** Runs `f` with a store on a fresh temp dir and a WatchableStore over it; both closed and removed after. */
export async function withWatchable<T>(f: (env: Env) => Promise<T>, opts: WatchableStoreOptions = {}): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'setpoint-watch-'));
  const kv = await KvStore.open(dir);
  const ws = new WatchableStore(kv, opts);
  try {
    return await f({ kv, ws });
  } finally {
    ws.close();
    await kv.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

/** Polls `cond` until it holds; fails with `what` after `timeoutMs` (the harness's waitFor, condition first). */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  await harnessWaitFor(what, cond, { timeoutMs, intervalMs: 2 });
}

/**
 * A sink with a bounded buffer that the test drains when it chooses: `held` fills up to `capacity`, then
 * offers are refused. With capacity Infinity and autoDrain it simply records everything.
 */
export class TestSink implements WatchSink {
  readonly received: WatcherResponse[] = [];
  readonly held: WatcherResponse[] = [];
  syncedCount = 0;
  /** Offers turned away because the buffer was full. */
  refused = 0;

  constructor(
    public capacity = Infinity,
    public autoDrain = true,
  ) {}

  offer(resp: WatcherResponse): boolean {
    if (this.autoDrain) {
      this.received.push(resp);
      return true;
    }
    if (this.held.length >= this.capacity) {
      this.refused++;
      return false;
    }
    this.held.push(resp);
    return true;
  }

  synced(): void {
    this.syncedCount++;
  }

  /** Moves everything held to `received`. */
  drain(): void {
    this.received.push(...this.held.splice(0));
  }

  events(): KvEvent[] {
    return this.received.flatMap((r) => r.events);
  }

  /** Events as "TYPE key@rev" strings, easy to compare. */
  summary(): string[] {
    return this.events().map(summarize);
  }
}

export function summarize(e: KvEvent): string {
  return `${e.type} ${dec(e.kv.key)}@${e.kv.modRevision}${e.type === 'PUT' ? `=${dec(e.kv.value)}` : ''}`;
}

/** The store's history of [from, to] as summaries, optionally only keys passing `keep`. */
export async function historySummary(kv: KvStore, from: number, to: number, keep: (key: string) => boolean = () => true): Promise<string[]> {
  const out: string[] = [];
  for await (const { event } of kv.history(from, to)) if (keep(dec(event.kv.key))) out.push(summarize(event));
  return out;
}
