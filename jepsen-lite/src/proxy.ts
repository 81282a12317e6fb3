// A per-link TCP proxy in front of a member's peer port. It knows which directed link every byte
// travels on — by construction (one proxy per ordered pair, Setpoint's dial map) or by reading the
// dialing member from its first HTTP/1.1 request (etcd's rafthttp headers) — and applies the Network's
// rule for that link: blackhole (hold the connection open, swallow the bytes), delay with jitter, or
// TCP-like loss (a lost chunk waits for a retransmission timeout, stalling what follows it).
import net from 'node:net';
import type { Network } from './network.js';
import type { SeededRng } from '../../src/raft/rng.js';

export type LinkIdentity =
  | { kind: 'fixed'; from: number; to: number }
  /** `to` is known; the dialer is read from the first request's headers (undefined: not a member). */
  | { kind: 'sniff'; to: number; resolve: (headers: Map<string, string>) => number | undefined };

const RTO_MS = 200;
const MAX_SNIFF = 16 * 1024;

interface Pump {
  from: number;
  to: number;
  dst: net.Socket;
  /** Time at which the last scheduled chunk is released: later chunks never overtake it. */
  releaseAt: number;
  lossStreak: number;
  /** Chunks waiting for their release time, strictly FIFO: a TCP stream never reorders bytes (separate
   * timers per chunk can fire out of order and would corrupt, e.g., etcd's delta-encoded msgappv2). */
  queue: { chunk: Buffer; at: number; src: net.Socket }[];
  timer: NodeJS.Timeout | undefined;
}

interface Conn {
  client: net.Socket;
  upstream: net.Socket;
  from: number | undefined;
  to: number;
  /** Bytes were swallowed: the stream is corrupt, so on heal it is reset (as a TCP timeout would). */
  damaged: boolean;
}

export class LinkProxy {
  private server: net.Server | undefined;
  private readonly conns = new Set<Conn>();
  private readonly onChange = (): void => this.resetHealedDamaged();
  bytesDropped = 0;
  bytesForwarded = 0;

  constructor(
    readonly listenPort: number,
    readonly targetPort: number,
    private readonly identity: LinkIdentity,
    private readonly network: Network,
    private readonly rng: SeededRng,
  ) {}

  async start(): Promise<void> {
    this.network.on('change', this.onChange);
    const server = net.createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.listenPort, '127.0.0.1', () => resolve());
    });
  }

  async stop(): Promise<void> {
    this.network.off('change', this.onChange);
    for (const c of this.conns) {
      c.client.destroy();
      c.upstream.destroy();
    }
    this.conns.clear();
    const s = this.server;
    this.server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** Drops every live connection (used when the target member is replaced). */
  resetAll(): void {
    for (const c of this.conns) {
      c.client.destroy();
      c.upstream.destroy();
    }
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    const id = this.identity;
    const conn: Conn = { client, upstream, from: id.kind === 'fixed' ? id.from : undefined, to: id.kind === 'fixed' ? id.to : id.to, damaged: false };
    this.conns.add(conn);
    const close = (): void => {
      this.conns.delete(conn);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    if (id.kind === 'fixed') {
      this.wire(conn, id.from, []);
      return;
    }
    const buffered: Buffer[] = [];
    let size = 0;
    const sniff = (chunk: Buffer): void => {
      buffered.push(chunk);
      size += chunk.length;
      const all = Buffer.concat(buffered);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0 && size < MAX_SNIFF) return;
      client.off('data', sniff);
      const from = id.resolve(parseHeaders(all.subarray(0, end < 0 ? all.length : end).toString('latin1')));
      this.wire(conn, from, [all]);
    };
    client.on('data', sniff);
  }

  private wire(conn: Conn, from: number | undefined, initial: Buffer[]): void {
    conn.from = from;
    // A connection from something that is not a member (a probe, a version check) is cut only when the
    // member it reaches is cut off from everyone — the most it could know about.
    const fromId = from ?? -1;
    const up: Pump = { from: fromId, to: conn.to, dst: conn.upstream, releaseAt: 0, lossStreak: 0, queue: [], timer: undefined };
    const down: Pump = { from: conn.to, to: fromId, dst: conn.client, releaseAt: 0, lossStreak: 0, queue: [], timer: undefined };
    for (const b of initial) this.forward(conn, up, b, conn.client);
    conn.client.on('data', (b: Buffer) => this.forward(conn, up, b, conn.client));
    conn.upstream.on('data', (b: Buffer) => this.forward(conn, down, b, conn.upstream));
  }

  private isCut(p: Pump): boolean {
    if (p.from >= 0 && p.to >= 0) return this.network.rule(p.from, p.to).cut;
    return false;
  }

  private forward(conn: Conn, p: Pump, chunk: Buffer, src: net.Socket): void {
    if (this.isCut(p)) {
      this.bytesDropped += chunk.length;
      conn.damaged = true;
      return;
    }
    const r = p.from >= 0 && p.to >= 0 ? this.network.rule(p.from, p.to) : undefined;
    let wait = 0;
    if (r && (r.delayMs > 0 || r.jitterMs > 0)) wait += Math.max(0, r.delayMs + (this.rng.float() * 2 - 1) * r.jitterMs);
    if (r && r.loss > 0 && this.rng.float() < r.loss) {
      wait += RTO_MS * 2 ** Math.min(p.lossStreak, 4);
      p.lossStreak++;
    } else {
      p.lossStreak = 0;
    }
    const now = Date.now();
    if (wait === 0 && p.queue.length === 0) {
      this.write(p, chunk, src);
      return;
    }
    p.releaseAt = Math.max(now + wait, p.releaseAt);
    p.queue.push({ chunk, at: p.releaseAt, src });
    this.schedule(conn, p);
  }

  private schedule(conn: Conn, p: Pump): void {
    if (p.timer || p.queue.length === 0) return;
    p.timer = setTimeout(() => {
      p.timer = undefined;
      const now = Date.now();
      while (p.queue.length && p.queue[0]!.at <= now) {
        const { chunk, src } = p.queue.shift()!;
        if (this.isCut(p)) {
          this.bytesDropped += chunk.length;
          conn.damaged = true;
        } else this.write(p, chunk, src);
      }
      this.schedule(conn, p);
    }, Math.max(0, p.queue[0]!.at - Date.now()));
  }

  private write(p: Pump, chunk: Buffer, src: net.Socket): void {
    this.bytesForwarded += chunk.length;
    if (p.dst.destroyed) return;
    if (!p.dst.write(chunk)) {
      src.pause();
      p.dst.once('drain', () => src.resume());
    }
  }

  private resetHealedDamaged(): void {
    for (const c of this.conns) {
      if (!c.damaged || c.from === undefined) continue;
      if (this.network.rule(c.from, c.to).cut || this.network.rule(c.to, c.from).cut) continue;
      c.client.destroy();
      c.upstream.destroy();
      this.conns.delete(c);
    }
  }
}

/** Header names lower-cased; only the first request on a connection is read. */
export function parseHeaders(head: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = head.split('\r\n');
  out.set(':request-line', lines[0] ?? '');
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) out.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return out;
}
