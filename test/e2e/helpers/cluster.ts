// The end-to-end tests' cluster: the harness's Setpoint store cluster (src/harness) with fast failover
// flags, members named a, b, c, …, npm etcd3 clients and writers on top, and a seeded random source. Start
// it inside a test: whatever it starts dies when that test finishes, pass or fail, and a failed test prints
// the seed and every member's log tail and keeps the data (E2E_KEEP=1 keeps it always).
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import { onTestFinished } from 'vitest';
import { SeededRng } from '../../../src/raft/rng.js';
import { seedFrom } from '../../../src/harness/seed.js';
import type { Seed } from '../../../src/harness/seed.js';
import { StoreCluster } from '../../../src/harness/store-cluster.js';
import { orUndefined, waitFor } from '../../../src/harness/wait.js';
import type { StoreClusterOptions } from '../../../src/harness/store-cluster.js';
import { Writers } from './writers.js';

/**
 * Founding members are named a, b, c, … (default 3). Fast failover by default (heartbeat 50 ms, election
 * 500 ms): a dead leader is replaced within about a second.
 */
export type E2eClusterOptions = Pick<StoreClusterOptions, 'size' | 'heartbeatMs' | 'electionMs' | 'snapshotCount' | 'flags' | 'env'>;

const NAMES = 'abcdefghij'.split('');

export class E2eCluster extends StoreCluster {
  readonly seed: Seed = seedFrom('E2E_SEED');
  readonly rng = new SeededRng(this.seed.value);
  private readonly closeables: { close(): unknown }[] = [];
  private readonly perMember = new Map<string, Etcd3>();

  constructor(o: StoreClusterOptions, dir: string) {
    super(o, dir);
    onTestFinished(async (ctx) => {
      const failed = ctx.task.result?.state === 'fail';
      if (failed && !this.isDestroyed) console.error(`e2e cluster failed: ${this.seed.line}; data and logs kept in ${this.dir}\n${this.diagnostics()}`);
      await this.close(failed || process.env.E2E_KEEP === '1');
    });
  }

  /** Closes every client, then kills the members; keeps the data and logs when asked. */
  async close(keep: boolean): Promise<void> {
    for (const c of this.closeables.splice(0)) await c.close();
    for (const c of this.perMember.values()) c.close();
    this.perMember.clear();
    await this.destroy({ keep });
  }

  /**
   * An etcd3 client over the given members, closed with the cluster. Retries are off: a failed call
   * fails, so a test sees every error; each call goes to a random member, as etcd3 spreads calls.
   */
  client(names: readonly string[] = this.running()): Etcd3 {
    const c = etcd3Client(this.endpoints(names));
    this.closeables.push(c);
    return c;
  }

  /** Writers over every running member, putting unique keys under `prefix`; stopped with the cluster. */
  startWriters(prefix: string, concurrency = 4): Writers {
    const w = new Writers(this.client(), prefix, concurrency);
    this.closeables.push(w);
    return w;
  }

  /** The client aimed at this member alone (status, hash, serializable reads; not closed by the caller). */
  memberClient(name: string): Etcd3 {
    const slot = this.get(name).slot;
    let c = this.perMember.get(slot);
    if (!c) {
      c = etcd3Client([this.clientUrl(name)]);
      this.perMember.set(slot, c);
    }
    return c;
  }

  /**
   * A restarted member gets a fresh client of its own, which has answered Status before this returns (as
   * the member's client did before the harness took over the waiting): the old one's connection broke with
   * the process, and grpc-js fails calls on a channel still backing off ("No connection established").
   */
  override async restart(name: string, opts: Parameters<StoreCluster['restart']>[1] = {}): Promise<void> {
    const slot = this.get(name).slot;
    this.perMember.get(slot)?.close();
    this.perMember.delete(slot);
    await super.restart(name, opts);
    if (opts.wait === 'none') return;
    const c = this.memberClient(name);
    await waitFor(`${name}'s own client to connect`, () => orUndefined(c.maintenance.status({ deadline: Date.now() + 1000 })));
  }

  /** Closes `c` with the cluster (writers, watchers, leases a test opened). */
  track(c: { close(): unknown }): void {
    this.closeables.push(c);
  }
}

/**
 * Starts the founding members and waits for a leader. Must be called inside a test: the cluster is torn
 * down when the test finishes (see the head of this file).
 */
export async function startCluster(opts: E2eClusterOptions = {}): Promise<E2eCluster> {
  const c = await E2eCluster.start({
    program: 'setpoint',
    size: opts.size ?? 3,
    names: NAMES,
    token: 'setpoint-e2e',
    label: 'setpoint-e2e-',
    heartbeatMs: opts.heartbeatMs ?? 50,
    electionMs: opts.electionMs ?? 500,
    snapshotCount: opts.snapshotCount ?? 100_000,
    flags: opts.flags ?? [],
    env: opts.env ?? {},
  }, 'leader');
  console.log(`e2e cluster: ${c.seed.line}, data and logs in ${c.dir}`);
  return c;
}

/** No retries and no circuit breakers (a failed call fails, so tests see every error); 10 s per call. */
function etcd3Client(hosts: string[]): Etcd3 {
  return new Etcd3({
    hosts,
    faultHandling: { host: () => noop, global: noop },
    // As etcdctl's clientv3: answers of any size (grpc-js's own default stops at 4 MiB).
    grpcOptions: { 'grpc.max_receive_message_length': -1 },
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 10_000 }),
  });
}
