// The Ready loop: takes the core's Ready batches and, for each, sends what may leave before the write,
// persists, sends the rest, installs a snapshot, applies the committed entries, answers reads, then
// advances. Storage, transport, applying and the turn of the event loop are injected, so the same loop
// runs in a member process and under the deterministic simulation (src/sim/).
import type { Entry, Message, NodeId, Ready, Snapshot, SoftState } from '../../raft/types.js';
import type { PlantedLoopBug } from './planted-bugs.js';
import { NONE } from '../../raft/types.js';

/** The part of RawNode the loop drives. */
export interface ReadyCore {
  hasReady(): boolean;
  ready(): Ready;
  advance(): void;
  /** Heartbeats and their responses at the saved term, taken out of the pending messages (RawNode's). */
  takeHeartbeats?(savedTerm: number): Message[];
}

export interface ReadyLoopHooks {
  /** A new soft state (leader, role), before anything of its Ready is done. */
  onSoftState(ss: SoftState): void;
  /** True while this member leads (after onSoftState of the current Ready). */
  isLeader(): boolean;
  /** Makes the Ready's hard state, entries and snapshot durable (fsync'd when rd.mustSync). */
  save(rd: Ready): Promise<void>;
  send(messages: readonly Message[]): void;
  /** The Ready carried a snapshot from the leader, now persisted: replace the state machine. */
  installSnapshot(snap: Snapshot): Promise<void>;
  /** Applies one committed entry; a promise only when it must be waited for. */
  apply(e: Entry): Promise<void> | undefined;
  onReadState(rs: Ready['readStates'][number]): void;
  /** After advance: release reads and waits on the applied index, take a snapshot when due. */
  afterAdvance(): Promise<void>;
  /** Yields one turn of the event loop, so that messages already handed to the transport reach the wire. */
  nextTurn(): Promise<void>;
  /** TEST ONLY: a delay before a leader applies. */
  beforeLeaderApply?(): Promise<void>;
  stopped(): boolean;
  fatal(e: unknown): void;
  /** TEST ONLY (planted-bugs.ts): 'ack-before-durable' sends append responses before the write. */
  readonly plantedBug?: PlantedLoopBug;
}

export class ReadyLoop {
  private processing = false;
  /** True while a snapshot is installed or committed entries are applied (which big ones do over many turns). */
  private applying = false;
  private again = false;
  private savedTerm = 0;
  private savedVote: NodeId = NONE;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly core: ReadyCore,
    private readonly hooks: ReadyLoopHooks,
  ) {}

  /** Processes Ready batches until there are none; calls while running make it go round again. */
  kick(): void {
    if (this.hooks.stopped()) return;
    if (this.processing) {
      this.again = true;
      // An apply in slices lets ticks and peer messages in between: the heartbeats they make (a leader's)
      // and answer (a follower's) go now, not after the apply, or followers would campaign and the
      // leader's check-quorum would count its own stall against them.
      if (this.applying) this.sendHeartbeats();
      return;
    }
    this.processing = true;
    void this.drain()
      .catch((e: unknown) => this.hooks.fatal(e))
      .finally(() => {
        this.processing = false;
        for (const w of this.idleWaiters.splice(0)) w();
      });
  }

  /** Resolves once no Ready is being handled. */
  idle(): Promise<void> {
    if (!this.processing) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      while (!this.hooks.stopped() && this.core.hasReady()) await this.handle(this.core.ready());
    } while (this.again && !this.hooks.stopped());
  }

  private async handle(rd: Ready): Promise<void> {
    const h = this.hooks;
    if (rd.softState) h.onSoftState(rd.softState);
    // A leader may send appends and heartbeats while its own write is in flight (thesis §10.2.1); votes
    // and anything else wait until the term and vote they rely on are on disk.
    const termOrVoteChanged = rd.hardState !== undefined && (rd.hardState.term !== this.savedTerm || rd.hardState.vote !== this.savedVote);
    const leading = h.isLeader() && !termOrVoteChanged;
    const ackEarly = h.plantedBug === 'ack-before-durable' && !termOrVoteChanged;
    const early = leading || ackEarly ? rd.messages.filter((m) => (leading && (m.type === 'app' || m.type === 'heartbeat' || m.type === 'readIndexResp')) || (ackEarly && m.type === 'appResp')) : [];
    if (early.length > 0) {
      h.send(early);
      // Let the appends reach the wire before our own write starts: HTTP/2 writes go out in Node's
      // native immediates, which run before this one, and a follower's write is on the commit path
      // while ours, done in parallel, usually is not. Starting the save first delayed them by its
      // synchronous part (encoding, the write's submission).
      await h.nextTurn();
    }
    await h.save(rd);
    if (rd.hardState) {
      this.savedTerm = rd.hardState.term;
      this.savedVote = rd.hardState.vote;
    }
    const rest = early.length > 0 ? rd.messages.filter((m) => !early.includes(m)) : rd.messages;
    if (rest.length > 0) h.send(rest);
    if (rd.snapshot) {
      // Installing half a million keys takes seconds (in slices): heartbeats go on meanwhile, as in apply.
      this.applying = true;
      try {
        await h.installSnapshot(rd.snapshot);
      } finally {
        this.applying = false;
      }
    }
    // Messages leave through HTTP/2 writes that Node makes on a later turn of the event loop. Let them go
    // before applying: an apply can hold the loop for seconds (a delete of 150,000 keys), and the followers
    // must learn the new commit index — and get their heartbeats — now, not after it.
    if (rd.messages.length > 0 && rd.committedEntries.length > 0) await h.nextTurn();
    if (h.beforeLeaderApply && rd.committedEntries.length > 0 && h.isLeader()) await h.beforeLeaderApply();
    await this.applyCommitted(rd);
    for (const rs of rd.readStates) h.onReadState(rs);
    this.core.advance();
    await h.afterAdvance();
  }

  private async applyCommitted(rd: Ready): Promise<void> {
    this.applying = true;
    try {
      for (const e of rd.committedEntries) {
        const waiting = this.hooks.apply(e);
        if (waiting) await waiting;
      }
    } finally {
      this.applying = false;
    }
  }

  private sendHeartbeats(): void {
    const beats = this.core.takeHeartbeats?.(this.savedTerm);
    if (beats && beats.length > 0) this.hooks.send(beats);
  }
}
