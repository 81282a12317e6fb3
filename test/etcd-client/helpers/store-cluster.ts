// A real store cluster for the client and storage tests, on the process harness (src/harness): etcd 3.4 or
// Setpoint's `setpoint store`, started with the very same etcd flags, on free loopback ports, data in a temp
// dir. Members are addressed by index here (the tests think in "member 0, member 1"); they can be SIGKILLed
// and restarted on their ports. stop() (call it in afterAll/finally) kills them and removes the data.
import { EtcdClient } from '../../../src/etcd-client/etcd-client.js';
import type { TlsFiles } from '../../../src/etcd-client/endpoints.js';
import { StoreCluster } from '../../../src/harness/store-cluster.js';
import { waitFor } from '../../../src/harness/wait.js';

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

export class StoreTestCluster {
  private readonly clients: EtcdClient[] = [];

  private constructor(
    readonly kind: StoreKind,
    private readonly cluster: StoreCluster,
  ) {}

  static async start(kind: StoreKind, opts: ClusterOptions = {}): Promise<StoreTestCluster> {
    const size = opts.size ?? 1;
    const cluster = await StoreCluster.start(
      {
        program: kind,
        size,
        names: Array.from({ length: size }, (_, i) => `m${i}`),
        token: 'apistore',
        heartbeatMs: 50,
        electionMs: 500,
        label: `setpoint-apistore-${kind}-`,
        ...(opts.tls ? { tls: opts.tls } : {}),
        ...(opts.flags ? { flags: opts.flags } : {}),
      },
      'leader',
    );
    return new StoreTestCluster(kind, cluster);
  }

  get dir(): string {
    return this.cluster.dir;
  }

  private name(i: number): string {
    const n = this.cluster.names()[i];
    if (n === undefined) throw new Error(`no member ${i}`);
    return n;
  }

  clientUrl(i: number): string {
    return this.cluster.clientUrl(this.name(i));
  }

  /** Client URLs of every member, running or not. */
  endpoints(): string[] {
    return this.cluster.names().map((n) => this.cluster.clientUrl(n));
  }

  get size(): number {
    return this.cluster.names().length;
  }

  /** A client of this cluster, closed by stop(). */
  client(opts: { endpoints?: readonly string[]; tls?: TlsFiles; callTimeoutMs?: number; trustProgressRequests?: boolean } = {}): EtcdClient {
    const tls = opts.tls ?? this.cluster.tls;
    const c = new EtcdClient({
      endpoints: opts.endpoints ?? this.endpoints(),
      callTimeoutMs: opts.callTimeoutMs ?? 15_000,
      trustProgressRequests: opts.trustProgressRequests ?? false,
      ...(tls ? { tls } : {}),
    });
    this.clients.push(c);
    return c;
  }

  /** Every running member answers Status and names the same leader. */
  async waitReady(timeoutMs = 30_000): Promise<void> {
    await this.cluster.waitUntil(this.cluster.running(), 'leader', timeoutMs);
  }

  async kill(i: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const name = this.name(i);
    if (this.cluster.isRunning(name)) await this.cluster.kill(name, signal);
  }

  async restart(i: number): Promise<void> {
    await this.cluster.restart(this.name(i), { wait: 'serving' });
    await this.waitReady();
  }

  /** The index of the member every running member names as leader. */
  async leader(): Promise<number> {
    const name = await waitFor('a leader', () => this.cluster.leader(), { timeoutMs: 30_000 });
    return this.cluster.names().indexOf(name);
  }

  /** One metric's value from a member's /metrics (a plain-HTTP cluster only). */
  async metric(i: number, name: string): Promise<number> {
    const text = await (await fetch(`${this.clientUrl(i)}/metrics`)).text();
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (!m?.[1]) throw new Error(`${this.kind} member ${i} has no metric ${name}`);
    return Number(m[1]);
  }

  diagnostics(): string {
    return this.cluster.diagnostics(20);
  }

  async stop(): Promise<void> {
    for (const c of this.clients) c.close();
    await this.cluster.destroy();
  }
}
