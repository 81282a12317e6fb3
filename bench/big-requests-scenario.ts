// Issue 25 §2's four big requests, run against one three-member cluster of real processes (Setpoint's or
// etcd 3.4's: the harness starts either with the same flags), measured the same way on both: a range of
// every key (what `etcdctl get --prefix` sends), a snapshot sent to a member that fell behind, a delete of
// every key in one request (without prev_kv, then with it, each while a writer writes and a watcher
// watches), and a compaction of the long history that leaves. For each: the request's latency, the term
// before and after, and on Setpoint the longest any member's loop was held (its own /metrics,
// src/harness/loop-metrics.ts). The e2e test (test/e2e/big-requests.test.ts) and bench:big share it.
import { Etcd3 } from 'etcd3';
import type { IKeyValue } from 'etcd3';
import { noop } from 'cockatiel';
import { StoreCluster } from '../src/harness/store-cluster.js';
import type { StoreClusterOptions } from '../src/harness/store-cluster.js';
import type { StoreProgram } from '../src/harness/kinds/store-member.js';
import { scrapeLoop } from '../src/harness/loop-metrics.js';
import { orUndefined, pause, waitFor } from '../src/harness/wait.js';

export const PREFIX = 'big/';
/** etcd's default --max-txn-ops: the load goes in transactions of this many puts. */
const TXN_OPS = 128;
/** Transactions in flight while loading. */
const LOAD_CONCURRENCY = 16;
/** Entries written while the follower is down; above --snapshot-count and the catch-up entries kept behind a snapshot. */
const BEHIND_ENTRIES = 6000;
const SNAPSHOT_COUNT = 1000;

export interface OpResult {
  readonly op: string;
  readonly keys: number;
  /** The request's latency (ms): sent to answered (for the snapshot: the member restarted to caught up). */
  readonly ms: number;
  /** The longest any member's own running held its loop during the operation (ms); undefined on etcd. */
  readonly heldMs: number | undefined;
  /** Which member held it longest. */
  readonly heldBy: string | undefined;
  /** How much the term grew during the operation (0: no election). */
  readonly termChanges: number;
  /** What the operation's checks found wrong (empty: all well). */
  readonly problems: readonly string[];
}

const key = (i: number): string => `${PREFIX}${String(i).padStart(7, '0')}`;
/** 32 bytes a value: half a million keys are about 25 MB of range answer. */
const value = (i: number, round: number): string => `v${round}-${String(i).padStart(7, '0')}`.padEnd(32, '.');

function client(hosts: string[]): Etcd3 {
  return new Etcd3({
    hosts,
    faultHandling: { host: () => noop, global: noop },
    // A range of everything is tens of MB: etcd's own clients accept any size (etcdctl: MaxInt32).
    grpcOptions: { 'grpc.max_receive_message_length': -1, 'grpc.max_send_message_length': -1 },
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 60_000 }),
  });
}

/** Puts and counts until stopped; every failure is kept. */
class Writer {
  ok = 0;
  readonly errors: string[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(c: Etcd3) {
    this.loop = (async () => {
      for (let i = 0; this.running; i++) {
        try {
          await c.put(`writer/${i % 64}`).value(String(i));
          this.ok++;
        } catch (e) {
          this.errors.push((e as Error).message);
          await pause(20);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

export class BigScenario {
  /** A client over the running members (made anew when a member stops or starts). */
  private c: Etcd3;
  private readonly urls: Map<string, string>;
  readonly results: OpResult[] = [];

  private constructor(
    readonly cluster: StoreCluster,
    readonly keys: number,
    private readonly log: (m: string) => void,
  ) {
    this.c = client(cluster.endpoints());
    this.urls = new Map(cluster.names().map((n) => [n, cluster.clientUrl(n)]));
  }

  /** Starts the cluster (etcd's default timing) that the scenario runs on. */
  static async start(program: StoreProgram, keys: number, o: Partial<StoreClusterOptions> & { log?: (m: string) => void } = {}): Promise<BigScenario> {
    const cluster = await StoreCluster.start({ program, token: 'big-requests', label: `setpoint-big-${program}-`, heartbeatMs: 100, electionMs: 1000, snapshotCount: SNAPSHOT_COUNT, ...o });
    return new BigScenario(cluster, keys, o.log ?? (() => undefined));
  }

  async close(keep = false): Promise<void> {
    this.c.close();
    await this.cluster.destroy({ keep });
  }

  /** Every member's term (the largest), and a new loop window on each Setpoint member. */
  private async mark(): Promise<number> {
    if (this.cluster.program === 'setpoint') await Promise.all(this.cluster.running().map((n) => scrapeLoop(this.urls.get(n) as string)));
    return this.term();
  }

  private async term(): Promise<number> {
    const terms = await Promise.all(this.cluster.running().map(async (n) => Number((await this.cluster.status(n, 10_000)).raftTerm)));
    return Math.max(...terms);
  }

  /** The longest hold on any running member since mark(). */
  private async held(): Promise<{ ms: number; by: string } | undefined> {
    if (this.cluster.program !== 'setpoint') return undefined;
    let best: { ms: number; by: string } = { ms: 0, by: '' };
    for (const n of this.cluster.running()) {
      const f = await scrapeLoop(this.urls.get(n) as string);
      if (f.held * 1000 > best.ms) best = { ms: f.held * 1000, by: n };
    }
    return best;
  }

  /** Runs `f` between a mark and the readings after it, and records the row. */
  private async measure(op: string, f: () => Promise<{ ms: number; problems: string[] }>): Promise<OpResult> {
    const before = await this.mark();
    const t0 = performance.now();
    // A request that fails is a finding of this operation, not the end of the scenario.
    const { ms, problems } = await f().catch((e: unknown) => ({ ms: performance.now() - t0, problems: [`failed: ${(e as Error).message}`] }));
    const h = await this.held();
    const after = await this.term();
    const r: OpResult = { op, keys: this.keys, ms, heldMs: h?.ms, heldBy: h?.by, termChanges: after - before, problems };
    this.results.push(r);
    this.log(`${op}: ${ms.toFixed(0)} ms${h ? `, loop held at most ${h.ms.toFixed(1)} ms (${h.by})` : ''}, term +${r.termChanges}${problems.length ? `; PROBLEMS: ${problems.join('; ')}` : ''}`);
    return r;
  }

  /** Puts keys [0, keys) in transactions of TXN_OPS puts, LOAD_CONCURRENCY at a time. */
  async load(round: number): Promise<void> {
    const t0 = performance.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < this.keys) {
        const from = next;
        next = Math.min(this.keys, next + TXN_OPS);
        const success = [];
        for (let i = from; i < next; i++) success.push({ request_put: { key: Buffer.from(key(i)), value: Buffer.from(value(i, round)) } });
        // The same puts again are harmless: a txn that timed out on a loaded machine is sent again.
        for (let attempt = 1; ; attempt++) {
          try {
            await this.c.kv.txn({ success });
            break;
          } catch (e) {
            if (attempt === 5) throw e;
            this.log(`load: a txn failed (${(e as Error).message}); again`);
            await pause(200 * attempt);
          }
        }
      }
    };
    await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
    this.log(`loaded ${this.keys} keys in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }

  /** A range of every key, as `etcdctl get --prefix` sends it (no limit). */
  rangeAll(): Promise<OpResult> {
    return this.measure('range of every key', async () => {
      const t0 = performance.now();
      const res = await this.c.kv.range({ key: Buffer.from(PREFIX), range_end: Buffer.from(prefixEnd(PREFIX)) });
      const ms = performance.now() - t0;
      const problems: string[] = [];
      if (res.kvs.length !== this.keys) problems.push(`the range returned ${res.kvs.length} of ${this.keys} keys`);
      if (res.count !== String(this.keys)) problems.push(`count ${res.count}, not ${this.keys}`);
      return { ms, problems };
    });
  }

  /** Stops a follower (not the leader), which a snapshot will catch up later. */
  async stopFollower(): Promise<string> {
    const leader = await this.cluster.waitForLeader();
    const follower = this.cluster.running().find((n) => n !== leader) as string;
    await this.cluster.stop(follower);
    this.renewClient();
    return follower;
  }

  private renewClient(): void {
    this.c.close();
    this.c = client(this.cluster.endpoints());
  }

  /**
   * `follower` was stopped before the load: write past the snapshot count and the catch-up entries, start
   * it, and time it until it has applied what the leader had (it installs the leader's snapshot).
   */
  async snapshotCatchUp(follower: string): Promise<OpResult> {
    for (let i = 0; i < BEHIND_ENTRIES; i += 64) await Promise.all(Array.from({ length: 64 }, (_, j) => this.c.put(`behind/${(i + j) % 100}`).value(String(i + j))));
    return this.measure('snapshot to a member behind', async () => {
      const t0 = performance.now();
      await this.cluster.restart(follower, { wait: 'serving' });
      // Its loop's window starts now, not with the start of its process (loading its code is no heartbeat's business).
      if (this.cluster.program === 'setpoint') await scrapeLoop(this.cluster.clientUrl(follower));
      await this.cluster.waitCaughtUp(follower, 300_000);
      this.renewClient();
      const ms = performance.now() - t0;
      const problems: string[] = [];
      const st = await this.cluster.status(follower);
      const leader = await this.cluster.status(await this.cluster.waitForLeader());
      if (st.raftAppliedIndex < leader.raftIndex - BigInt(100)) problems.push('the follower did not catch up');
      // Its own serializable count of the keys: it holds every one.
      const own = client([this.cluster.clientUrl(follower)]);
      try {
        const n = Number((await own.kv.range({ key: Buffer.from(PREFIX), range_end: Buffer.from(prefixEnd(PREFIX)), count_only: true, serializable: true })).count);
        if (n !== this.keys) problems.push(`the follower holds ${n} of ${this.keys} keys`);
      } finally {
        own.close();
      }
      return { ms, problems };
    });
  }

  /** Deletes every key in one request while a writer writes and a watcher watches the prefix. */
  deleteAll(prevKv: boolean): Promise<OpResult> {
    return this.measure(`delete of every key${prevKv ? ', with prev_kv' : ''}`, async () => {
      const watchClient = client(this.cluster.endpoints());
      const writerClient = client(this.cluster.endpoints());
      const writer = new Writer(writerClient);
      const problems: string[] = [];
      let ms: number;
      try {
        let deletes = 0;
        const watcher = await watchClient.watch().prefix(PREFIX).create();
        watcher.on('delete', () => {
          deletes++;
        });
        await waitFor('the writer to write', () => writer.ok > 0 || undefined);
        const t0 = performance.now();
        const res = await this.c.kv.deleteRange({ key: Buffer.from(PREFIX), range_end: Buffer.from(prefixEnd(PREFIX)), prev_kv: prevKv });
        ms = performance.now() - t0;
        const during = writer.ok;
        await waitFor(`the watcher to see ${this.keys} deletes`, () => deletes >= this.keys || undefined, { timeoutMs: 120_000, intervalMs: 100 }).catch(() => undefined);
        await waitFor('a write after the delete', () => writer.ok > during || undefined, { timeoutMs: 30_000 }).catch(() => undefined);
        await writer.stop();
        await watcher.cancel();
        if (res.deleted !== String(this.keys)) problems.push(`deleted ${res.deleted}, not ${this.keys}`);
        if (prevKv) {
          const kvs: IKeyValue[] = res.prev_kvs;
          if (kvs.length !== this.keys) problems.push(`${kvs.length} prev_kvs, not ${this.keys}`);
          else if (kvs[0]?.value.toString() !== value(0, 2)) problems.push(`the first prev_kv holds ${kvs[0]?.value.toString()}`);
        }
        if (deletes !== this.keys) problems.push(`the watcher saw ${deletes} of ${this.keys} deletes`);
        if (writer.errors.length > 0) problems.push(`the writer failed ${writer.errors.length} times: ${writer.errors[0]}`);
        if (writer.ok <= during) problems.push('no write succeeded after the delete');
      } finally {
        await writer.stop();
        writerClient.close();
        watchClient.close();
      }
      return { ms, problems };
    });
  }

  /** Compacts the whole history (two loads and two deletes of every key), waiting for the physical removal. */
  compactAll(): Promise<OpResult> {
    return this.measure('compaction of the history', async () => {
      const head = await waitFor('the head revision', () => orUndefined(this.c.get('writer/0').exec().then((r) => r.header.revision)));
      const t0 = performance.now();
      await this.c.kv.compact({ revision: head, physical: true });
      const ms = performance.now() - t0;
      // Writes go on and reads of the head work after it.
      const problems: string[] = [];
      const n = await this.c.getAll().prefix(PREFIX).count();
      if (n !== 0) problems.push(`${n} keys left after two deletes`);
      return { ms, problems };
    });
  }
}

function prefixEnd(p: string): string {
  return p.slice(0, -1) + String.fromCharCode(p.charCodeAt(p.length - 1) + 1);
}

/**
 * The whole scenario: stop a follower, load, range everything, send the follower a snapshot, delete
 * everything (without prev_kv), load again, delete with prev_kv, compact.
 */
export async function runBigScenario(s: BigScenario): Promise<OpResult[]> {
  const follower = await s.stopFollower();
  await s.load(1);
  await s.rangeAll();
  await s.snapshotCatchUp(follower);
  await s.deleteAll(false);
  await s.load(2);
  await s.deleteAll(true);
  await s.compactAll();
  return s.results;
}
