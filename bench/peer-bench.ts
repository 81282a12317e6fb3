// bench:peer — Raft messages per second and MB/s between two peer transports on loopback, for 100 B and
// 4 KiB entries, one or many entries per append message; plus one large snapshot stream. The sender
// keeps a window of messages in flight, as the core's inflight limit does, so nothing is dropped and the
// figure is the transport's sustained rate (encode, gRPC, HTTP/2, decode), not a burst into a queue.
import { pino } from 'pino';
import type { Message } from '../src/raft/types.js';
import { msg } from '../src/raft/types.js';
import { createPeerTransport } from '../src/server/peer/transport.js';
import type { PeerTransportHandle } from '../src/server/peer/transport.js';
import type { InboundHandlers, OutboundHooks } from '../src/server/member/transport-api.js';

const logger = pino({ level: 'silent' });

interface Sink extends InboundHandlers, OutboundHooks {
  messages: number;
  entries: number;
  dropped: number;
  snapshotDone: ((ok: boolean) => void) | undefined;
  kvBytes: number;
}

function sink(): Sink {
  const s: Sink = {
    messages: 0,
    entries: 0,
    dropped: 0,
    snapshotDone: undefined,
    kvBytes: 0,
    onMessage(m) {
      s.messages++;
      s.entries += m.entries.length;
    },
    async receiveSnapshot(_m, kv) {
      for await (const c of kv) s.kvBytes += c.length;
    },
    leaseKeepAlive: () => Promise.resolve({ ttl: 1 }),
    leaseTimeToLive: () => Promise.resolve({ ttl: 1, grantedTtl: 1, keys: [] }),
    reportUnreachable() {
      s.dropped++;
    },
    reportSnapshot(_id, ok) {
      s.snapshotDone?.(ok);
    },
    kvSnapshot: () => (async function* () {})(),
  };
  return s;
}

async function pair(): Promise<{ a: PeerTransportHandle; b: PeerTransportHandle; sa: Sink; sb: Sink }> {
  const sa = sink();
  const sb = sink();
  const common = { clusterId: '1', listenUrls: ['http://127.0.0.1:0'], logger, electionTimeoutMs: 1000 };
  const a = await createPeerTransport({ ...common, memberId: 1n, handlers: sa, hooks: sa });
  const b = await createPeerTransport({ ...common, memberId: 2n, handlers: sb, hooks: sb });
  a.addPeer(2n, b.addresses);
  b.addPeer(1n, a.addresses);
  while (!a.isActive(2n)) await new Promise((r) => setTimeout(r, 5));
  return { a, b, sa, sb };
}

interface Row {
  entry: string;
  perMsg: number;
  msgsPerSec: number;
  entriesPerSec: number;
  mbPerSec: number;
  msgsPerWrite: number;
}

async function messages(entrySize: number, perMsg: number, seconds: number): Promise<Row> {
  const { a, b, sb, sa } = await pair();
  try {
    const data = new Uint8Array(entrySize).fill(7);
    const entries = Array.from({ length: perMsg }, (_, i) => ({ term: 1, index: i + 1, type: 'normal' as const, data }));
    // Raft's inflight window, capped in bytes so large messages stay under the transport's queue bound.
    const window = Math.max(1, Math.min(512, Math.floor((16 * 1024 * 1024) / (perMsg * (entrySize + 16)))));
    let sent = 0;
    const t0 = performance.now();
    const deadline = t0 + seconds * 1000;
    while (performance.now() < deadline) {
      const room = window - (sent - sb.messages);
      if (room > 0) {
        const batch: Message[] = [];
        for (let i = 0; i < room; i++) batch.push(msg({ type: 'app', from: 1n, to: 2n, term: 1, index: sent + i, entries }));
        a.send(batch);
        sent += room;
      }
      await new Promise((r) => setImmediate(r));
    }
    while (sb.messages < sent && sa.dropped === 0) await new Promise((r) => setImmediate(r));
    const secs = (performance.now() - t0) / 1000;
    if (sa.dropped > 0) throw new Error(`the transport dropped messages (${sa.dropped} reports): ${JSON.stringify(a.stats().outbound.get(2n))}`);
    const writes = a.stats().outbound.get(2n)?.batches ?? 1;
    return {
      entry: entrySize >= 1024 ? `${entrySize / 1024} KiB` : `${entrySize} B`,
      perMsg,
      msgsPerSec: sb.messages / secs,
      entriesPerSec: sb.entries / secs,
      mbPerSec: (sb.entries * entrySize) / secs / 1e6,
      msgsPerWrite: sb.messages / writes,
    };
  } finally {
    await a.close();
    await b.close();
  }
}

async function snapshot(totalMiB: number): Promise<number> {
  const { a, b, sa, sb } = await pair();
  try {
    const chunk = new Uint8Array(256 * 1024).fill(3);
    sa.kvSnapshot = () =>
      (async function* () {
        for (let i = 0; i < (totalMiB * 4); i++) yield chunk;
      })();
    const done = new Promise<boolean>((resolve) => (sa.snapshotDone = resolve));
    const t0 = performance.now();
    a.send([msg({ type: 'snap', from: 1n, to: 2n, term: 1, snapshot: { data: new Uint8Array(0), metadata: { index: 1, term: 1, confState: { voters: [1n, 2n], learners: [] } } } })]);
    if (!(await done)) throw new Error('snapshot failed');
    const secs = (performance.now() - t0) / 1000;
    return sb.kvBytes / secs / 1e6;
  } finally {
    await a.close();
    await b.close();
  }
}

const seconds = Number(process.env.PEER_BENCH_SECONDS ?? 3);
const rows: Row[] = [];
for (const size of [100, 4096]) for (const perMsg of [1, 64]) rows.push(await messages(size, perMsg, seconds));

const pad = (s: string, n: number): string => s.padStart(n);
console.log(`bench:peer — two transports on loopback, ${seconds} s per row, up to 512 messages (16 MiB) in flight`);
console.log(`${pad('entry', 7)} ${pad('entries/msg', 12)} ${pad('messages/s', 12)} ${pad('entries/s', 12)} ${pad('MB/s', 8)} ${pad('msgs/write', 11)}`);
for (const r of rows) {
  console.log(
    `${pad(r.entry, 7)} ${pad(String(r.perMsg), 12)} ${pad(Math.round(r.msgsPerSec).toLocaleString('en-US'), 12)} ${pad(Math.round(r.entriesPerSec).toLocaleString('en-US'), 12)} ${pad(r.mbPerSec.toFixed(1), 8)} ${pad(r.msgsPerWrite.toFixed(1), 11)}`,
  );
}
const snapMiB = 256;
console.log(`snapshot: ${snapMiB} MiB of kv chunks at ${(await snapshot(snapMiB)).toFixed(0)} MB/s`);
