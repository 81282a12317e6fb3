// Writers put unique values, delete, and write several keys in one txn (one revision, several events)
// under a prefix, while watchers — one per member, half with etcd's `hasleader` — follow it through
// faults. At the end a fresh watch from the start revision is the reference sequence every watcher
// must match, and that sequence is checked against the writers' acknowledged revisions.
import type { CheckResult } from '../checkers/result.js';
import { checkWatch, type WatchWrite } from '../checkers/watch-checker.js';
import type { Kv } from '../etcd-client.js';
import type { RunContext, WorkerHandle, Workload } from '../workload.js';
import { Watcher, type WatchEvent, type WatcherLog } from './watcher.js';

const PREFIX = '/jepsen/watch/';
const KEYS = 5;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class WatchWorkload implements Workload {
  readonly name = 'watch';
  private next = 1;
  private startRev = 0;
  private watchers: Watcher[] = [];
  private reference: WatchEvent[] | undefined;
  private finalKvs: Kv[] | undefined;
  private finalRev = 0;

  private key(i: number): string {
    return `${PREFIX}k${i}`;
  }

  async worker(w: WorkerHandle): Promise<void> {
    while (await w.pace()) {
      const r = w.rng.float();
      if (r < 0.6) {
        const key = this.key(w.rng.int(KEYS));
        const value = `v${this.next++}`;
        await w.invoke('put', key, value, 'write', async (c) => ({ outcome: 'ok', output: (await c.put(key, value, w.timeoutMs)).revision }));
      } else if (r < 0.75) {
        const key = this.key(w.rng.int(KEYS));
        await w.invoke('delete', key, undefined, 'write', async (c) => {
          const res = await c.del(key, w.timeoutMs);
          return { outcome: 'ok', output: [res.revision, res.deleted] };
        });
      } else {
        const first = w.rng.int(KEYS);
        const n = 2 + w.rng.int(2);
        const puts = Array.from({ length: n }, (_, i) => ({ key: this.key((first + i) % KEYS), value: `v${this.next++}` }));
        await w.invoke('txn', PREFIX, puts, 'write', async (c) => {
          const res = await c.txn([], puts.map((p) => ({ put: p })), [], w.timeoutMs);
          return { outcome: 'ok', output: res.revision };
        });
      }
    }
  }

  /** Watch from the revision after the last write before any writer starts: the whole history. */
  async setup(ctx: RunContext): Promise<void> {
    const c = ctx.cluster.slots[0]!.admin;
    this.startRev = (await c.range(PREFIX, { prefix: true }, 5000)).revision + 1;
  }

  async background(ctx: RunContext): Promise<void> {
    this.watchers = Array.from({ length: Math.max(3, ctx.nodes) }, (_, i) => new Watcher(i, PREFIX, this.startRev, ctx.cluster, ctx.history, i % ctx.nodes, i % 2 === 1));
    const runs = this.watchers.map((w) => w.run());
    while (!ctx.stopping()) await sleep(100);
    this.stopWatchers();
    await Promise.all(runs);
  }

  /** Before the runner stops the background: let every watcher catch up to the final revision. */
  async finish(ctx: RunContext): Promise<void> {
    const admin = (await ctx.cluster.anyAdmin()) ?? ctx.cluster.slots[0]!.admin;
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        const r = await admin.range(PREFIX, { prefix: true }, 5000);
        this.finalKvs = r.kvs;
        this.finalRev = r.revision;
        break;
      } catch {
        await sleep(500);
      }
    }
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && this.watchers.some((w) => Math.max(w.log.lastRev, w.log.progressRev) < this.finalRev)) await sleep(100);
    this.reference = await this.readReference(ctx);
  }

  stopWatchers(): void {
    for (const w of this.watchers) w.stop();
  }

  /** A fresh watch from the start revision up to the final revision (retried on other members). */
  private async readReference(ctx: RunContext): Promise<WatchEvent[] | undefined> {
    for (let attempt = 0; attempt < ctx.cluster.slots.length * 2; attempt++) {
      const s = ctx.cluster.members()[attempt % ctx.cluster.members().length];
      if (!s) return undefined;
      const w = new Watcher(-1, PREFIX, this.startRev, ctx.cluster, ctx.history, s.index, false);
      const run = w.run();
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && w.log.lastRev < this.finalRev && w.log.progressRev < this.finalRev) await sleep(50);
      // Events at the final revision may still be in flight behind the progress answer: a short grace.
      const settle = Date.now() + 500;
      while (Date.now() < settle) await sleep(50);
      w.stop();
      await run;
      if (w.log.lastRev >= this.finalRev || (w.log.progressRev >= this.finalRev && w.log.reconnects.length === 0)) return w.log.events;
    }
    return undefined;
  }

  private writes(ctx: RunContext): WatchWrite[] {
    const out: WatchWrite[] = [];
    for (const o of ctx.history.ops) {
      if (o.f === 'put') out.push({ op: o.id, outcome: o.outcome, rev: o.outcome === 'ok' ? (o.output as number) : undefined, puts: [{ key: o.key!, value: o.input as string }] });
      else if (o.f === 'txn') out.push({ op: o.id, outcome: o.outcome, rev: o.outcome === 'ok' ? (o.output as number) : undefined, puts: o.input as { key: string; value: string }[] });
      else if (o.f === 'delete') {
        const [rev, deleted] = o.outcome === 'ok' ? (o.output as [number, number]) : [undefined, 0];
        out.push({ op: o.id, outcome: o.outcome, rev: deleted > 0 ? rev : undefined, deleteKey: o.key!, deleted });
      }
    }
    return out;
  }

  async check(ctx: RunContext): Promise<CheckResult[]> {
    const logs: WatcherLog[] = this.watchers.map((w) => w.log);
    return [
      checkWatch({
        startRev: this.startRev,
        finalRev: this.finalRev,
        watchers: logs,
        reference: this.reference,
        writes: this.writes(ctx),
        finalKvs: this.finalKvs?.map((kv) => ({ key: kv.key, value: kv.value, create: kv.createRevision, mod: kv.modRevision, version: kv.version })),
      }),
    ];
  }

  artifacts(): Record<string, unknown> {
    return { 'watch.json': { startRev: this.startRev, finalRev: this.finalRev, watchers: this.watchers.map((w) => w.log), reference: this.reference } };
  }
}

