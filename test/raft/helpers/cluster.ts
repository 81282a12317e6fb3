// A tiny in-memory cluster for the core's tests: each member is a RawNode over a MemoryStorage plus a toy
// application (the list of applied payloads), and the network is a queue of messages that the test delivers
// explicitly, with cuts between members. It runs the Ready loop exactly as docs/raft-api.md prescribes, and
// checks the contract on the way (commit never regresses, committed entries arrive in order).
import type { ConfChange, ConfState, Entry, Message, NodeId, ReadState, Ready, Snapshot } from '../../../src/raft/types.js';
import { RawNode, type RaftConfig } from '../../../src/raft/raw-node.js';
import { MemoryStorage, bootstrapStorage } from '../../../src/raft/storage.js';
import { SeededRng } from '../../../src/raft/rng.js';
import { RaftError } from '../../../src/raft/errors.js';
import { NONE, compareNodeIds, decodeConfChange } from '../../../src/raft/types.js';

/** The knobs a test may set per member; everything else comes from the cluster defaults. */
export type NodeOptions = Partial<Omit<RaftConfig, 'id' | 'storage' | 'rng' | 'applied'>>;

/** Defaults chosen so that a leader's election-timeout worth of ticks sends only two heartbeat rounds. */
export const DEFAULT_OPTIONS: NodeOptions = { electionTick: 10, heartbeatTick: 5 };

const enc = new TextEncoder();
const dec = new TextDecoder();

export const bytes = (s: string): Uint8Array => enc.encode(s);
export const text = (b: Uint8Array | undefined): string => (b ? dec.decode(b) : '');

/** What the toy application keeps: the payloads of applied normal entries, by index. */
interface AppliedEntry {
  readonly index: number;
  readonly data: string;
}

export class SimNode {
  raw: RawNode;
  /** Applied normal, non-empty payloads: the toy state machine. */
  applied: AppliedEntry[] = [];
  appliedIndex: number;
  /** Every configuration this member has applied, oldest first, so compaction can record the right one. */
  confHistory: Array<{ index: number; confState: ConfState }>;
  readStates: ReadState[] = [];

  constructor(
    readonly id: NodeId,
    readonly storage: MemoryStorage,
    readonly options: NodeOptions,
    private readonly rng: SeededRng,
  ) {
    const snap = storage.snapshot();
    this.appliedIndex = snap.metadata.index;
    this.applied = decodeAppState(snap.data);
    this.confHistory = [{ index: snap.metadata.index, confState: snap.metadata.confState }];
    this.raw = this.build();
  }

  private build(): RawNode {
    const cfg: RaftConfig = {
      electionTick: 10,
      heartbeatTick: 1,
      ...this.options,
      id: this.id,
      storage: this.storage,
      rng: this.rng.fork(),
      applied: this.appliedIndex,
    };
    return new RawNode(cfg);
  }

  /**
   * A crash and restart: whatever the RawNode held in memory is gone; storage survives. The toy
   * application is rebuilt from the snapshot, so committed entries after it are applied again.
   */
  restart(): void {
    const snap = this.storage.snapshot();
    this.appliedIndex = snap.metadata.index;
    this.applied = decodeAppState(snap.data);
    this.confHistory = [{ index: snap.metadata.index, confState: snap.metadata.confState }];
    this.readStates = [];
    this.raw = this.build();
  }

  /** The configuration in force at `index`, as this member applied it. */
  confStateAt(index: number): ConfState {
    let cs = (this.confHistory[0] as { confState: ConfState }).confState;
    for (const h of this.confHistory) if (h.index <= index) cs = h.confState;
    return cs;
  }

  /** The toy application's state at `index` (must be applied), encoded as snapshot data. */
  appStateAt(index: number): Uint8Array {
    if (index > this.appliedIndex) throw new Error(`node ${this.id}: state at ${index} is not applied (${this.appliedIndex})`);
    return enc.encode(JSON.stringify(this.applied.filter((a) => a.index <= index)));
  }

  /** Applied payloads as a list, for asserting on the replicated state machine. */
  appliedData(): string[] {
    return this.applied.map((a) => a.data);
  }
}

function decodeAppState(data: Uint8Array): AppliedEntry[] {
  if (data.length === 0) return [];
  return JSON.parse(dec.decode(data)) as AppliedEntry[];
}

/** What happened while one Ready was handled, for tests and the interaction renderer. */
export interface ReadyEvent {
  readonly ready: Ready;
  /** Conf changes applied from committed entries, with the configuration each produced. */
  readonly confChanges: Array<{ cc: ConfChange; confState: ConfState }>;
}

/** What happened while messages were delivered to one member. */
export interface Delivery {
  readonly message: Message;
  /** Why it was not stepped: the link is cut, or no such member exists. */
  readonly dropped?: string;
  /** A RaftError code the member answered with (any other error propagates). */
  readonly error?: string;
}

export class Cluster {
  readonly nodes = new Map<NodeId, SimNode>();
  /** Messages sent but not yet delivered, in send order. */
  inflight: Message[] = [];
  private readonly cuts = new Set<string>();
  private readonly rng: SeededRng;

  constructor(
    seed = 1,
    readonly defaults: NodeOptions = DEFAULT_OPTIONS,
  ) {
    this.rng = new SeededRng(seed);
  }

  /** Starts members `ids` of a fresh cluster whose initial configuration is voters/learners. */
  static bootstrap(voters: readonly NodeId[], options: NodeOptions = {}, learners: readonly NodeId[] = [], seed = 1): Cluster {
    const c = new Cluster(seed, { ...DEFAULT_OPTIONS, ...options });
    for (const id of [...voters, ...learners]) c.add(id, bootstrapStorage(voters, learners));
    return c;
  }

  /** Adds a member on the given storage (empty storage = a joining member that waits for a snapshot). */
  add(id: NodeId, storage: MemoryStorage = new MemoryStorage(), options: NodeOptions = {}): SimNode {
    if (this.nodes.has(id)) throw new Error(`node ${id} already exists`);
    const n = new SimNode(id, storage, { ...this.defaults, ...options }, this.rng.fork());
    this.nodes.set(id, n);
    return n;
  }

  get(id: NodeId): SimNode {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  raw(id: NodeId): RawNode {
    return this.get(id).raw;
  }

  ids(): NodeId[] {
    return [...this.nodes.keys()].sort(compareNodeIds);
  }

  /** The members that currently believe they lead, lowest id first. */
  leaders(): NodeId[] {
    return this.ids().filter((id) => this.raw(id).status().softState.raftState === 'leader');
  }

  tick(id: NodeId, n = 1): void {
    for (let i = 0; i < n; i++) this.raw(id).tick();
  }

  /** Handles one Ready of `id` the way an application must. Returns undefined if there was none. */
  processReady(id: NodeId): ReadyEvent | undefined {
    const node = this.get(id);
    const raw = node.raw;
    if (!raw.hasReady()) return undefined;
    const rd = raw.ready();
    const before = node.storage.getHardState();
    if (rd.snapshot) this.installSnapshot(node, rd.snapshot);
    node.storage.append(rd.entries);
    if (rd.hardState) {
      if (rd.hardState.commit < before.commit) throw new Error(`node ${id}: commit regressed ${before.commit} -> ${rd.hardState.commit}`);
      if (rd.hardState.term < before.term) throw new Error(`node ${id}: term regressed ${before.term} -> ${rd.hardState.term}`);
      node.storage.setHardState(rd.hardState);
    }
    for (const m of rd.messages) this.inflight.push(m);
    const confChanges: ReadyEvent['confChanges'] = [];
    for (const e of rd.committedEntries) {
      const cc = this.apply(node, e);
      if (cc) confChanges.push(cc);
    }
    for (const r of rd.readStates) node.readStates.push(r);
    raw.advance();
    return { ready: rd, confChanges };
  }

  private installSnapshot(node: SimNode, snap: Snapshot): void {
    node.storage.applySnapshot(snap);
    node.applied = decodeAppState(snap.data);
    node.appliedIndex = snap.metadata.index;
    node.confHistory.push({ index: snap.metadata.index, confState: snap.metadata.confState });
  }

  private apply(node: SimNode, e: Entry): { cc: ConfChange; confState: ConfState } | undefined {
    if (e.index !== node.appliedIndex + 1) {
      throw new Error(`node ${node.id}: applying ${e.index} after ${node.appliedIndex}: committed entries out of order`);
    }
    node.appliedIndex = e.index;
    if (e.type === 'confChange') {
      const cc = decodeConfChange(e.data);
      const confState = node.raw.applyConfChange(cc);
      node.confHistory.push({ index: e.index, confState });
      return { cc, confState };
    }
    if (e.data.length > 0) node.applied.push({ index: e.index, data: dec.decode(e.data) });
    return undefined;
  }

  /** Handles Readies of `id` until it has none; returns them. */
  drain(id: NodeId): ReadyEvent[] {
    const out: ReadyEvent[] = [];
    for (let ev = this.processReady(id); ev; ev = this.processReady(id)) out.push(ev);
    return out;
  }

  isCut(from: NodeId, to: NodeId): boolean {
    return this.cuts.has(`${from}->${to}`);
  }

  /** Takes the queued messages to `to` (optionally only those matching `filter`) and steps them in. */
  deliver(to: NodeId, filter: (m: Message) => boolean = () => true): Delivery[] {
    const take = this.inflight.filter((m) => m.to === to && filter(m));
    this.inflight = this.inflight.filter((m) => !(m.to === to && filter(m)));
    const out: Delivery[] = [];
    for (const m of take) {
      const node = this.nodes.get(to);
      if (!node) out.push({ message: m, dropped: `no node ${to}` });
      else if (this.isCut(m.from, to)) out.push({ message: m, dropped: 'link cut' });
      else {
        const error = stepCatching(node.raw, m);
        out.push(error === undefined ? { message: m } : { message: m, error });
      }
    }
    return out;
  }

  /** Discards the queued messages to `to` that match `filter`; returns them. */
  dropQueued(to: NodeId, filter: (m: Message) => boolean = () => true): Message[] {
    const gone = this.inflight.filter((m) => m.to === to && filter(m));
    this.inflight = this.inflight.filter((m) => !(m.to === to && filter(m)));
    return gone;
  }

  hasMessagesFor(id: NodeId): boolean {
    return this.inflight.some((m) => m.to === id);
  }

  /**
   * Processes Readies and delivers messages among `ids` until nothing moves. `onStep` sees each round's
   * work as it happens, so a renderer can print it in order.
   */
  stabilize(
    ids: readonly NodeId[] = this.ids(),
    onStep?: (e: { kind: 'ready'; id: NodeId; event: ReadyEvent } | { kind: 'deliver'; id: NodeId; deliveries: Delivery[] }) => void,
  ): void {
    for (let round = 0; ; round++) {
      if (round > 10_000) throw new Error('stabilize: no quiescence after 10000 rounds');
      let moved = false;
      for (const id of ids) {
        if (!this.nodes.has(id)) continue;
        for (const event of this.drain(id)) {
          moved = true;
          onStep?.({ kind: 'ready', id, event });
        }
      }
      for (const id of ids) {
        if (!this.nodes.has(id) || !this.hasMessagesFor(id)) continue;
        moved = true;
        const deliveries = this.deliver(id);
        onStep?.({ kind: 'deliver', id, deliveries });
      }
      if (!moved) return;
    }
  }

  /** Cuts both directions between every pair of members in different groups. */
  partition(...groups: ReadonlyArray<readonly NodeId[]>): void {
    for (const [i, a] of groups.entries()) {
      for (const [j, b] of groups.entries()) {
        if (i === j) continue;
        for (const x of a) for (const y of b) this.cuts.add(`${x}->${y}`);
      }
    }
  }

  /** Cuts `id` off from every other member (including members added later, until heal). */
  isolate(id: NodeId): void {
    this.partition([id], this.ids().filter((x) => x !== id));
  }

  /** Cuts one direction of one link. */
  cut(from: NodeId, to: NodeId): void {
    this.cuts.add(`${from}->${to}`);
  }

  heal(): void {
    this.cuts.clear();
  }

  /** Snapshots `id`'s application at `index` (which it must have applied) and compacts its log there. */
  compact(id: NodeId, index: number): Snapshot {
    const node = this.get(id);
    const snap = node.storage.createSnapshot(index, node.confStateAt(index), node.appStateAt(index));
    node.storage.compact(index);
    return snap;
  }

  /** Elects `id`: campaigns and stabilizes the whole cluster. */
  elect(id: NodeId): void {
    this.raw(id).campaign();
    this.stabilize();
  }

  /** Proposes on `id` and stabilizes. */
  proposeAndStabilize(id: NodeId, data: string): void {
    this.raw(id).propose(bytes(data));
    this.stabilize();
  }
}

/** Steps a message, returning the RaftError code if the core refused it (anything else propagates). */
export function stepCatching(raw: RawNode, m: Message): string | undefined {
  try {
    raw.step(m);
    return undefined;
  } catch (e) {
    if (e instanceof RaftError && e.code !== 'RAFT_INVARIANT') return e.code;
    throw e;
  }
}

/**
 * A member's storage holding a given log: the bootstrap snapshot at 1/1, then one entry per element of
 * `terms` from index 2 on (payload = its index), and the hard state given.
 */
export function storageWithLog(voters: readonly NodeId[], terms: readonly number[], hs: { term: number; vote?: NodeId; commit?: number }): MemoryStorage {
  const s = bootstrapStorage(voters);
  s.append(terms.map((term, i) => ({ term, index: i + 2, type: 'normal' as const, data: enc.encode(`e${i + 2}`) })));
  s.setHardState({ term: hs.term, vote: hs.vote ?? NONE, commit: hs.commit ?? 1 });
  return s;
}
