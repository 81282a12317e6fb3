// A plain grpc-js client for the etcd services, built from our own proto/etcd (the same shapes the server
// decodes), for tests that need the raw calls: statuses, metadata, streams held open or unread.
import { Metadata, credentials, loadPackageDefinition } from '@grpc/grpc-js';
import type { ChannelCredentials, ChannelOptions, Client, ClientDuplexStream, ClientReadableStream, ServiceClientConstructor, ServiceError } from '@grpc/grpc-js';
import { etcdPackageDefinition } from '../../../src/server/v3rpc/etcd-proto.js';

type Service = 'KV' | 'Watch' | 'Lease' | 'Cluster' | 'Maintenance' | 'Auth';

interface Packages {
  readonly etcdserverpb: Record<Service, ServiceClientConstructor>;
  readonly grpc: { readonly health: { readonly v1: { readonly Health: ServiceClientConstructor } } };
}

type UnaryMethod = (req: object, md: Metadata, cb: (err: ServiceError | null, res: unknown) => void) => void;

export class EtcdGrpcClient {
  private readonly clients = new Map<string, Client>();
  private readonly pkgs: Packages;

  constructor(
    private readonly target: string,
    private readonly creds: ChannelCredentials = credentials.createInsecure(),
    private readonly options: ChannelOptions = {},
  ) {
    this.pkgs = loadPackageDefinition(etcdPackageDefinition()) as unknown as Packages;
  }

  client(service: Service | 'Health'): Client {
    let c = this.clients.get(service);
    if (!c) {
      const Ctor = service === 'Health' ? this.pkgs.grpc.health.v1.Health : this.pkgs.etcdserverpb[service];
      c = new Ctor(this.target, this.creds, this.options);
      this.clients.set(service, c);
    }
    return c;
  }

  /** A unary call; resolves with the response or rejects with the ServiceError. */
  call<T = Record<string, unknown>>(service: Service | 'Health', method: string, req: object = {}, md: Metadata = new Metadata()): Promise<T> {
    const c = this.client(service) as unknown as Record<string, UnaryMethod>;
    const fn = c[method];
    if (!fn) throw new Error(`no method ${service}.${method}`);
    return new Promise((resolve, reject) => fn.call(c, req, md, (err, res) => (err ? reject(err) : resolve(res as T))));
  }

  /** A bidirectional stream (Watch, LeaseKeepAlive). */
  bidi(service: 'Watch' | 'Lease', method: string, md: Metadata = new Metadata()): ClientDuplexStream<object, Record<string, unknown>> {
    const c = this.client(service) as unknown as Record<string, (md: Metadata) => ClientDuplexStream<object, Record<string, unknown>>>;
    return (c[method] as (md: Metadata) => ClientDuplexStream<object, Record<string, unknown>>).call(c, md);
  }

  /** A server stream (Snapshot, Health.Watch). */
  serverStream(service: 'Maintenance' | 'Health', method: string, req: object = {}): ClientReadableStream<Record<string, unknown>> {
    const c = this.client(service) as unknown as Record<string, (req: object) => ClientReadableStream<Record<string, unknown>>>;
    return (c[method] as (req: object) => ClientReadableStream<Record<string, unknown>>).call(c, req);
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}

/** Metadata clientv3 attaches to watches and keep-alives (WithRequireLeader). */
export function requireLeader(): Metadata {
  const md = new Metadata();
  md.set('hasleader', 'true');
  return md;
}

export const bytes = (s: string): Buffer => Buffer.from(s, 'latin1');
