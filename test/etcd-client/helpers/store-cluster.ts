// A real store cluster for the client and storage tests: etcd 3.4 or Setpoint's `setpoint store`, started
// with the very same etcd flags (only the program differs), on free loopback ports, data in a temp dir.
// Members can be SIGKILLed and restarted on their ports. Whatever starts here is killed when the test file's
// process exits, and stop() (call it in afterAll/finally) also removes the data.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerChild } from '../../../src/harness/children.js';
import { freePort } from '../../../src/harness/free-port.js';
import { setpointMain } from '../../../src/harness/setpoint-main.js';
import { EtcdClient } from '../../../src/etcd-client/etcd-client.js';
import type { TlsFiles } from '../../../src/etcd-client/endpoints.js';

export type StoreKind = 'etcd' | 'setpoint';
export const STORE_KINDS: readonly StoreKind[] = ['etcd', 'setpoint'];

export interface ServerTls {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

export interface ClusterOptions {
  readonly size?: number;
  /** Serve clients over TLS, requiring client certificates signed by the CA. */
  readonly tls?: ServerTls;
  readonly flags?: readonly string[];
}

interface Member {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly log: string;
  proc: ChildProcess | undefined;
  exited: Promise<void> | undefined;
}


export class StoreTestCluster {
  private readonly members: Member[] = [];
  private readonly clients: EtcdClient[] = [];
  private stopped = false;

  private constructor(
    readonly kind: StoreKind,
    readonly dir: string,
    private readonly opts: ClusterOptions,
  ) {}

  static async start(kind: StoreKind, opts: ClusterOptions = {}): Promise<StoreTestCluster> {
    const c = new StoreTestCluster(kind, mkdtempSync(join(tmpdir(), `setpoint-apistore-${kind}-`)), opts);
    try {
      const size = opts.size ?? 1;
      for (let i = 0; i < size; i++) {
        c.members.push({ name: `m${i}`, clientPort: await freePort(), peerPort: await freePort(), log: join(c.dir, `m${i}.log`), proc: undefined, exited: undefined });
      }
      for (let i = 0; i < size; i++) c.spawn(i);
      await c.waitReady();
    } catch (e) {
      console.error(c.diagnostics());
      await c.stop();
      throw e;
    }
    return c;
  }

  private get scheme(): string {
    return this.opts.tls ? 'https' : 'http';
  }

  clientUrl(i: number): string {
    return `${this.scheme}://127.0.0.1:${this.member(i).clientPort}`;
  }

  /** Client URLs of every member, running or not. */
  endpoints(): string[] {
    return this.members.map((_, i) => this.clientUrl(i));
  }

  get size(): number {
    return this.members.length;
  }

  /** A client of this cluster, closed by stop(). */
  client(opts: { endpoints?: readonly string[]; tls?: TlsFiles; callTimeoutMs?: number; trustProgressRequests?: boolean } = {}): EtcdClient {
    const c = new EtcdClient({
      endpoints: opts.endpoints ?? this.endpoints(),
      callTimeoutMs: opts.callTimeoutMs ?? 15_000,
      trustProgressRequests: opts.trustProgressRequests ?? false,
      ...(opts.tls ? { tls: opts.tls } : this.clientTls()),
    });
    this.clients.push(c);
    return c;
  }

  private clientTls(): { tls?: TlsFiles } {
    const t = this.opts.tls;
    return t ? { tls: { caFile: t.caFile, certFile: t.certFile, keyFile: t.keyFile } } : {};
  }

  private member(i: number): Member {
    const m = this.members[i];
    if (!m) throw new Error(`no member ${i}`);
    return m;
  }

  private spawn(i: number): void {
    if (this.stopped) throw new Error('cluster stopped');
    const m = this.member(i);
    const peer = (p: number): string => `http://127.0.0.1:${p}`;
    const initial = this.members.map((x) => `${x.name}=${peer(x.peerPort)}`).join(',');
    const t = this.opts.tls;
    const args = [
      ...['--name', m.name, '--data-dir', join(this.dir, m.name)],
      ...['--listen-client-urls', this.clientUrl(i), '--advertise-client-urls', this.clientUrl(i)],
      ...['--listen-peer-urls', peer(m.peerPort), '--initial-advertise-peer-urls', peer(m.peerPort)],
      ...['--initial-cluster', initial, '--initial-cluster-state', 'new', '--initial-cluster-token', 'apistore'],
      ...['--heartbeat-interval', '50', '--election-timeout', '500'],
      ...(t ? ['--cert-file', t.certFile, '--key-file', t.keyFile, '--trusted-ca-file', t.caFile, '--client-cert-auth'] : []),
      ...(this.opts.flags ?? []),
    ];
    const fd = openSync(m.log, 'a');
    const [cmd, pre] = this.kind === 'etcd' ? ['etcd', []] : [process.execPath, [setpointMain(), 'store']];
    const env = { ...process.env, SETPOINT_LOG_FORMAT: 'json' };
    const proc = spawn(cmd, [...pre, ...args], { env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    registerChild(proc);
    m.proc = proc;
    m.exited = new Promise((resolve) => proc.once('exit', () => resolve()));
  }

  /** Every running member answers Status and names the same leader. */
  async waitReady(timeoutMs = 30_000): Promise<void> {
    const probe = new EtcdClient({ endpoints: this.endpoints(), callTimeoutMs: 2000, ...this.clientTls() });
    try {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const running = this.members.map((m, i) => [m, i] as const).filter(([m]) => m.proc);
        for (const [m] of running) if (m.proc?.exitCode !== null) throw new Error(`${this.kind} ${m.name} exited early`);
        const leaders = await Promise.all(running.map(([, i]) => probe.status(this.clientUrl(i), { timeoutMs: 1000 }).then((s) => s.leader, () => undefined)));
        if (leaders.every((l) => l !== undefined && l !== '0' && l === leaders[0])) return;
        if (Date.now() > deadline) throw new Error(`${this.kind} cluster not ready after ${timeoutMs} ms: leaders ${JSON.stringify(leaders)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      probe.close();
    }
  }

  async kill(i: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const m = this.member(i);
    if (!m.proc) return;
    m.proc.kill(signal);
    await m.exited;
    m.proc = undefined;
  }

  async restart(i: number): Promise<void> {
    if (this.member(i).proc) throw new Error(`member ${i} still runs`);
    this.spawn(i);
    await this.waitReady();
  }

  /** The index of the member every running member names as leader. */
  async leader(): Promise<number> {
    const probe = this.client({ callTimeoutMs: 2000 });
    for (let i = 0; i < this.size; i++) {
      if (!this.member(i).proc) continue;
      const st = await probe.status(this.clientUrl(i)).catch(() => undefined);
      if (st && st.leader === st.memberId) return i;
    }
    throw new Error('no leader found');
  }

  /** One metric's value from a member's /metrics (a plain-HTTP cluster only). */
  async metric(i: number, name: string): Promise<number> {
    const text = await (await fetch(`${this.clientUrl(i)}/metrics`)).text();
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (!m?.[1]) throw new Error(`${this.kind} member ${i} has no metric ${name}`);
    return Number(m[1]);
  }

  diagnostics(): string {
    return this.members.map((m) => `---- ${this.kind} ${m.name} ----\n${existsSync(m.log) ? readFileSync(m.log, 'utf8').split('\n').slice(-20).join('\n') : ''}`).join('\n');
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const c of this.clients) c.close();
    await Promise.all(this.members.map((_, i) => this.kill(i)));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
