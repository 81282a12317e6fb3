// A TCP proxy on loopback that can turn into a blackhole: connections stay open, bytes in both
// directions are read and thrown away — a partition as a sender sees it, with no reset and no error.
// Connections opened while blackholed stay blackholed (their first bytes are lost, so they could never
// carry a protocol again); those opened after `forward()` are forwarded.
import { createServer, connect } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

export class BlackholeProxy {
  private blackholed = false;
  private readonly sockets = new Set<Socket>();
  private readonly pairs: { client: Socket; upstream: Socket; cut: boolean }[] = [];
  /** Bytes thrown away while blackholed. */
  dropped = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number, host = '127.0.0.1'): Promise<BlackholeProxy> {
    const holder: { proxy?: BlackholeProxy } = {};
    const server = createServer((client) => holder.proxy?.accept(client, targetPort, host));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    holder.proxy = new BlackholeProxy(server, (server.address() as AddressInfo).port);
    return holder.proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** From now on, every open connection silently loses everything written to it. */
  blackhole(): void {
    this.blackholed = true;
    for (const pair of this.pairs) {
      pair.cut = true;
      pair.client.unpipe(pair.upstream);
      pair.upstream.unpipe(pair.client);
      this.discard(pair.client);
      this.discard(pair.upstream);
    }
  }

  /** New connections are forwarded again. */
  forward(): void {
    this.blackholed = false;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, targetPort: number, host: string): void {
    this.track(client);
    if (this.blackholed) {
      this.discard(client);
      return;
    }
    const upstream = connect(targetPort, host);
    this.track(upstream);
    const pair = { client, upstream, cut: false };
    this.pairs.push(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    // A close travels through the proxy, as through a network, unless the pair is cut: a partition
    // carries no FIN or RST either, so each end must find out for itself.
    const closeOther = (other: Socket) => () => {
      if (!pair.cut) other.destroy();
    };
    client.on('close', closeOther(upstream));
    upstream.on('close', closeOther(client));
  }

  private discard(s: Socket): void {
    s.removeAllListeners('data');
    s.on('data', (b: Buffer) => {
      this.dropped += b.length;
    });
    s.resume();
  }

  private track(s: Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => {});
  }
}
