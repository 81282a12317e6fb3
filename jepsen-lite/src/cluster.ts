// The cluster under test as real OS processes on free loopback ports, each member's peer traffic routed
// through the harness's link proxies. Members live in "slots" (ports, proxies, data dir); a membership
// change reuses a free slot, so every proxy and dial map can be laid out once, before the first start.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync, rmSync } from 'node:fs';
import path from 'node:path';
import { registerChild } from './children.js';
import { EtcdClient } from './etcd-client.js';
import type { Network } from './network.js';
import { freePort } from './ports.js';
import { LinkProxy } from './proxy.js';
import type { MemberLaunch, Target } from './target.js';
import type { SeededRng } from '../../src/raft/rng.js';

export type SlotState = 'absent' | 'up' | 'killed' | 'paused';

export interface Slot {
  index: number;
  clientPort: number;
  peerPort: number;
  advertisePeerUrl: string;
  state: SlotState;
  /** A voting member or learner of the cluster (even while killed or paused). */
  member: boolean;
  name: string;
  generation: number;
  launch: MemberLaunch | undefined;
  proc: ChildProcess | undefined;
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
  private stopping = false;

  constructor(readonly o: ClusterOptions) {}

  endpoint(i: number): string {
    return `127.0.0.1:${this.slots[i]!.clientPort}`;
  }

  members(): Slot[] {
    return this.slots.filter((s) => s.member);
  }

  async start(): Promise<void> {
    const total = this.o.nodes + this.o.spare;
    mkdirSync(this.o.logDir, { recursive: true });
    for (let i = 0; i < total; i++) {
      const clientPort = await freePort();
      const peerPort = await freePort();
      const proxyPort = this.o.target.proxyMode === 'sniff' ? await freePort() : peerPort;
      this.slots.push({
        index: i,
        clientPort,
        peerPort,
        advertisePeerUrl: `http://127.0.0.1:${proxyPort}`,
        state: 'absent',
        member: false,
        name: `n${i + 1}`,
        generation: 0,
        launch: undefined,
        proc: undefined,
        memberId: undefined,
        admin: new EtcdClient(`127.0.0.1:${clientPort}`),
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
    const initial = this.slots.slice(0, this.o.nodes);
    const initialCluster = initial.map((s) => `${s.name}=${s.advertisePeerUrl}`).join(',');
    for (const s of initial) {
      s.member = true;
      s.launch = this.launchFor(s, initialCluster, 'new', dialMaps[s.index]!);
      this.spawn(s);
    }
    this.dialMaps = dialMaps;
    await this.waitHealthy(60_000);
    await this.learnMemberIds();
  }

  private dialMaps: Map<string, string>[] = [];

  private launchFor(s: Slot, initialCluster: string, state: 'new' | 'existing', dialMap: Map<string, string>): MemberLaunch {
    return {
      name: s.name,
      dataDir: path.join(this.o.dir, 'data', `${s.name}`),
      clientUrl: `http://127.0.0.1:${s.clientPort}`,
      listenPeerUrl: `http://127.0.0.1:${s.peerPort}`,
      advertisePeerUrl: s.advertisePeerUrl,
      initialCluster,
      state,
      token: TOKEN,
      heartbeatMs: this.o.heartbeatMs,
      electionMs: this.o.electionMs,
      snapshotCount: this.o.snapshotCount,
      dialMap,
    };
  }

  /** etcd's rafthttp names the dialer in X-PeerURLs (its advertised peer URLs) and X-Server-From (its id). */
  private dialerFromHeaders(h: Map<string, string>): number | undefined {
    const urls = (h.get('x-peerurls') ?? '').split(',').map((u) => u.trim());
    for (const s of this.slots) if (urls.includes(s.advertisePeerUrl)) return s.index;
    const from = h.get('x-server-from');
    if (from) for (const s of this.slots) if (s.memberId !== undefined && BigInt(s.memberId).toString(16) === from) return s.index;
    return undefined;
  }

  private spawn(s: Slot): void {
    const launch = s.launch!;
    mkdirSync(path.dirname(launch.dataDir), { recursive: true });
    const cmd = this.o.target.command(launch, this.o.env);
    const logFd = openSync(path.join(this.o.logDir, `${s.name}.log`), 'a');
    const proc = spawn(cmd.bin, cmd.argv, { env: cmd.env, stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    registerChild(proc);
    s.proc = proc;
    s.state = 'up';
    proc.once('exit', (code, signal) => {
      if (s.proc !== proc) return;
      s.proc = undefined;
      if (s.state === 'up' || s.state === 'paused') {
        s.state = 'killed';
        if (!this.stopping) this.o.onExit?.(s, code, signal);
      }
    });
  }

  private async signalAndWait(s: Slot, sig: NodeJS.Signals): Promise<void> {
    const p = s.proc;
    if (!p) return;
    const exited = new Promise<void>((resolve) => (p.exitCode !== null || p.signalCode !== null ? resolve() : p.once('exit', () => resolve())));
    s.state = 'killed';
    p.kill('SIGCONT');
    p.kill(sig);
    await exited;
  }

  async kill(i: number): Promise<void> {
    await this.signalAndWait(this.slots[i]!, 'SIGKILL');
  }

  restart(i: number): void {
    const s = this.slots[i]!;
    if (!s.member || s.state !== 'killed') return;
    this.spawn(s);
  }

  pause(i: number): void {
    const s = this.slots[i]!;
    if (s.state !== 'up' || !s.proc) return;
    s.proc.kill('SIGSTOP');
    s.state = 'paused';
  }

  resume(i: number): void {
    const s = this.slots[i]!;
    if (s.state !== 'paused' || !s.proc) return;
    s.proc.kill('SIGCONT');
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
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const up = this.members().filter((s) => s.state === 'up');
      const ok = await Promise.all(up.map((s) => s.admin.range('health', {}, 1000).then(() => true, () => false)));
      if (up.length > 0 && ok.every(Boolean)) return true;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
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
    s.launch = this.launchFor(s, initialCluster, 'existing', this.dialMaps[s.index]!);
    this.spawn(s);
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
    await this.signalAndWait(s, 'SIGKILL');
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
    await Promise.all(this.slots.map((s) => this.signalAndWait(s, 'SIGKILL')));
    for (const s of this.slots) s.admin.close();
    await Promise.all(this.proxies.map((p) => p.stop()));
  }
}
