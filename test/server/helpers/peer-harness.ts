// Real peer transports on real loopback ports for tests: a member stand-in that records what arrives
// and what the transport reports, a condition waiter, and a registry that closes everything a test
// started, also when it fails.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from 'pino';
import type { Message, NodeId } from '../../../src/raft/types.js';
import { msg } from '../../../src/raft/types.js';
import { waitFor as harnessWaitFor } from '../../../src/harness/wait.js';
import { createPeerTransport } from '../../../src/server/peer/transport.js';
import type { PeerTransportHandle, PeerTransportOptions } from '../../../src/server/peer/transport.js';
import type { MemberInfo } from '../../../src/server/member/store-api.js';
import type { InboundHandlers, OutboundHooks } from '../../../src/server/member/transport-api.js';

export const CLUSTER = '7331';

/** Log lines a transport wrote, parsed; level PEER_LOG_LEVEL (default 'warn') so failures show context. */
export class LogCapture {
  readonly lines: Record<string, unknown>[] = [];
  readonly logger: Logger;
  constructor() {
    const sink = new Writable({
      write: (chunk: Buffer, _enc, cb) => {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') this.lines.push(JSON.parse(line) as Record<string, unknown>);
        cb();
      },
    });
    this.logger = pino({ level: process.env.PEER_LOG_LEVEL ?? 'warn' }, sink);
  }

  count(text: string): number {
    return this.lines.filter((l) => typeof l.msg === 'string' && l.msg.includes(text)).length;
  }
}

/** A member stand-in: records messages, reports and snapshots; handlers can be swapped per test. */
export class FakeMember implements InboundHandlers, OutboundHooks {
  readonly received: Message[] = [];
  readonly unreachable: NodeId[] = [];
  readonly snapshotReports: { id: NodeId; ok: boolean }[] = [];
  kvSource: () => AsyncIterable<Uint8Array> = async function* () {};
  snapshotReceiver: (m: Message, kv: AsyncIterable<Uint8Array>) => Promise<void> = async (_m, kv) => {
    for await (const _ of kv) {
      // consume
    }
  };
  keepAlive: (id: string) => Promise<{ ttl: number }> = () => Promise.resolve({ ttl: 0 });
  timeToLive: (id: string, keys: boolean) => Promise<{ ttl: number; grantedTtl: number; keys: Uint8Array[] }> = () =>
    Promise.resolve({ ttl: 0, grantedTtl: 0, keys: [] });
  promote: (id: NodeId) => Promise<{ members: MemberInfo[] }> = () => Promise.resolve({ members: [] });

  onMessage(m: Message): void {
    this.received.push(m);
  }
  receiveSnapshot(m: Message, kv: AsyncIterable<Uint8Array>): Promise<void> {
    return this.snapshotReceiver(m, kv);
  }
  leaseKeepAlive(id: string): Promise<{ ttl: number }> {
    return this.keepAlive(id);
  }
  leaseTimeToLive(id: string, keys: boolean): Promise<{ ttl: number; grantedTtl: number; keys: Uint8Array[] }> {
    return this.timeToLive(id, keys);
  }
  memberPromote(id: NodeId): Promise<{ members: MemberInfo[] }> {
    return this.promote(id);
  }
  reportUnreachable(id: NodeId): void {
    this.unreachable.push(id);
  }
  reportSnapshot(id: NodeId, ok: boolean): void {
    this.snapshotReports.push({ id, ok });
  }
  kvSnapshot(): AsyncIterable<Uint8Array> {
    return this.kvSource();
  }

  receivedFrom(from: NodeId): Message[] {
    return this.received.filter((m) => m.from === from);
  }
}

export interface Node {
  readonly id: NodeId;
  readonly member: FakeMember;
  readonly logs: LogCapture;
  transport: PeerTransportHandle;
  /** The first bound URL. */
  readonly url: string;
}

type NodeOptions = Partial<Omit<PeerTransportOptions, 'memberId' | 'handlers' | 'hooks' | 'logger'>>;

/** Starts transports and closes every one of them in `closeAll` (call it from afterEach). */
export class Harness {
  private readonly open: { close(): Promise<void> }[] = [];
  /** Options every node gets unless a test gives its own. */
  defaults: NodeOptions = {};

  async node(id: NodeId, opts: NodeOptions = {}, member = new FakeMember(), logs = new LogCapture()): Promise<Node> {
    const transport = await createPeerTransport({
      memberId: id,
      clusterId: CLUSTER,
      listenUrls: ['http://127.0.0.1:0'],
      electionTimeoutMs: 1000,
      ...this.defaults,
      ...opts,
      handlers: member,
      hooks: member,
      logger: logs.logger,
    });
    this.track(transport);
    const url = transport.addresses[0];
    if (!url) throw new Error('transport bound no address');
    return { id, member, logs, transport, url };
  }

  /** Two members that know each other. */
  async pair(opts: NodeOptions = {}): Promise<[Node, Node]> {
    const a = await this.node(1n, opts);
    const b = await this.node(2n, opts);
    a.transport.addPeer(2n, [b.url]);
    b.transport.addPeer(1n, [a.url]);
    return [a, b];
  }

  track<T extends { close(): Promise<void> }>(x: T): T {
    this.open.push(x);
    return x;
  }

  async closeAll(): Promise<void> {
    const all = this.open.splice(0).reverse();
    await Promise.allSettled(all.map((x) => x.close()));
  }
}

/** Polls `cond` until it holds; fails with `what` after `timeoutMs` (generous: CI machines are slow). */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  await harnessWaitFor(what, cond, { timeoutMs, intervalMs: 5 });
}

/** An append message carrying `n` entries of `size` bytes, tagged with `seq` in its index. */
export function app(from: NodeId, to: NodeId, seq: number, size = 16): Message {
  const data = new Uint8Array(size).fill(seq % 251);
  return msg({ type: 'app', from, to, term: 1, index: seq, logTerm: 1, commit: seq, entries: [{ term: 1, index: seq + 1, type: 'normal', data }] });
}

export function heartbeat(from: NodeId, to: NodeId, seq: number): Message {
  return msg({ type: 'heartbeat', from, to, term: 1, commit: seq });
}
