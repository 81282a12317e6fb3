// The cluster under test: members started by the harness (src/harness/store-cluster.ts) as real OS
// processes on free loopback ports, each member's peer traffic routed through jepsen-lite's link proxies.
// Members live in "slots" (ports, proxies, data dir); a membership change reuses a free slot, so every
// proxy and dial map can be laid out once, before the first start.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/harness/free-port.js';
import { StoreCluster } from '../../src/harness/store-cluster.js';
import { waitFor } from '../../src/harness/wait.js';
import { EtcdClient } from './etcd-client.js';
import type { Network } from './network.js';
import { LinkProxy } from './proxy.js';
import type { Target } from './target.js';
import type { SeededRng } from '../../src/raft/rng.js';

export type SlotState = 'absent' | 'up' | 'killed' | 'paused';

export interface Slot {
  index: number;
  /** The harness's name for the slot (n1, n2, …); `name` is the member's, which changes when it is re-added. */
  readonly key: string;
  clientPort: number;
  peerPort: number;
  advertisePeerUrl: string;
  state: SlotState;
  /** A voting member or learner of the cluster (even while killed or paused). */
  member: boolean;
  name: string;
  generation: number;
  memberId: string | undefined;
  admin: EtcdClient;
}

export interface ClusterOptions {
  target: Target;
  nodes: number;
  /** Extra slots for membership changes. */
  spare: number;
  /** Member data directories go here (etcd preallocates 64 MB WALs: keep it out of the report). */
  dir: string;
  logDir: string;
  heartbeatMs: number;
  electionMs: number;
  snapshotCount: number;
  env: Record<string, string>;
  network: Network;
  rng: SeededRng;
  onExit?: (slot: Slot, code: number | null, signal: string | null) => void;
}

const TOKEN = 'jepsen-lite';

export class Cluster {
  readonly slots: Slot[] = [];
  private readonly proxies: LinkProxy[] = [];
  private store: StoreCluster | undefined;
  private stopping = false;

  constructor(readonly o: ClusterOptions) {}

  endpoint(i: number): string {
    return `127.0.0.1:${this.slots[i]!.clientPort}`;
  }

  members(): Slot[] {
    return this.slots.filter((s) => s.member);
  }

  private get harness(): StoreCluster {
    if (!this.store) throw new Error('the cluster was not started');
    return this.store;
  }

  async start(): Promise<void> {
    const dataDir = path.join(this.o.dir, 'data');
    mkdirSync(dataDir, { recursive: true });
    const store = await StoreCluster.create({
      program: this.o.target.name,
      size: this.o.nodes,
      spare: this.o.spare,
      token: TOKEN,
      heartbeatMs: this.o.heartbeatMs,
      electionMs: this.o.electionMs,
      snapshotCount: this.o.snapshotCount,
      env: this.o.env,
      dir: this.o.dir,
      dataDir,
      logDir: this.o.logDir,
      onExit: (m, exit) => this.exitedOnItsOwn(m.slot, exit.code, exit.signal),
    });
    this.store = store;
    for (const m of store.members.values()) {
      const proxyPort = this.o.target.proxyMode === 'sniff' ? await freePort() : m.ports.peer;
      this.slots.push({
        index: this.slots.length,
        key: m.slot,
        clientPort: m.ports.client,
        peerPort: m.ports.peer,
        advertisePeerUrl: `http://127.0.0.1:${proxyPort}`,
        state: 'absent',
        member: false,
        name: m.name,
        generation: 0,
        memberId: undefined,
        admin: new EtcdClient(`127.0.0.1:${m.ports.client}`),
      });
    }
    const dialMaps = this.slots.map(() => new Map<string, string>());
    if (this.o.target.proxyMode === 'sniff') {
      for (const s of this.slots) {
        const port = Number(new URL(s.advertisePeerUrl).port);
        this.proxies.push(new LinkProxy(port, s.peerPort, { kind: 'sniff', to: s.index, resolve: (h) => this.dialerFromHeaders(h) }, this.o.network, this.o.rng.fork()));
      }
    } else {
      for (const from of this.slots) {
        for (const to of this.slots) {
          if (from === to) continue;
          const port = await freePort();
          dialMaps[from.index]!.set(to.advertisePeerUrl, `http://127.0.0.1:${port}`);
          this.proxies.push(new LinkProxy(port, to.peerPort, { kind: 'fixed', from: from.index, to: to.index }, this.o.network, this.o.rng.fork()));
        }
      }
    }
    await Promise.all(this.proxies.map((p) => p.start()));
    for (const s of this.slots) {
      const m = store.get(s.key);
      m.advertisePeerUrl = s.advertisePeerUrl;
      m.env = { ...m.env, ...this.o.target.memberEnv(dialMaps[s.index]!) };
    }
    const founders = this.slots.slice(0, this.o.nodes);
    for (const s of founders) {
      s.member = true;
      s.state = 'up';
      store.launch(s.key);
    }
    // A member that cannot start (no build, no etcd, a bad flag) fails the run here, with its log.
    await store.waitUntil(founders.map((s) => s.key), 'serving', 60_000);
    await this.waitHealthy(60_000);
    await this.learnMemberIds();
  }

  /** etcd's rafthttp names the dialer in X-PeerURLs (its advertised peer URLs) and X-Server-From (its id). */
  private dialerFromHeaders(h: Map<string, string>): number | undefined {
    const urls = (h.get('x-peerurls') ?? '').split(',').map((u) => u.trim());
    for (const s of this.slots) if (urls.includes(s.advertisePeerUrl)) return s.index;
    const from = h.get('x-server-from');
    if (from) for (const s of this.slots) if (s.memberId !== undefined && BigInt(s.memberId).toString(16) === from) return s.index;
    return undefined;
  }

  private exitedOnItsOwn(key: string, code: number | null, signal: string | null): void {
    const s = this.slots.find((x) => x.key === key);
    if (!s || (s.state !== 'up' && s.state !== 'paused')) return;
    s.state = 'killed';
    if (!this.stopping) this.o.onExit?.(s, code, signal);
  }

  private async killSlot(s: Slot): Promise<void> {
    const m = this.harness.get(s.key);
    if (s.state !== 'absent') s.state = 'killed';
    if (m.running) await this.harness.kill(s.key, 'SIGKILL');
  }

  async kill(i: number): Promise<void> {
    await this.killSlot(this.slots[i]!);
  }

  restart(i: number): void {
    const s = this.slots[i]!;
    if (!s.member || s.state !== 'killed') return;
    s.state = 'up';
    // Not awaited: the nemesis starts it and carries on; the start itself happens before this returns.
    this.harness.restart(s.key, { wait: 'none' }).catch(() => undefined);
  }

  pause(i: number): void {
    const s = this.slots[i]!;
    if (s.state !== 'up' || !this.harness.isRunning(s.key)) return;
    this.harness.pause(s.key);
    s.state = 'paused';
  }

  resume(i: number): void {
    const s = this.slots[i]!;
    if (s.state !== 'paused' || !this.harness.isRunning(s.key)) return;
    this.harness.resume(s.key);
    s.state = 'up';
  }

  /** Learns each member's id from its Status header (needed to map the leader id to a slot). */
  async learnMemberIds(): Promise<void> {
    await Promise.all(
      this.members().map(async (s) => {
        try {
          s.memberId = (await s.admin.status(1000)).memberId;
        } catch {
          // down right now; learned later
        }
      }),
    );
  }

  /** The slot the most members name as leader, if any answers. */
  async leaderSlot(): Promise<number | undefined> {
    const votes = new Map<string, number>();
    await Promise.all(
      this.members()
        .filter((s) => s.state === 'up')
        .map(async (s) => {
          try {
            const st = await s.admin.status(1000);
            s.memberId = st.memberId;
            if (st.leader !== '0') votes.set(st.leader, (votes.get(st.leader) ?? 0) + 1);
          } catch {
            // no answer: no vote
          }
        }),
    );
    const best = [...votes].sort((a, b) => b[1] - a[1])[0];
    if (!best) return undefined;
    return this.slots.find((s) => s.member && s.memberId === best[0])?.index;
  }

  /** Waits until every running member answers a linearizable read (so it has a leader and is caught up). */
  async waitHealthy(timeoutMs: number): Promise<boolean> {
    return waitFor(
      'every running member to answer a linearizable read',
      async () => {
        const up = this.members().filter((s) => s.state === 'up');
        const ok = await Promise.all(up.map((s) => s.admin.range('health', {}, 1000).then(() => true, () => false)));
        return up.length > 0 && ok.every(Boolean);
      },
      { timeoutMs, intervalMs: 200 },
    ).catch(() => false);
  }

  /** Any running member that answers, for administrative calls. */
  async anyAdmin(exclude: number[] = []): Promise<EtcdClient | undefined> {
    const leader = await this.leaderSlot();
    if (leader !== undefined && !exclude.includes(leader)) return this.slots[leader]!.admin;
    return this.members().find((s) => s.state === 'up' && !exclude.includes(s.index))?.admin;
  }

  freeSlot(): Slot | undefined {
    return this.slots.find((s) => !s.member && s.state === 'absent');
  }

  /** MemberAdd as a learner, then start the process with --initial-cluster-state existing. */
  async addLearner(s: Slot, timeoutMs: number): Promise<void> {
    const admin = await this.anyAdmin();
    if (!admin) throw new Error('no member answers');
    const added = await admin.memberAdd(s.advertisePeerUrl, true, timeoutMs);
    // Named only once added: etcd refuses adds for a while after a change ("unhealthy cluster").
    s.generation++;
    s.name = `n${s.index + 1}g${s.generation}`;
    s.memberId = added.id;
    s.member = true;
    const list = await admin.memberList(timeoutMs);
    const initialCluster = list
      .map((m) => `${m.id === added.id ? s.name : m.name || `unnamed${m.id}`}=${m.peerUrls[0] ?? ''}`)
      .filter((x) => !x.startsWith('unnamed') || x.includes(s.advertisePeerUrl))
      .join(',');
    rmSync(path.join(this.o.dir, 'data', s.name), { recursive: true, force: true });
    s.state = 'up';
    this.harness.launch(s.key, { name: s.name, initialCluster, state: 'existing' });
  }

  async promote(s: Slot, timeoutMs: number): Promise<void> {
    const admin = await this.anyAdmin();
    if (!admin || !s.memberId) throw new Error('no member answers');
    await admin.memberPromote(s.memberId, timeoutMs);
  }

  /** MemberRemove (through another member), then stop the process and wipe its data: the slot is free. */
  async removeMember(s: Slot, timeoutMs: number): Promise<void> {
    const admin = await this.anyAdmin([s.index]);
    if (!admin || !s.memberId) throw new Error('no other member answers');
    await admin.memberRemove(s.memberId, timeoutMs);
    s.member = false;
    await this.killSlot(s);
    s.state = 'absent';
    s.memberId = undefined;
    for (const p of this.proxies) if (p.targetPort === s.peerPort) p.resetAll();
  }

  /** Bytes the peer proxies forwarded and swallowed: proof that peer traffic crossed them and cuts bit. */
  proxyBytes(): { forwarded: number; dropped: number } {
    return {
      forwarded: this.proxies.reduce((n, p) => n + p.bytesForwarded, 0),
      dropped: this.proxies.reduce((n, p) => n + p.bytesDropped, 0),
    };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // SIGKILL to every member (the data dir is the run's: the runner removes it).
    await this.store?.destroy({ signal: 'SIGKILL' });
    for (const s of this.slots) s.admin.close();
    await Promise.all(this.proxies.map((p) => p.stop()));
  }
}
