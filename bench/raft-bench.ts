// bench:raft — committed entries per second for an in-memory 3-member cluster driven message by message.
// Each round the leader takes a batch of proposals; Ready batches are persisted to MemoryStorage, messages
// delivered at once. Measures the core's own cost: the store must never be limited by it.
import { RawNode } from '../src/raft/raw-node.js';
import { bootstrapStorage, type MemoryStorage } from '../src/raft/storage.js';
import { SeededRng } from '../src/raft/rng.js';
import type { Message, NodeId } from '../src/raft/types.js';

interface Member {
  readonly node: RawNode;
  readonly storage: MemoryStorage;
  applied: number;
}

function makeCluster(n: number): Map<NodeId, Member> {
  const ids = Array.from({ length: n }, (_, i) => BigInt(i + 1));
  const rng = new SeededRng(7);
  const members = new Map<NodeId, Member>();
  for (const id of ids) {
    const storage = bootstrapStorage(ids);
    const node = new RawNode({ id, electionTick: 10, heartbeatTick: 1, storage, rng: rng.fork(), preVote: true, checkQuorum: true, maxInflightMsgs: 256 });
    members.set(id, { node, storage, applied: 0 });
  }
  return members;
}

/** Drives every member until nothing is left to do. Returns entries applied on the leader. */
function pump(members: Map<NodeId, Member>): void {
  let queue: Message[] = [];
  for (;;) {
    let busy = false;
    for (const m of members.values()) {
      while (m.node.hasReady()) {
        busy = true;
        const rd = m.node.ready();
        if (rd.snapshot) m.storage.applySnapshot(rd.snapshot);
        m.storage.append(rd.entries);
        if (rd.hardState) m.storage.setHardState(rd.hardState);
        for (const msg of rd.messages) queue.push(msg);
        m.applied += rd.committedEntries.length;
        m.node.advance();
      }
    }
    if (queue.length > 0) busy = true;
    const q = queue;
    queue = [];
    for (const msg of q) members.get(msg.to)?.node.step(msg);
    if (!busy) return;
  }
}

function run(nodes: number, batch: number, valueSize: number, total: number): { rate: number; ms: number } {
  const members = makeCluster(nodes);
  const leader = members.get(1n) as Member;
  leader.node.campaign();
  pump(members);
  const payload = new Uint8Array(valueSize).fill(97);
  const start = leader.applied;
  const t0 = process.hrtime.bigint();
  let proposed = 0;
  while (proposed < total) {
    const n = Math.min(batch, total - proposed);
    if (n === 1) leader.node.propose(payload);
    else leader.node.proposeBatch(Array.from({ length: n }, () => payload));
    proposed += n;
    pump(members);
    // Compact now and then, as the server does, so the log does not grow without bound.
    const st = leader.node.status();
    if (st.applied - st.firstIndex > 50_000) {
      for (const m of members.values()) {
        const a = m.node.status().applied;
        m.storage.createSnapshot(a, undefined, new Uint8Array(0));
        m.storage.compact(a - 1000);
      }
    }
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const committed = leader.applied - start;
  if (committed < total) throw new Error(`only ${committed} of ${total} entries committed`);
  return { rate: (committed / ms) * 1000, ms };
}

const rows: string[][] = [];
const cases: [number, number, number][] = [
  [3, 1, 100],
  [3, 64, 100],
  [3, 1024, 100],
  [3, 1024, 1024],
  [5, 1024, 100],
];
const total = Number(process.env.BENCH_ENTRIES ?? 200_000);
run(3, 1024, 100, 20_000); // warm-up
for (const [nodes, batch, size] of cases) {
  const n = batch === 1 ? Math.min(total, 50_000) : total;
  const r = run(nodes, batch, size, n);
  rows.push([String(nodes), String(batch), `${size} B`, String(n), r.ms.toFixed(0), Math.round(r.rate).toLocaleString('en-US'), r.rate >= 100_000 ? 'yes' : 'no']);
}
const header = ['members', 'batch', 'entry', 'entries', 'ms', 'committed entries/s', '>= 100k/s'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (cells: string[]): string => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
console.log(`bench:raft — in-memory cluster, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
