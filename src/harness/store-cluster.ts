// A cluster of store members as real OS processes — etcd 3.4 or `setpoint store`, started with exactly the
// same etcd flags (only the program differs): ports (free ones, or fixed), data dirs and logs (in a temp
// dir unless told where), optional TLS, waits on conditions, membership through etcdctl as an operator
// would, SIGKILL/SIGTERM/SIGSTOP/SIGCONT and restarts per member, and a teardown that kills what is left.
// The e2e and differential tests, jepsen-lite, the benchmarks and `setpoint up` all start theirs here.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from './command.js';
import { etcdctl } from './etcdctl.js';
import type { CtlOptions, CtlResult } from './etcdctl.js';
import { freePorts } from './free-port.js';
import { clientUrl, peerUrl, storeMemberKind } from './kinds/store-member.js';
import type { StoreMemberSpec, StorePort, StoreProgram, StoreTuning } from './kinds/store-member.js';
import { ManagedProcess } from './managed-process.js';
import type { Exit } from './managed-process.js';
import { MemberClient } from './member-client.js';
import type { MemberStatus } from './member-client.js';
import type { TlsFiles } from './tls-files.js';
import { orUndefined, waitFor } from './wait.js';

/** etcd's answer to a membership change its --strict-reconfig-check refuses for now. */
const UNHEALTHY = 'etcdserver: unhealthy cluster';

/** How far start() and restart() wait: not at all, until it answers Status, until a leader is agreed on, or until it answers a linearizable read. */
export type Readiness = 'none' | 'serving' | 'leader' | 'ready';

/** Tuning (heartbeat, election timeout, snapshot count, flags, environment) is the same for every member. */
export interface StoreClusterOptions extends StoreTuning {
  readonly program: StoreProgram;
  /** Founding members (default 3). */
  readonly size?: number;
  /** More slots with ports, for members added later (`member add`, then launch()). */
  readonly spare?: number;
  /** Slot names, founders first (default n1, n2, …). */
  readonly names?: readonly string[];
  /** --initial-cluster-token (default etcd's, etcd-cluster). */
  readonly token?: string;
  /** Client TLS: the members' certificate (https client URLs, --client-cert-auth). */
  readonly tls?: TlsFiles;
  /** What the harness's own clients (Status, etcdctl) present; default `tls`. */
  readonly clientTls?: TlsFiles;
  /** Peer TLS (https peer URLs, --peer-client-cert-auth). */
  readonly peerTls?: TlsFiles;
  /** The address members listen on (default 127.0.0.1). */
  readonly host?: string;
  /** Fixed ports, one pair per slot (`setpoint up`); free ones otherwise. */
  readonly ports?: readonly Readonly<Record<StorePort, number>>[];
  /** Where data dirs and logs go. Given, it is never removed; by default a fresh temp dir under `baseDir`. */
  readonly dir?: string;
  readonly baseDir?: string;
  /** Apart from the rest (jepsen-lite keeps logs in its report and data outside it). */
  readonly dataDir?: string;
  readonly logDir?: string;
  /** Each line a member prints, instead of its log file (`setpoint up` shows them). */
  readonly onLine?: (member: string, line: string) => void;
  /** A member that exited when nobody asked it to (killed from outside, crashed, or stopped itself). */
  readonly onExit?: (member: StoreMember, exit: Exit) => void;
  /** The temp dir's prefix (default setpoint-<program>-). */
  readonly label?: string;
}

export interface LaunchOptions {
  /** The cluster to join, as `member add` printed it (default: the founders). */
  readonly initialCluster?: string;
  readonly state?: 'new' | 'existing';
  /** Another member name for this slot from now on (jepsen-lite names each re-added member anew). */
  readonly name?: string;
  /** More environment, for this member from now on. */
  readonly env?: Readonly<Record<string, string>>;
}

type ClusterClass<C extends StoreCluster> = new (o: StoreClusterOptions, dir: string) => C;

/** One slot: ports that stay its own, and the member that runs on them. */
export class StoreMember {
  /** Its member name, as --name gives it (the slot's unless launch() renamed it). */
  name: string;
  /** The peer URL the others dial: its own, unless a proxy stands in between (set it before launch()). */
  advertisePeerUrl: string;
  /** Flags added to this member's command for this and later runs. */
  flags: string[] = [];
  env: Record<string, string> = {};
  /** Decimal, as Status and the etcd3 client spell ids; learned from Status or from `member add`. */
  id: string | undefined;
  /** Part of the cluster: launched, or added with `member add` (even while down). */
  member = false;
  /** Taken out with `member remove`: no longer counted, whether or not it still runs. */
  removed = false;
  process: ManagedProcess | undefined;
  spec: StoreMemberSpec | undefined;

  constructor(
    readonly slot: string,
    readonly ports: Readonly<Record<StorePort, number>>,
    readonly clientUrl: string,
    readonly peerUrl: string,
    readonly client: MemberClient,
  ) {
    this.name = slot;
    this.advertisePeerUrl = peerUrl;
  }

  get running(): boolean {
    return this.process?.running ?? false;
  }
}

export class StoreCluster {
  readonly members = new Map<string, StoreMember>();
  private destroyed = false;
  private readonly ownDir: boolean;

  /** Use create() or start(): they lay out the slots. */
  constructor(
    readonly o: StoreClusterOptions,
    /** Where data dirs and logs go. */
    readonly dir: string,
  ) {
    this.ownDir = o.dir === undefined;
  }

  get program(): StoreProgram {
    return this.o.program;
  }

  /** What members serve clients with, and what a client of theirs presents. */
  get tls(): TlsFiles | undefined {
    return this.o.clientTls ?? this.o.tls;
  }

  /** A cluster with its slots laid out (ports found, nothing started): launch() or startFounders() next. */
  static async create<C extends StoreCluster>(this: ClusterClass<C>, o: StoreClusterOptions): Promise<C> {
    const dir = o.dir ?? (await mkdtemp(join(o.baseDir ?? tmpdir(), o.label ?? `setpoint-${o.program}-`)));
    const c = new this(o, dir);
    await c.layOut();
    return c;
  }

  /**
   * Lays out and starts the founders, waiting as told (default: until every member answers a linearizable
   * read). A free port is only free until someone binds it: a member that lost that race (EADDRINUSE) means
   * a fresh cluster on fresh ports, twice at most. Whatever fails, nothing it started is left running.
   */
  static async start<C extends StoreCluster>(this: ClusterClass<C>, o: StoreClusterOptions, wait: Readiness = 'ready'): Promise<C> {
    for (let attempt = 1; ; attempt++) {
      const c = await StoreCluster.create.call<ClusterClass<C>, [StoreClusterOptions], Promise<C>>(this, o);
      try {
        await c.startFounders(wait);
        return c;
      } catch (e) {
        const lostRace = /EADDRINUSE|address already in use/.test(`${(e as Error).message}${c.allLogs()}`);
        const diagnostics = `${c.diagnostics(15)}\n(${c.dir} removed)`;
        await c.destroy();
        if (attempt < 3 && lostRace && !o.ports) continue;
        throw new Error(`${(e as Error).message}\n${diagnostics}`, { cause: e });
      }
    }
  }

  /** Names `n1, n2, …` unless given; slots beyond the founders are the spares. */
  private slotNames(): string[] {
    const total = (this.o.size ?? 3) + (this.o.spare ?? 0);
    const names = this.o.names ?? [];
    return Array.from({ length: total }, (_, i) => names[i] ?? `n${i + 1}`);
  }

  private async layOut(): Promise<void> {
    const names = this.slotNames();
    for (const [i, name] of names.entries()) await this.addSlot(name, this.o.ports?.[i]);
  }

  /** A new slot with its own ports (fixed or free), for a member that does not exist yet. */
  protected async addSlot(name: string, fixed?: Readonly<Record<StorePort, number>>): Promise<StoreMember> {
    if (this.members.has(name)) throw new Error(`a member slot named ${name} exists already`);
    const host = this.o.host ?? '127.0.0.1';
    const ports = fixed ?? (await freePorts(['client', 'peer'] as const, host));
    const c = clientUrl({ host, ...(this.o.tls ? { tls: this.o.tls } : {}) }, ports.client);
    const p = peerUrl({ host, ...(this.o.peerTls ? { peerTls: this.o.peerTls } : {}) }, ports.peer);
    const m = new StoreMember(name, ports, c, p, new MemberClient(c, this.tls));
    this.members.set(name, m);
    return m;
  }

  dataDirOf(name: string): string {
    return join(this.o.dataDir ?? this.dir, this.get(name).name);
  }

  logFileOf(name: string): string {
    return join(this.o.logDir ?? this.dir, `${this.get(name).name}.log`);
  }

  /** The founders' --initial-cluster, by their advertised peer URLs. */
  foundersCluster(): string {
    return [...this.members.values()]
      .slice(0, this.o.size ?? 3)
      .map((m) => `${m.name}=${m.advertisePeerUrl}`)
      .join(',');
  }

  async startFounders(wait: Readiness = 'ready'): Promise<void> {
    const founders = [...this.members.keys()].slice(0, this.o.size ?? 3);
    for (const n of founders) this.launch(n);
    await this.waitUntil(founders, wait);
  }

  /** Starts the member of a slot for the first time (or anew, after a remove), with the flags the cluster gives every member. */
  launch(slot: string, l: LaunchOptions = {}): StoreMember {
    const m = this.define(slot, l);
    m.process?.start();
    return m;
  }

  /**
   * Makes the slot's member part of the cluster with its command line, without starting it (restart()
   * starts it): a member added with `member add` that has not run yet.
   */
  define(slot: string, l: LaunchOptions = {}): StoreMember {
    // A test that timed out runs on in the background: it must not start what nobody will stop.
    if (this.destroyed) throw new Error(`cluster in ${this.dir} was torn down: not starting ${slot}`);
    const m = this.get(slot);
    if (m.running) throw new Error(`${slot} is running already`);
    if (l.name !== undefined) m.name = l.name;
    if (l.env) m.env = { ...m.env, ...l.env };
    const o = this.o;
    m.spec = {
      name: m.name,
      dataDir: this.dataDirOf(slot),
      host: o.host ?? '127.0.0.1',
      ...(m.advertisePeerUrl !== m.peerUrl ? { advertisePeerUrl: m.advertisePeerUrl } : {}),
      initialCluster: l.initialCluster ?? this.foundersCluster(),
      state: l.state ?? 'new',
      token: o.token ?? 'etcd-cluster',
      ...(o.heartbeatMs !== undefined ? { heartbeatMs: o.heartbeatMs } : {}),
      ...(o.electionMs !== undefined ? { electionMs: o.electionMs } : {}),
      ...(o.snapshotCount !== undefined ? { snapshotCount: o.snapshotCount } : {}),
      ...(o.tls ? { tls: o.tls } : {}),
      ...(o.peerTls ? { peerTls: o.peerTls } : {}),
      flags: o.flags ?? [],
      env: { ...o.env },
      ...(o.nodeArgs ? { nodeArgs: o.nodeArgs } : {}),
    };
    const onLine = o.onLine;
    const p = new ManagedProcess(m.name, this.commandOf(m), onLine ? { onLine: (line) => onLine(m.name, line) } : { logFile: this.logFileOf(slot) });
    p.onExit((exit, asked) => {
      if (!asked && !this.destroyed) o.onExit?.(m, exit);
    });
    m.process = p;
    m.member = true;
    m.removed = false;
    return m;
  }

  private commandOf(m: StoreMember): Command {
    if (!m.spec) throw new Error(`${m.slot} was never launched`);
    const spec = { ...m.spec, flags: [...(m.spec.flags ?? []), ...m.flags], env: { ...m.spec.env, ...m.env } };
    return storeMemberKind(this.o.program).command(spec, m.ports);
  }

  // ---- processes ----

  get(name: string): StoreMember {
    const m = this.members.get(name) ?? [...this.members.values()].find((x) => x.name === name);
    if (!m) throw new Error(`no member named ${name}`);
    return m;
  }

  private proc(name: string): ManagedProcess {
    const p = this.get(name).process;
    if (!p) throw new Error(`${name} was never started`);
    return p;
  }

  /** Sends the signal and waits for the exit (SIGTERM: a clean stop, the leader hands over first). */
  async kill(name: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<Exit> {
    const p = this.proc(name);
    if (!p.running) throw new Error(`${name} is not running`);
    return p.kill(signal);
  }

  /** A clean stop (SIGTERM); resolves with how the process exited. */
  stop(name: string): Promise<Exit> {
    return this.kill(name, 'SIGTERM');
  }

  /** SIGSTOP: the process is frozen, its sockets open (the kernel still acknowledges its TCP). */
  pause(name: string): void {
    this.proc(name).pause();
  }

  resume(name: string): void {
    this.proc(name).resume();
  }

  /** Waits for the member's process to exit on its own. */
  exited(name: string, timeoutMs = 30_000): Promise<Exit> {
    return this.proc(name).exited(timeoutMs);
  }

  /**
   * Starts a stopped member again on its data dir with the same command, and waits as told (default: until
   * it serves). `flags` are added for this and later runs (a repeated flag's last value counts).
   */
  async restart(name: string, opts: { wait?: Readiness; flags?: readonly string[] } = {}): Promise<void> {
    if (this.destroyed) throw new Error(`cluster in ${this.dir} was torn down: not restarting ${name}`);
    const m = this.get(name);
    const p = this.proc(name);
    if (p.running) throw new Error(`${name} is still running`);
    if (opts.flags) m.flags.push(...opts.flags);
    p.command = this.commandOf(m);
    p.start();
    await this.waitUntil([name], opts.wait ?? 'serving');
  }

  /** Waits until each named member is as ready as asked; a member that exits on the way fails it at once. */
  async waitUntil(names: readonly string[], wait: Readiness, timeoutMs = 30_000): Promise<void> {
    if (wait === 'none') return;
    await Promise.all(names.map((n) => this.waitServing(n, timeoutMs)));
    if (wait === 'serving') return;
    await this.waitForLeader(timeoutMs);
    if (wait === 'leader') return;
    await Promise.all(
      names.map((n) => this.proc(n).waitReady('answering a linearizable read', () => orUndefined(this.get(n).client.headRevision(2000)).then((r) => r !== undefined), timeoutMs)),
    );
  }

  /** Waits until the member answers Status on its client port, and learns its id. */
  async waitServing(name: string, timeoutMs = 30_000): Promise<void> {
    const m = this.get(name);
    await this.proc(name).waitReady(
      'serving',
      async () => {
        const st = await orUndefined(m.client.status(1000));
        if (st) m.id = st.memberId;
        return st !== undefined;
      },
      timeoutMs,
    );
  }

  /**
   * Kills what still runs (SIGKILL unless told; anything gentler gets `graceMs`, default 10 s, before
   * SIGKILL follows), closes clients, removes the temp dir unless kept.
   */
  async destroy(o: { keep?: boolean; signal?: NodeJS.Signals; graceMs?: number } = {}): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    // A profiled member (SETPOINT_MEMBER_NODE_ARGS) writes its profile only when it exits cleanly.
    const signal = o.signal ?? (process.env.SETPOINT_MEMBER_NODE_ARGS ? 'SIGTERM' : 'SIGKILL');
    await Promise.all(
      [...this.members.values()].map(async (m) => {
        m.client.close();
        if (m.process?.running) await m.process.kill(signal, o.graceMs ?? 10_000);
      }),
    );
    if (this.ownDir && !o.keep) await rm(this.dir, { recursive: true, force: true });
  }

  get isDestroyed(): boolean {
    return this.destroyed;
  }

  // ---- who is who ----

  /** Members in the cluster (not removed), running or not. */
  names(): string[] {
    return [...this.members.values()].filter((m) => m.member && !m.removed).map((m) => m.name);
  }

  /** Members in the cluster whose process runs. */
  running(): string[] {
    return this.names().filter((n) => this.get(n).running);
  }

  isRunning(name: string): boolean {
    return this.get(name).running;
  }

  idOf(name: string): string {
    const id = this.get(name).id;
    if (id === undefined) throw new Error(`${name}'s member id is not known yet`);
    return id;
  }

  /** The id as etcdctl prints and takes it. */
  hexIdOf(name: string): string {
    return BigInt(this.idOf(name)).toString(16);
  }

  nameOf(id: string): string | undefined {
    return [...this.members.values()].find((m) => m.id === id)?.name;
  }

  clientUrl(name: string): string {
    return this.get(name).clientUrl;
  }

  peerUrl(name: string): string {
    return this.get(name).peerUrl;
  }

  /** Client URLs of the given members (default: every running member of the cluster). */
  endpoints(names: readonly string[] = this.running()): string[] {
    return names.map((n) => this.clientUrl(n));
  }

  status(name: string, timeoutMs = 5000): Promise<MemberStatus> {
    return this.get(name).client.status(timeoutMs);
  }

  /** The leader every running member names, if they agree and it runs; undefined otherwise. */
  async leader(): Promise<string | undefined> {
    const up = this.running();
    const views = await Promise.all(up.map((n) => orUndefined(this.status(n, 2000))));
    for (const [i, v] of views.entries()) if (v) this.get(up[i] as string).id = v.memberId;
    const leaders = new Set(views.map((v) => v?.leader));
    const [id] = leaders;
    if (leaders.size !== 1 || id === undefined || id === '0') return undefined;
    const name = this.nameOf(id);
    return name !== undefined && up.includes(name) ? name : undefined;
  }

  waitForLeader(timeoutMs = 30_000): Promise<string> {
    return waitFor('a leader all running members agree on', () => this.leader(), { timeoutMs, intervalMs: 100 });
  }

  /** Waits until a leader other than `old` is agreed on (after `old` was killed or stepped down). */
  waitForNewLeader(old: string, timeoutMs = 30_000): Promise<string> {
    return waitFor(
      `a leader other than ${old}`,
      async () => {
        const l = await this.leader();
        return l !== undefined && l !== old ? l : undefined;
      },
      { timeoutMs, intervalMs: 100 },
    );
  }

  /** Waits until the member has applied everything the leader had committed when this was called. */
  async waitCaughtUp(name: string, timeoutMs = 60_000): Promise<void> {
    const leader = await this.waitForLeader(timeoutMs);
    const target = (await this.status(leader)).raftIndex;
    await waitFor(
      `${name} to apply up to ${target}`,
      async () => {
        const st = await orUndefined(this.status(name, 2000));
        return st !== undefined && st.raftAppliedIndex >= target;
      },
      { timeoutMs, intervalMs: 100 },
    );
  }

  /** The head revision, read linearizably through the first running member that answers. */
  async headRevision(): Promise<string | undefined> {
    for (const name of this.running()) {
      const r = await orUndefined(this.get(name).client.headRevision());
      if (r !== undefined) return r.toString();
    }
    return undefined;
  }

  /**
   * HashKV of every running member at one revision: the head revision read linearizably now, which each
   * member is given time to reach (a member behind answers "future revision" until it applies it).
   */
  async hashes(timeoutMs = 60_000): Promise<{ revision: string; byMember: Map<string, { hash: string; compactRevision: string }> }> {
    const head = await waitFor('a linearizable read of the head revision', () => this.headRevision(), { timeoutMs, intervalMs: 100 });
    const byMember = new Map<string, { hash: string; compactRevision: string }>();
    for (const name of this.running()) {
      const h = await waitFor(`${name}'s HashKV at revision ${head}`, () => orUndefined(this.get(name).client.hashKV(BigInt(head))), { timeoutMs, intervalMs: 100 });
      byMember.set(name, h);
    }
    return { revision: head, byMember };
  }

  // ---- membership (etcdctl 3.4, as an operator would) ----

  /** Runs etcdctl against the running members (or the given ones), with the cluster's client TLS files. */
  ctl(args: readonly string[], names: readonly string[] = this.running(), opts: CtlOptions = {}): Promise<CtlResult> {
    return etcdctl(this.endpoints(names), args, { ...(this.tls ? { tls: this.tls } : {}), flags: ['--command-timeout=15s'], ...opts });
  }

  /**
   * `member add` (as a learner or a voter) through etcdctl, then starts the new member with the
   * ETCD_INITIAL_CLUSTER etcdctl printed and --initial-cluster-state existing, and waits until it serves
   * (unless `start` is false: restart() starts it later). Resolves with its id. Refused as an "unhealthy
   * cluster" (--strict-reconfig-check: until the member asked has had its links to every voter up for 5 s,
   * as just after a start), it is tried again, as an etcd operator would.
   */
  async addMember(name: string, opts: { learner: boolean; start?: boolean }, timeoutMs = 60_000): Promise<string> {
    const m = this.members.get(name) ?? (await this.addSlot(name));
    const args = ['member', 'add', name, `--peer-urls=${m.advertisePeerUrl}`, ...(opts.learner ? ['--learner'] : [])];
    const r = await waitFor(
      `${name} to be added`,
      async () => {
        const x = await this.ctl(args);
        return x.code !== 0 && x.stderr.includes(UNHEALTHY) ? undefined : x;
      },
      { timeoutMs, intervalMs: 250 },
    );
    const added = /Member\s+([0-9a-f]+)\s+added to cluster/.exec(r.stdout);
    const initial = /ETCD_INITIAL_CLUSTER="([^"]*)"/.exec(r.stdout);
    if (r.code !== 0 || !added?.[1] || initial?.[1] === undefined) throw new Error(`etcdctl member add failed (${r.code}): ${r.stdout}${r.stderr}`);
    this.define(name, { initialCluster: initial[1], state: 'existing' });
    m.id = BigInt(`0x${added[1]}`).toString();
    if (opts.start !== false) await this.restart(name);
    return m.id;
  }

  /**
   * `member remove` through etcdctl, asking the other running members. Without a leader it is tried again;
   * a removal proposed while a leader changes may time out and still apply, so a timed-out attempt is
   * tried again and "member not found" after it counts as done; refused as an "unhealthy cluster" (see
   * addMember), it is tried again too. From then on the member is not part of names(), running() or endpoints().
   */
  async removeMember(name: string, timeoutMs = 60_000): Promise<void> {
    const others = this.running().filter((n) => n !== name);
    let timedOut = false;
    await waitFor(
      `${name}'s removal`,
      async () => {
        const r = await this.ctl(['member', 'remove', this.hexIdOf(name)], others);
        if (r.code === 0 || (timedOut && r.stderr.includes('member not found'))) return true;
        if (r.stderr.includes('no leader') || r.stderr.includes(UNHEALTHY)) return undefined; // nothing was proposed
        if (!r.stderr.includes('request timed out')) throw new Error(`etcdctl member remove failed (${r.code}): ${r.stderr}`);
        timedOut = true;
        return undefined;
      },
      { timeoutMs, intervalMs: 100 },
    );
    this.get(name).removed = true;
  }

  // ---- logs ----

  /** How far the member's log goes now: pass it to logSince() to read only what comes after. */
  logMark(name: string): number {
    return this.get(name).process?.logMark() ?? 0;
  }

  logSince(name: string, mark = 0): string {
    return this.get(name).process?.logSince(mark) ?? '';
  }

  /** The member's JSON log lines with message `msg` (after `mark`, see logMark), parsed. */
  logged<T extends { readonly msg?: string }>(name: string, msg: string, mark = 0): T[] {
    return this.get(name).process?.logged<T>(msg, mark) ?? [];
  }

  logTail(name: string, lines = 40): string {
    return this.get(name).process?.logTail(lines) ?? '';
  }

  private allLogs(): string {
    return [...this.members.keys()].map((n) => this.logSince(n)).join('\n');
  }

  /** Where everything is and how each member's log ends: for a failure's report. */
  diagnostics(lines = 40): string {
    const parts = [`${this.program} cluster in ${this.dir}`];
    for (const m of this.members.values()) {
      if (!m.process) continue;
      const where = this.o.onLine ? '' : ` ${this.logFileOf(m.slot)}`;
      parts.push(`---- ${m.name} (${m.running ? 'running' : 'stopped'})${where}: last lines ----\n${this.logTail(m.slot, lines)}`);
    }
    return parts.join('\n');
  }

  /** The data dir of the member exists (it has run at least once on this slot). */
  hasData(name: string): boolean {
    return existsSync(this.dataDirOf(name));
  }
}

/** An etcd and a Setpoint cluster with the same options, started together; neither is left running if the other fails. */
export async function startBoth(o: Omit<StoreClusterOptions, 'program'>, wait: Readiness = 'ready'): Promise<{ etcd: StoreCluster; setpoint: StoreCluster }> {
  const [e, s] = await Promise.allSettled([StoreCluster.start({ ...o, program: 'etcd' }, wait), StoreCluster.start({ ...o, program: 'setpoint' }, wait)]);
  if (e.status === 'fulfilled' && s.status === 'fulfilled') return { etcd: e.value, setpoint: s.value };
  await Promise.all([e, s].map((r) => (r.status === 'fulfilled' ? r.value.destroy() : undefined)));
  throw e.status === 'rejected' ? e.reason : s.status === 'rejected' ? s.reason : new Error('unreachable');
}
