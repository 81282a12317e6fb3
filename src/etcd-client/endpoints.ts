// The members a client may talk to: one gRPC channel per endpoint (its services share it), TLS from the API
// server's --etcd-cafile/--etcd-certfile/--etcd-keyfile, and the endpoint in use. A call or stream that
// fails on the endpoint in use moves it on to the next, so every caller leaves a failed member together.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { serviceConstructors } from './proto.js';
import type { ServiceName } from './proto.js';

export interface TlsFiles {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

export interface EndpointOptions {
  readonly tls?: TlsFiles;
  /** Largest message this client sends (etcd's default request limit is 1.5 MiB). */
  readonly maxSendBytes: number;
  /** Largest message this client accepts. */
  readonly maxReceiveBytes: number;
}

export interface Endpoint {
  readonly url: string;
  readonly index: number;
  readonly services: Readonly<Record<ServiceName, grpc.Client>>;
}

/** "http://127.0.0.1:2379" → "127.0.0.1:2379"; a bare host:port is taken as it is. */
function address(url: string): { target: string; secure: boolean } {
  const m = /^(https?|unixs?):\/\/(.+?)\/?$/.exec(url);
  if (!m) return { target: url, secure: false };
  return { target: m[2] as string, secure: m[1] === 'https' || m[1] === 'unixs' };
}

function credentials(secure: boolean, tls: TlsFiles | undefined): grpc.ChannelCredentials {
  if (!secure && !tls?.caFile && !tls?.certFile) return grpc.credentials.createInsecure();
  const read = (f: string | undefined): Buffer | null => (f ? readFileSync(f) : null);
  return grpc.credentials.createSsl(read(tls?.caFile), read(tls?.keyFile), read(tls?.certFile));
}

export class EndpointPool {
  private readonly endpoints: Endpoint[];
  private currentIndex = 0;
  private closed = false;

  constructor(urls: readonly string[], opts: EndpointOptions) {
    if (urls.length === 0) throw new Error('etcd client: no endpoints given');
    const ctors = serviceConstructors();
    const channelOptions: grpc.ChannelOptions = {
      // A member that died comes back within seconds; the default backoff grows to two minutes.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.min_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
      // Pings find a paused or partitioned member's connection dead; etcd refuses pings under 5 s apart.
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.enable_retries': 0,
      'grpc.max_send_message_length': opts.maxSendBytes,
      'grpc.max_receive_message_length': opts.maxReceiveBytes,
    };
    this.endpoints = urls.map((url, index) => {
      const { target, secure } = address(url);
      const creds = credentials(secure, opts.tls);
      const kv = new ctors.KV(target, creds, channelOptions);
      const shared = { ...channelOptions, channelOverride: kv.getChannel() } as grpc.ChannelOptions;
      const services = {
        KV: kv,
        Watch: new ctors.Watch(target, creds, shared),
        Lease: new ctors.Lease(target, creds, shared),
        Maintenance: new ctors.Maintenance(target, creds, shared),
      };
      return { url, index, services };
    });
  }

  get size(): number {
    return this.endpoints.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  current(): Endpoint {
    return this.endpoints[this.currentIndex] as Endpoint;
  }

  at(index: number): Endpoint {
    return this.endpoints[index % this.endpoints.length] as Endpoint;
  }

  urls(): string[] {
    return this.endpoints.map((e) => e.url);
  }

  /**
   * Leaves `failed` for the next endpoint, unless someone already left it (several calls failing on one
   * member must not skip the healthy ones after it). Returns the endpoint now in use.
   */
  advance(failed: Endpoint): Endpoint {
    if (this.currentIndex === failed.index) this.currentIndex = (failed.index + 1) % this.endpoints.length;
    return this.current();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const e of this.endpoints) for (const s of Object.values(e.services)) s.close();
  }
}
