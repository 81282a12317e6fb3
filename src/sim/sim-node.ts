// One simulated member: its stable storage and applied state, which survive a crash, and the volatile
// RawNode with whatever it had not yet persisted, which does not.
import type { Rng } from '../raft/rng.js';
import { RawNode, type RaftConfig } from '../raft/raw-node.js';
import type { MemoryStorage } from '../raft/storage.js';
import type { ConfState, NodeId, Snapshot, StateType } from '../raft/types.js';
import { NONE } from '../raft/types.js';
import type { ReadOp } from './client-ops.js';
import { KvMachine } from './kv-machine.js';
import type { MemberView } from './liveness.js';

/** up: running; down: crashed, will restart; stopped: removed from the cluster, gone for good. */
export type NodeStatus = 'up' | 'down' | 'stopped';

/** The RawNode settings the cluster picks once for every member. */
export type NodeRaftOptions = Omit<RaftConfig, 'id' | 'storage' | 'rng' | 'applied'>;

export class SimNode {
  readonly id: NodeId;
  /** The node's disk for Raft: log, hard state, snapshot. */
  readonly storage: MemoryStorage;
  // The application's disk: applied index, KV state and the configuration as of `applied`. Each apply
  // is durable on its own, as a state machine that writes its applied index with its data would be.
  applied: number;
  kv: KvMachine;
  confState: ConfState;

  // Everything below is lost in a crash.
  raw: RawNode | undefined;
  status: NodeStatus = 'down';
  incarnation = 0;
  downSince = 0;
  lead: NodeId = NONE;
  raftState: StateType = 'follower';
  /** Crash in the middle of the next Ready, before its hard state is written. */
  tornNext = false;
  /** Set when the node applied its own removal: it stops once the current Ready is done. */
  stopAfterReady = false;
  /** ReadIndex requests waiting for their ReadState, then for applied >= its index. */
  readonly reads = new Map<number, ReadOp>();

  constructor(id: NodeId, storage: MemoryStorage) {
    this.id = id;
    this.storage = storage;
    const snap = storage.snapshot();
    this.applied = snap.metadata.index;
    this.kv = KvMachine.decode(snap.data);
    this.confState = snap.metadata.confState;
  }

  get term(): number {
    return this.storage.getHardState().term;
  }

  start(opts: NodeRaftOptions, rng: Rng): RawNode {
    const raw = new RawNode({ ...opts, id: this.id, storage: this.storage, rng, applied: this.applied });
    this.raw = raw;
    this.status = 'up';
    this.incarnation++;
    return raw;
  }

  /** Replaces the applied state with a snapshot's (after storage has taken the snapshot). */
  restore(snap: Snapshot): void {
    this.applied = snap.metadata.index;
    this.kv = KvMachine.decode(snap.data);
    this.confState = snap.metadata.confState;
  }

  crash(tick: number): void {
    this.raw = undefined;
    this.status = 'down';
    this.downSince = tick;
    this.lead = NONE;
    this.raftState = 'follower';
    this.tornNext = false;
    this.stopAfterReady = false;
    this.reads.clear();
  }

  stop(tick: number): void {
    this.crash(tick);
    this.status = 'stopped';
  }
}

/** A node as the liveness checks read it. */
export function nodeView(n: SimNode): MemberView {
  const hs = n.storage.getHardState();
  return {
    id: n.id,
    up: n.status === 'up',
    commit: hs.commit,
    lastIndex: n.storage.lastIndex(),
    applied: n.applied,
    digest: () => n.kv.digest(),
    describe: () => `node ${n.id} ${n.status} ${n.raftState} term=${hs.term} commit=${hs.commit} applied=${n.applied} last=${n.storage.lastIndex()}`,
  };
}
