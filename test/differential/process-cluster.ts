// A 3-member cluster of real processes on free loopback ports — etcd 3.4 or `setpoint store` — started
// with exactly the same etcd flags (only the program differs), data in a temp dir, logs in files beside
// it. The differential tests and bench/etcd-bench.ts both use it; whoever starts one stops it, and a
// process exit hook kills what is left if a run dies before it can.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import https from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MEMBER_NODE_FLAGS } from '../../src/cli/member-node-flags.js';

export type Flavor = 'etcd' | 'setpoint';

/** Every cluster's --initial-cluster-token: with the peer URLs, what etcd derives the member ids from. */
export const CLUSTER_TOKEN = 'differential';

export interface ClusterOptions {
  /** Members started at once (default 3); spare slots get ports too, for `member add`. */
  readonly size?: number;
  readonly spare?: number;
  /** Extra etcd flags, the same for every member and both flavors. */
  readonly flags?: readonly string[];
  /** Where the temp dir goes (same disk for both flavors in the benchmark). */
  readonly baseDir?: string;
  /** Client TLS: https client URLs with --cert-file/--key-file/--trusted-ca-file --client-cert-auth. */
  readonly tls?: ClientTls;
  /**
   * The ports of each slot, instead of free ones: a cluster on the URLs another one had (member ids are
   * derived from the peer URLs, so the two then have the same ids).
   */
  readonly ports?: readonly { readonly client: number; readonly peer: number }[];
}

/** A CA and a certificate it signs, good for 127.0.0.1 as server and as client. */
export interface ClientTls {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

export interface Slot {
  readonly name: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  readonly dataDir: string;
  readonly logFile: string;
  proc: ChildProcess | undefined;
  exited: Promise<void>;
}

const live = new Set<ChildProcess>();
let hooked = false;

/** Kills every member still running when the test process exits, however it exits. */
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
}

/** Ports this process has handed out: never handed out twice, whatever the kernel offers next. */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const p = await anyFreePort();
    if (handedOut.has(p)) continue;
    handedOut.add(p);
    return p;
  }
}

function anyFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolvePort(port));
    });
  });
}

/** The repository root, from this file's place in src (test/differential) or in dist/test/differential. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the repository root');
    dir = up;
  }
  return dir;
}

export function setpointMain(): string {
  const main = resolve(repoRoot(), 'dist/src/cli/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
  return main;
}

/** Polls `check` every 50 ms until it returns true; throws `what` on timeout. */
export async function waitUntil(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** GET on a member's client URL (with the client certificate when it serves TLS); undefined when unreachable. */
export async function httpGet(url: string, tls?: ClientTls): Promise<{ status: number; body: string } | undefined> {
  if (!url.startsWith('https:')) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      return { status: res.status, body: await res.text() };
    } catch {
      return undefined;
    }
  }
  const opts = tls ? { ca: readFileSync(tls.caFile), cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) } : {};
  return new Promise((resolveGet) => {
    const req = https.get(url, { ...opts, timeout: 2000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolveGet({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolveGet(undefined));
    });
    req.on('error', () => resolveGet(undefined));
    req.on('timeout', () => req.destroy());
  });
}

async function healthy(clientUrl: string, tls?: ClientTls): Promise<boolean> {
  const r = await httpGet(`${clientUrl}/health`, tls);
  return r !== undefined && r.status === 200 && r.body.includes('"true"');
}

/** Extra node options for Setpoint members, e.g. SETPOINT_MEMBER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" (profiling). */
function memberNodeArgs(): string[] {
  return (process.env.SETPOINT_MEMBER_NODE_ARGS ?? '').split(' ').filter(Boolean);
}

export class ProcessCluster {
  readonly slots: Slot[] = [];

  private constructor(
    readonly flavor: Flavor,
    readonly dir: string,
    private readonly flags: readonly string[],
    readonly tls: ClientTls | undefined,
  ) {}

  /**
   * A free port is only free until someone else binds it (other test files, other processes on the
   * machine): a cluster whose member lost that race is started again on fresh ports.
   */
  static async start(flavor: Flavor, opts: ClusterOptions = {}): Promise<ProcessCluster> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await ProcessCluster.startOnce(flavor, opts);
      } catch (e) {
        if (attempt >= 3 || !/EADDRINUSE|address already in use/.test((e as Error).message)) throw e;
      }
    }
  }

  private static async startOnce(flavor: Flavor, opts: ClusterOptions): Promise<ProcessCluster> {
    hookExit();
    const size = opts.size ?? 3;
    const dir = await mkdtemp(join(opts.baseDir ?? tmpdir(), `setpoint-diff-${flavor}-`));
    const tlsFlags = opts.tls ? ['--cert-file', opts.tls.certFile, '--key-file', opts.tls.keyFile, '--trusted-ca-file', opts.tls.caFile, '--client-cert-auth'] : [];
    const c = new ProcessCluster(flavor, dir, [...tlsFlags, ...(opts.flags ?? [])], opts.tls);
    for (let i = 1; i <= size + (opts.spare ?? 0); i++) {
      const given = opts.ports?.[i - 1];
      const [cp, pp] = given ? [given.client, given.peer] : [await freePort(), await freePort()];
      c.slots.push({
        name: `n${i}`,
        clientUrl: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${cp}`,
        peerUrl: `http://127.0.0.1:${pp}`,
        dataDir: join(dir, `n${i}.data`),
        logFile: join(dir, `n${i}.log`),
        proc: undefined,
        exited: Promise.resolve(),
      });
    }
    const initial = c.slots.slice(0, size);
    const initialCluster = initial.map((s) => `${s.name}=${s.peerUrl}`).join(',');
    try {
      for (const s of initial) c.launch(s, initialCluster, 'new');
      await c.waitHealthy(initial.map((s) => s.name));
    } catch (e) {
      await c.stop();
      throw e;
    }
    return c;
  }

  slot(name: string): Slot {
    const s = this.slots.find((x) => x.name === name);
    if (!s) throw new Error(`no member slot ${name}`);
    return s;
  }

  /** Client URLs of the members that are running. */
  endpoints(): string[] {
    return this.slots.filter((s) => this.running(s.name)).map((s) => s.clientUrl);
  }

  running(name: string): boolean {
    const p = this.slot(name).proc;
    return p !== undefined && p.exitCode === null && p.signalCode === null;
  }

  /** Starts a member in its slot with the given --initial-cluster (e.g. one that `member add` printed). */
  launch(s: Slot, initialCluster: string, state: 'new' | 'existing'): void {
    const args = [
      '--name', s.name,
      '--data-dir', s.dataDir,
      '--listen-client-urls', s.clientUrl,
      '--advertise-client-urls', s.clientUrl,
      '--listen-peer-urls', s.peerUrl,
      '--initial-advertise-peer-urls', s.peerUrl,
      '--initial-cluster', initialCluster,
      '--initial-cluster-state', state,
      '--initial-cluster-token', CLUSTER_TOKEN,
      ...this.flags,
    ];
    const [cmd, argv] = this.flavor === 'etcd' ? ['etcd', args] : [process.execPath, [...MEMBER_NODE_FLAGS, ...memberNodeArgs(), setpointMain(), 'store', ...args]];
    const fd = openSync(s.logFile, 'a');
    const proc = spawn(cmd, argv, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    live.add(proc);
    s.proc = proc;
    s.exited = new Promise((r) => proc.once('exit', () => {
      live.delete(proc);
      r();
    }));
  }

  async waitHealthy(names: readonly string[], timeoutMs = 30_000): Promise<void> {
    await waitUntil(async () => {
      for (const n of names) if (!this.running(n)) throw new Error(`${this.flavor} ${n} exited early:\n${this.logTail(n)}`);
      for (const n of names) if (!(await healthy(this.slot(n).clientUrl, this.tls))) return false;
      return true;
    }, `${this.flavor} members ${names.join(',')} to be healthy`, timeoutMs);
  }

  /** Sends a signal and waits for the process to exit (SIGKILL after 10 s for anything gentler). */
  async kill(name: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const s = this.slot(name);
    if (!this.running(name)) return;
    s.proc?.kill(signal);
    const force = setTimeout(() => s.proc?.kill('SIGKILL'), 10_000);
    await s.exited;
    clearTimeout(force);
  }

  /** Restarts a stopped member on its data dir (flags as at its first start; the data dir wins). */
  async restart(name: string): Promise<void> {
    const s = this.slot(name);
    const initial = this.slots.filter((x) => existsSync(x.dataDir)).map((x) => `${x.name}=${x.peerUrl}`).join(',');
    this.launch(s, initial, 'new');
    await this.waitHealthy([name]);
  }

  logTail(name: string, bytes = 4000): string {
    try {
      const t = readFileSync(this.slot(name).logFile, 'utf8');
      return t.slice(-bytes);
    } catch {
      return '';
    }
  }

  /** Kills every member and removes the temp dir (kept, with its logs, when keep is true). */
  async stop(keep = false): Promise<void> {
    await Promise.all(this.slots.map((s) => this.kill(s.name, process.env.SETPOINT_MEMBER_NODE_ARGS ? 'SIGTERM' : 'SIGKILL')));
    if (!keep) await rm(this.dir, { recursive: true, force: true });
  }
}

/** An etcd and a Setpoint cluster with the same options, started together; neither is left running if the other fails. */
export async function startBoth(opts: ClusterOptions = {}): Promise<{ etcd: ProcessCluster; setpoint: ProcessCluster }> {
  const [e, s] = await Promise.allSettled([ProcessCluster.start('etcd', opts), ProcessCluster.start('setpoint', opts)]);
  if (e.status === 'fulfilled' && s.status === 'fulfilled') return { etcd: e.value, setpoint: s.value };
  await Promise.all([e, s].map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
  throw e.status === 'rejected' ? e.reason : s.status === 'rejected' ? s.reason : new Error('unreachable');
}
