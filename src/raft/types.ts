// The vocabulary of the consensus core: entries, messages, hard state, snapshots and the Ready batch.
// Everything here is plain data so a test (or the simulation) can build, compare and print it.

/**
 * A member id: an unsigned 64-bit integer, as etcd's (derived from a SHA-1, so most need all 64 bits).
 * 0 means "none" (no leader, no vote). A bigint, so no id loses bits; the core only compares, sorts and
 * keys maps by ids, never does arithmetic on them.
 */
export type NodeId = bigint;
export const NONE: NodeId = 0n;
/** The largest id (2^64 - 1): ids travel as uint64. */
export const MAX_NODE_ID: NodeId = 0xffff_ffff_ffff_ffffn;

/** Whether `v` is an id a member may have: a bigint in [1, 2^64 - 1]. */
export function isNodeId(v: unknown): v is NodeId {
  return typeof v === 'bigint' && v > NONE && v <= MAX_NODE_ID;
}

/** Ascending order of ids, for sort() (bigints cannot be subtracted into a number). */
export function compareNodeIds(a: NodeId, b: NodeId): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type EntryType = 'normal' | 'confChange';

export interface Entry {
  readonly term: number;
  readonly index: number;
  readonly type: EntryType;
  /** For 'normal': application data (empty for the leader's no-op). For 'confChange': an encoded ConfChange. */
  readonly data: Uint8Array;
}

export type ConfChangeType = 'addNode' | 'addLearner' | 'removeNode';

export interface ConfChange {
  readonly type: ConfChangeType;
  readonly nodeId: NodeId;
  /** Opaque to the core: the application keeps member details (names, URLs) here. */
  readonly context?: Uint8Array;
}

export interface ConfState {
  readonly voters: readonly NodeId[];
  readonly learners: readonly NodeId[];
}

export interface HardState {
  readonly term: number;
  readonly vote: NodeId;
  readonly commit: number;
}

export interface SnapshotMetadata {
  readonly index: number;
  readonly term: number;
  readonly confState: ConfState;
}

export interface Snapshot {
  readonly metadata: SnapshotMetadata;
  readonly data: Uint8Array;
}

export type MessageType =
  // local inputs, never sent over the network
  | 'hup' // start an election
  | 'beat' // leader: send heartbeats
  | 'checkQuorum' // leader: verify a quorum was active
  | 'unreachable' // transport: a peer could not be reached
  | 'snapStatus' // transport: a snapshot send finished (reject = failed)
  // proposals and reads, local or forwarded
  | 'prop'
  | 'readIndex'
  | 'readIndexResp'
  | 'transferLeader'
  // network
  | 'app'
  | 'appResp'
  | 'vote'
  | 'voteResp'
  | 'preVote'
  | 'preVoteResp'
  | 'snap'
  | 'heartbeat'
  | 'heartbeatResp'
  | 'timeoutNow';

export interface Message {
  readonly type: MessageType;
  readonly to: NodeId;
  readonly from: NodeId;
  readonly term: number;
  /** app: term of the entry at `index`; vote: candidate's last log term; appResp reject: hint term. */
  readonly logTerm: number;
  /** app: index preceding `entries`; appResp: last index matched (or rejected index); vote: last log index. */
  readonly index: number;
  readonly entries: readonly Entry[];
  readonly commit: number;
  readonly snapshot?: Snapshot;
  readonly reject: boolean;
  readonly rejectHint: number;
  /** heartbeat / readIndex: the read request context that a quorum acknowledgement refers to. */
  readonly context?: Uint8Array;
}

export type StateType = 'follower' | 'candidate' | 'preCandidate' | 'leader';

export interface SoftState {
  readonly lead: NodeId;
  readonly raftState: StateType;
}

/** A linearizable read is safe to serve once the state machine has applied up to `index`. */
export interface ReadState {
  readonly index: number;
  readonly requestCtx: Uint8Array;
}

/**
 * One batch of work for the application. Contract (as etcd-io/raft): persist `hardState`, `entries` and
 * `snapshot` (fsync when `mustSync`), send `messages`, apply `snapshot` then `committedEntries`, then call
 * `advance()`. A leader may send its messages before its own write completes.
 */
export interface Ready {
  readonly softState?: SoftState;
  readonly hardState?: HardState;
  readonly readStates: readonly ReadState[];
  readonly entries: readonly Entry[];
  readonly snapshot?: Snapshot;
  readonly committedEntries: readonly Entry[];
  readonly messages: readonly Message[];
  readonly mustSync: boolean;
}

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0);

export function isEmptyHardState(hs: HardState): boolean {
  return hs.term === 0 && hs.vote === NONE && hs.commit === 0;
}

export function hardStateEqual(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

/** Builds a message with every field defaulted; callers set what matters. */
export function msg(m: Partial<Message> & Pick<Message, 'type'>): Message {
  return {
    to: NONE,
    from: NONE,
    term: 0,
    logTerm: 0,
    index: 0,
    entries: [],
    commit: 0,
    reject: false,
    rejectHint: 0,
    ...m,
  };
}

/** Messages that never leave the node: the core generates or consumes them itself. */
export function isLocalMessage(t: MessageType): boolean {
  return t === 'hup' || t === 'beat' || t === 'unreachable' || t === 'snapStatus' || t === 'checkQuorum';
}

export function isResponseMessage(t: MessageType): boolean {
  return (
    t === 'appResp' ||
    t === 'voteResp' ||
    t === 'heartbeatResp' ||
    t === 'unreachable' ||
    t === 'preVoteResp'
  );
}

export function voteRespType(t: MessageType): MessageType {
  if (t === 'vote') return 'voteResp';
  if (t === 'preVote') return 'preVoteResp';
  throw new Error(`not a vote message: ${t}`);
}

/** Size of an entry's payload, used for flow control (max message size, uncommitted size). */
export function entryPayloadSize(e: Entry): number {
  return e.data.length;
}

/** Approximate wire size of an entry, used for MaxSizePerMsg limits. */
export function entrySize(e: Entry): number {
  return e.data.length + 24;
}

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

function toHex(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

function fromHex(s: string): Uint8Array {
  const out = new Uint8Array(s.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * ConfChanges travel in entry data, so this is an on-disk format (the write-ahead log keeps entries as
 * they are): JSON, readable in traces, `{"type":…,"nodeId":"<decimal uint64>","ctx":"<hex>"}` — the id a
 * string because JSON numbers lose bits past 2^53. Version rule: a key may be added (decoders ignore keys
 * they do not know) without a new storage format version; renaming or retyping a key, or changing what
 * one means, needs a new version (src/storage/records.ts FORMAT_VERSION) and the old form must still
 * decode or the old directory be refused. test/raft/conf-change-format.test.ts holds the frozen samples.
 */
export function encodeConfChange(cc: ConfChange): Uint8Array {
  const ctx = cc.context ? toHex(cc.context) : undefined;
  return textEncoder.encode(JSON.stringify({ type: cc.type, nodeId: cc.nodeId.toString(), ...(ctx !== undefined ? { ctx } : {}) }));
}

export function decodeConfChange(data: Uint8Array): ConfChange {
  const raw = JSON.parse(textDecoder.decode(data)) as { type: ConfChangeType; nodeId: unknown; ctx?: unknown };
  if (raw.type !== 'addNode' && raw.type !== 'addLearner' && raw.type !== 'removeNode') {
    throw new Error(`raft: bad conf change type ${String(raw.type)}`);
  }
  const nodeId = typeof raw.nodeId === 'string' && /^[1-9]\d{0,19}$/.test(raw.nodeId) ? BigInt(raw.nodeId) : NONE;
  if (!isNodeId(nodeId)) throw new Error('raft: bad conf change node id');
  if (raw.ctx !== undefined && (typeof raw.ctx !== 'string' || !/^(?:[0-9a-f]{2})*$/.test(raw.ctx))) throw new Error('raft: bad conf change context');
  return raw.ctx !== undefined ? { type: raw.type, nodeId, context: fromHex(raw.ctx) } : { type: raw.type, nodeId };
}
