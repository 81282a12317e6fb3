// A TCP proxy that can hold what clients send: while held, bytes from clients stay unread (in the
// kernel's buffers, then the client's), and answers still flow back; release() lets them through in
// order. A process behind it has requests in flight for as long as a test wants — the way to make a
// deposed leader's writes arrive after another has taken over, deterministically.
import net from 'node:net';

export class HoldProxy {
  private server: net.Server | undefined;
  private readonly clients = new Set<net.Socket>();
  private held = false;

  constructor(private readonly targetPort: number) {}

  /** Listens on a free port of 127.0.0.1 and returns it. */
  async start(): Promise<number> {
    const server = net.createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return (server.address() as net.AddressInfo).port;
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    this.clients.add(client);
    if (this.held) client.pause();
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => client.write(d));
    const close = (): void => {
      this.clients.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  }

  hold(): void {
    this.held = true;
    for (const c of this.clients) c.pause();
  }

  release(): void {
    this.held = false;
    for (const c of this.clients) c.resume();
  }

  async stop(): Promise<void> {
    for (const c of this.clients) c.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
