// A Setpoint store cluster as real OS processes (`setpoint store` with etcd's flags) for end-to-end tests:
// members on free loopback ports, data and JSON logs under a temp dir, SIGKILL/SIGTERM and restarts,
// membership changes through etcdctl 3.4, and npm etcd3 clients. Start it inside a test: whatever it starts
// dies when that test finishes, pass or fail, and a failed test prints the seed and every member's log tail.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import type { IStatusResponse } from 'etcd3';
import { onTestFinished } from 'vitest';
import { registerChild } from '../../../jepsen-lite/src/children.js';
import { SeededRng } from '../../../src/raft/rng.js';
import { etcdctl } from '../../server/helpers/etcdctl.js';
import type { CtlResult } from '../../server/helpers/etcdctl.js';
import { orUndefined, pause, waitFor } from './wait.js';
import { Writers } from './writers.js';

/** etcd's answer to a membership change its --strict-reconfig-check refuses for now. */
const UNHEALTHY = 'etcdserver: unhealthy cluster';

export interface StoreClusterOptions {
  /** Founding members, named a, b, c, … (default 3). */
  readonly size?: number;
  /** Fast failover by default: a dead leader is replaced within about a second. */
  readonly heartbeatMs?: number;
  readonly electionMs?: number;
  readonly snapshotCount?: number;
  /** More `setpoint store` flags for every member. */
  readonly flags?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

interface MemberProc {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly logPath: string;
  args: readonly string[];
  /** Decimal, as the etcd3 client spells ids; learned from the member's Status or from `member add`. */
  id: string | undefined;
  proc: ChildProcess | undefined;
  exited: Promise<Exit> | undefined;
  /** Taken out of the cluster with `member remove`: no longer counted, whether or not it still runs. */
  removed: boolean;
  /** One client for calls aimed at this member alone (status, hash, serializable reads). */
  readonly client: Etcd3;
}

const TOKEN = 'setpoint-e2e';
const NAMES = 'abcdefghij';

export class StoreCluster {
  private readonly members = new Map<string, MemberProc>();
  private readonly closeables: { close(): unknown }[] = [];
  private destroyed = false;
  readonly rng: SeededRng;

  private constructor(
    readonly dir: string,
    readonly seed: number,
    private readonly opts: StoreClusterOptions,
  ) {
    this.rng = new SeededRng(seed);
  }

  /**
   * Starts the founding members and waits for a leader. Must be called inside a test: the cluster is torn
   * down when the test finishes. Ports taken meanwhile by someone else (EADDRINUSE) mean a fresh try.
   */
  static async start(opts: StoreClusterOptions = {}): Promise<StoreCluster> {
    const seed = process.env.E2E_SEED !== undefined ? Number(process.env.E2E_SEED) : Math.floor(Math.random() * 2 ** 31);
    for (let attempt = 1; ; attempt++) {
      const c = new StoreCluster(mkdtempSync(join(tmpdir(), 'setpoint-e2e-')), seed, opts);
      onTestFinished(async (ctx) => {
        const failed = ctx.task.result?.state === 'fail';
        if (failed) c.printDiagnostics();
        await c.destroy(failed);
      });
      try {
        await c.boot();
        console.log(`e2e cluster: seed=${seed} (E2E_SEED to repeat), data and logs in ${c.dir}`);
        return c;
      } catch (e) {
        if (attempt >= 3 || !c.logsMention('EADDRINUSE')) throw e;
        await c.destroy(false);
      }
    }
  }

  private async boot(): Promise<void> {
    const size = this.opts.size ?? 3;
    const ports: [string, number, number][] = [];
    for (const name of NAMES.slice(0, size)) ports.push([name, await freePort(), await freePort()]);
    const initialCluster = ports.map(([n, , p]) => `${n}=${peerUrl(p)}`).join(',');
    for (const [name, clientPort, peerPort] of ports) this.spawn(this.define(name, clientPort, peerPort, initialCluster, 'new'));
    await Promise.all(ports.map(([n]) => this.waitServing(n)));
    await this.waitForLeader();
  }

  // ---- processes ----

  /** A member's ports, flags and log file; its process is started by spawn(). */
  private define(name: string, clientPort: number, peerPort: number, initialCluster: string, state: 'new' | 'existing'): MemberProc {
    const args = [
      ...['--name', name, '--data-dir', join(this.dir, name)],
      ...['--listen-client-urls', clientUrl(clientPort), '--advertise-client-urls', clientUrl(clientPort)],
      ...['--listen-peer-urls', peerUrl(peerPort), '--initial-advertise-peer-urls', peerUrl(peerPort)],
      ...['--initial-cluster', initialCluster, '--initial-cluster-state', state, '--initial-cluster-token', TOKEN],
      ...['--heartbeat-interval', String(this.opts.heartbeatMs ?? 50), '--election-timeout', String(this.opts.electionMs ?? 500)],
      ...['--snapshot-count', String(this.opts.snapshotCount ?? 100_000)],
      ...(this.opts.flags ?? []),
    ];
    const m: MemberProc = {
      name,
      clientPort,
      peerPort,
      logPath: join(this.dir, `${name}.log`),
      args,
      id: undefined,
      proc: undefined,
      exited: undefined,
      removed: false,
      client: etcd3Client([clientUrl(clientPort)]),
    };
    this.members.set(name, m);
    return m;
  }

  private spawn(m: MemberProc): void {
    // A test that timed out runs on in the background: it must not start what nobody will stop.
    if (this.destroyed) throw new Error(`cluster in ${this.dir} was torn down: not starting ${m.name}`);
    const fd = openSync(m.logPath, 'a');
    const env = { ...process.env, SETPOINT_LOG_FORMAT: 'json', ...this.opts.env };
    const proc = spawn(process.execPath, [mainJs(), 'store', ...m.args], { env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    registerChild(proc);
    m.proc = proc;
    m.exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Waits until the member answers Status on its client port; fails at once if its process exits. */
  private async waitServing(name: string, timeoutMs = 30_000): Promise<void> {
    const m = this.get(name);
    const proc = m.proc;
    await waitFor(
      `${name} to serve clients`,
      async () => {
        if (!proc || proc.exitCode !== null || proc.signalCode !== null) {
          throw new Error(`${name} exited (${String(proc?.exitCode ?? proc?.signalCode)}) before serving:\n${this.logTail(name, 15)}`);
        }
        const st = await orUndefined(this.status(name, 1000));
        if (st) m.id = st.header.member_id;
        return st ? true : undefined;
      },
      timeoutMs,
    );
  }

  /** Sends the signal and waits for the process to exit (SIGTERM: a clean stop, the leader hands over first). */
  async kill(name: string, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<Exit> {
    const m = this.get(name);
    if (!m.proc || !m.exited) throw new Error(`${name} is not running`);
    m.proc.kill(signal);
    const exit = await m.exited;
    m.proc = undefined;
    m.exited = undefined;
    return exit;
  }

  /** Waits for the member's process to exit on its own. */
  async exited(name: string, timeoutMs = 30_000): Promise<Exit> {
    const m = this.get(name);
    if (!m.exited) throw new Error(`${name} is not running`);
    const exit = await Promise.race([m.exited, pause(timeoutMs).then(() => undefined)]);
    if (!exit) throw new Error(`${name} still runs after ${timeoutMs} ms`);
    m.proc = undefined;
    m.exited = undefined;
    return exit;
  }

  /** A clean stop (SIGTERM); resolves with how the process exited. */
  stop(name: string): Promise<Exit> {
    return this.kill(name, 'SIGTERM');
  }

  /**
   * Starts a stopped member again on its data dir, with the same flags (or an added one for the first
   * time, see addMember), and waits until it serves (unless told not to: one expected to exit at once).
   * `flags` are added for this and later runs (a repeated flag's last value counts).
   */
  async restart(name: string, opts: { waitServing?: boolean; flags?: readonly string[] } = {}): Promise<void> {
    const m = this.get(name);
    if (m.proc) throw new Error(`${name} is still running`);
    if (opts.flags) m.args = [...m.args, ...opts.flags];
    this.spawn(m);
    if (opts.waitServing !== false) await this.waitServing(name);
  }

  /** Kills everything at once (SIGKILL), closes clients; keeps the data and logs of a failed test. */
  async destroy(keep: boolean): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const c of this.closeables.splice(0)) await c.close();
    await Promise.all(
      [...this.members.values()].map(async (m) => {
        m.client.close();
        if (m.proc) await this.kill(m.name, 'SIGKILL');
      }),
    );
    if (!keep && process.env.E2E_KEEP !== '1') rmSync(this.dir, { recursive: true, force: true });
  }

  // ---- who is who ----

  private get(name: string): MemberProc {
    const m = this.members.get(name);
    if (!m) throw new Error(`no member named ${name}`);
    return m;
  }

  /** Members in the cluster (not removed), running or not. */
  names(): string[] {
    return [...this.members.values()].filter((m) => !m.removed).map((m) => m.name);
  }

  /** Members in the cluster whose process runs. */
  running(): string[] {
    return this.names().filter((n) => this.get(n).proc !== undefined);
  }

  isRunning(name: string): boolean {
    return this.get(name).proc !== undefined;
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
    return clientUrl(this.get(name).clientPort);
  }

  peerUrl(name: string): string {
    return peerUrl(this.get(name).peerPort);
  }

  /** Client URLs of the given members (default: every running member of the cluster). */
  endpoints(names: readonly string[] = this.running()): string[] {
    return names.map((n) => this.clientUrl(n));
  }

  // ---- clients ----

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

  /** The client aimed at this member alone (not closed by the caller). */
  memberClient(name: string): Etcd3 {
    return this.get(name).client;
  }

  /** Closes `c` with the cluster (writers, watchers, leases a test opened). */
  track(c: { close(): unknown }): void {
    this.closeables.push(c);
  }

  status(name: string, timeoutMs = 5000): Promise<IStatusResponse> {
    return this.get(name).client.maintenance.status({ deadline: Date.now() + timeoutMs });
  }

  /** The leader every running member names, if they agree and it runs; undefined otherwise. */
  async leader(): Promise<string | undefined> {
    const up = this.running();
    const views = await Promise.all(up.map((n) => orUndefined(this.status(n, 2000))));
    const leaders = new Set(views.map((v) => v?.leader));
    const [id] = leaders;
    if (leaders.size !== 1 || id === undefined || id === '0') return undefined;
    const name = this.nameOf(id);
    return name !== undefined && up.includes(name) ? name : undefined;
  }

  async waitForLeader(timeoutMs = 30_000): Promise<string> {
    return waitFor('a leader all running members agree on', () => this.leader(), timeoutMs);
  }

  /** Waits until a leader other than `old` is agreed on (after `old` was killed or stepped down). */
  async waitForNewLeader(old: string, timeoutMs = 30_000): Promise<string> {
    return waitFor(`a leader other than ${old}`, async () => {
      const l = await this.leader();
      return l !== undefined && l !== old ? l : undefined;
    }, timeoutMs);
  }

  /** Waits until the member has applied everything the leader had committed when this was called. */
  async waitCaughtUp(name: string, timeoutMs = 60_000): Promise<void> {
    const leader = await this.waitForLeader(timeoutMs);
    const target = BigInt((await this.status(leader)).raftIndex);
    await waitFor(`${name} to apply up to ${target}`, async () => {
      const st = await orUndefined(this.status(name, 2000));
      return st && BigInt(st.raftAppliedIndex) >= target ? true : undefined;
    }, timeoutMs);
  }

  /** The head revision, read linearizably through the first running member that answers. */
  async headRevision(): Promise<string | undefined> {
    for (const name of this.running()) {
      const r = await orUndefined(this.get(name).client.kv.range({ key: Buffer.from('\0') }, { deadline: Date.now() + 5000 }));
      if (r) return r.header.revision;
    }
    return undefined;
  }

  /**
   * HashKV of every running member at one revision: the head revision read linearizably now, which each
   * member is given time to reach (a member behind answers "future revision" until it applies it).
   */
  async hashes(timeoutMs = 60_000): Promise<{ revision: string; byMember: Map<string, { hash: string; compactRevision: string }> }> {
    const head = await waitFor('a linearizable read of the head revision', () => this.headRevision());
    const byMember = new Map<string, { hash: string; compactRevision: string }>();
    for (const name of this.running()) {
      // etcdctl rather than etcd3, whose client has no working hashKV (it calls a method grpc-js never defines).
      const h = await waitFor(`${name}'s HashKV at revision ${head}`, async () => {
        const r = await this.ctl(['endpoint', 'hashkv', `--rev=${head}`, '-w', 'json'], [name]);
        if (r.code !== 0) return undefined;
        const [first] = JSON.parse(r.stdout) as { HashKV: { hash: number; compact_revision: number } }[];
        return first?.HashKV;
      }, timeoutMs);
      byMember.set(name, { hash: String(h.hash), compactRevision: String(h.compact_revision) });
    }
    return { revision: head, byMember };
  }

  // ---- membership (etcdctl 3.4, as an operator would) ----

  /** Runs etcdctl against the running members (or the given ones). */
  ctl(args: readonly string[], names: readonly string[] = this.running()): Promise<CtlResult> {
    return etcdctl(this.endpoints(names).join(','), args, { flags: ['--command-timeout=15s'] });
  }

  /**
   * `member add` (as a learner or a voter) through etcdctl, then starts the new member with the
   * ETCD_INITIAL_CLUSTER etcdctl printed and --initial-cluster-state existing, and waits until it serves
   * (unless `start` is false: restart() starts it later). Resolves with its id. Refused as an "unhealthy
   * cluster" (--strict-reconfig-check: until the member asked has had its links to every voter up for 5 s,
   * as just after a start), it is tried again, as an etcd operator would.
   */
  async addMember(name: string, opts: { learner: boolean; start?: boolean }, timeoutMs = 60_000): Promise<string> {
    const clientPort = await freePort();
    const peerPort = await freePort();
    const args = ['member', 'add', name, `--peer-urls=${peerUrl(peerPort)}`, ...(opts.learner ? ['--learner'] : [])];
    const r = await waitFor(`${name} to be added`, async () => {
      const x = await this.ctl(args);
      return x.code !== 0 && x.stderr.includes(UNHEALTHY) ? undefined : x;
    }, timeoutMs, 250);
    const added = /Member\s+([0-9a-f]+)\s+added to cluster/.exec(r.stdout);
    const initial = /ETCD_INITIAL_CLUSTER="([^"]*)"/.exec(r.stdout);
    if (r.code !== 0 || !added?.[1] || initial?.[1] === undefined) throw new Error(`etcdctl member add failed (${r.code}): ${r.stdout}${r.stderr}`);
    const m = this.define(name, clientPort, peerPort, initial[1], 'existing');
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
    await waitFor(`${name}'s removal`, async () => {
      const r = await this.ctl(['member', 'remove', this.hexIdOf(name)], others);
      if (r.code === 0 || (timedOut && r.stderr.includes('member not found'))) return true;
      if (r.stderr.includes('no leader') || r.stderr.includes(UNHEALTHY)) return undefined; // nothing was proposed
      if (!r.stderr.includes('request timed out')) throw new Error(`etcdctl member remove failed (${r.code}): ${r.stderr}`);
      timedOut = true;
      return undefined;
    }, timeoutMs);
    this.get(name).removed = true;
  }

  // ---- logs ----

  /** How far the member's log goes now: pass it to logSince() to read only what comes after. */
  logMark(name: string): number {
    const p = this.get(name).logPath;
    return existsSync(p) ? statSync(p).size : 0;
  }

  logSince(name: string, mark = 0): string {
    const p = this.get(name).logPath;
    return existsSync(p) ? readFileSync(p).subarray(mark).toString() : '';
  }

  /** The member's JSON log lines with message `msg` (after `mark`, see logMark), parsed. */
  logged<T extends { readonly msg?: string }>(name: string, msg: string, mark = 0): T[] {
    return this.logSince(name, mark)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as T)
      .filter((l) => l.msg === msg);
  }

  logTail(name: string, lines = 40): string {
    return this.logSince(name).trimEnd().split('\n').slice(-lines).join('\n');
  }

  private logsMention(s: string): boolean {
    return [...this.members.keys()].some((n) => this.logSince(n).includes(s));
  }

  printDiagnostics(): void {
    const parts = [`e2e cluster failed: seed=${this.seed} (rerun with E2E_SEED=${this.seed}); data and logs kept in ${this.dir}`];
    for (const m of this.members.values()) parts.push(`---- ${m.name} (${m.proc ? 'running' : 'stopped'}) ${m.logPath}: last lines ----\n${this.logTail(m.name)}`);
    console.error(parts.join('\n'));
  }
}

function clientUrl(port: number): string {
  return `http://127.0.0.1:${port}`;
}

function peerUrl(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/** No retries and no circuit breakers (a failed call fails, so tests see every error); 10 s per call. */
function etcd3Client(hosts: string[]): Etcd3 {
  return new Etcd3({
    hosts,
    faultHandling: { host: () => noop, global: noop },
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 10_000 }),
  });
}

/** dist/src/cli/main.js of this checkout (tests run after `npm run build`). */
function mainJs(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const p = join(dir, 'dist', 'src', 'cli', 'main.js');
    if (existsSync(join(dir, 'package.json')) && existsSync(p)) return p;
  }
  throw new Error('dist/src/cli/main.js not found: run `npm run build` first');
}

const taken = new Set<number>();

/**
 * A port nobody listens on, below the kernel's ephemeral range (Linux: 32768 and up), so no outgoing
 * connection can take it while a killed member is down and must come back on it; each vitest worker
 * draws from its own block (VITEST_POOL_ID), so test files running side by side never pick the same one.
 */
async function freePort(): Promise<number> {
  const block = Number(process.env.VITEST_POOL_ID ?? '1') % 16;
  const base = 20_000 + block * 750;
  for (let i = 0; i < 750; i++) {
    const port = base + Math.floor(Math.random() * 750);
    if (taken.has(port) || !(await canListen(port))) continue;
    taken.add(port);
    return port;
  }
  throw new Error(`no free port in ${base}..${base + 749}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}
