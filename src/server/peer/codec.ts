// Raft messages to and from their wire form (proto/raft/raft.proto). Decoding is where a peer's bytes
// become the core's types, so it checks what the core relies on: a known type, safe integers for terms
// and indexes, uint64 member ids carried whole (bigints).
import type { ConfState, Entry, EntryType, Message, MessageType, NodeId, Snapshot } from '../../raft/types.js';
import { MAX_NODE_ID } from '../../raft/types.js';
import type { U64, WireEntry, WireMember, WireMessage, WireMessageType, WireSnapshot } from './proto.js';
import type { MemberInfo } from '../member/store-api.js';

const TO_WIRE: Readonly<Record<MessageType, WireMessageType>> = {
  hup: 'MSG_HUP',
  beat: 'MSG_BEAT',
  checkQuorum: 'MSG_CHECK_QUORUM',
  unreachable: 'MSG_UNREACHABLE',
  snapStatus: 'MSG_SNAP_STATUS',
  prop: 'MSG_PROP',
  readIndex: 'MSG_READ_INDEX',
  readIndexResp: 'MSG_READ_INDEX_RESP',
  transferLeader: 'MSG_TRANSFER_LEADER',
  app: 'MSG_APP',
  appResp: 'MSG_APP_RESP',
  vote: 'MSG_VOTE',
  voteResp: 'MSG_VOTE_RESP',
  preVote: 'MSG_PRE_VOTE',
  preVoteResp: 'MSG_PRE_VOTE_RESP',
  snap: 'MSG_SNAP',
  heartbeat: 'MSG_HEARTBEAT',
  heartbeatResp: 'MSG_HEARTBEAT_RESP',
  timeoutNow: 'MSG_TIMEOUT_NOW',
};

const FROM_WIRE: ReadonlyMap<string, MessageType> = new Map(
  Object.entries(TO_WIRE).map(([t, w]) => [w, t as MessageType]),
);

export class PeerCodecError extends Error {
  readonly code = 'PEER_BAD_MESSAGE';
  constructor(message: string) {
    super(`peer transport: ${message}`);
    this.name = 'PeerCodecError';
  }
}

/**
 * Decoded bytes are Node Buffers viewing the received gRPC message; hand out plain Uint8Array views of
 * the same memory (no copy), so the core and storage see the type they make themselves, with
 * Uint8Array's slice() that copies (Buffer's does not).
 */
export function plainBytes(b: Uint8Array): Uint8Array {
  return b.constructor === Uint8Array ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** n as the core needs it (an unsigned safe integer), or a PeerCodecError naming the field. */
export function safe(n: number, field: string): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new PeerCodecError(`${field} ${n} is not an unsigned safe integer`);
  return n;
}

/** A decoded 64-bit field that counts (a term, an index, a size): an unsigned safe integer. */
export function wireCount(v: U64, field: string): number {
  return safe(typeof v === 'number' ? v : Number(v), field);
}

/** A decoded int64 field that may be negative (a lease's TTL: -1 for a lease that does not exist): a safe integer. */
export function wireInt(v: U64, field: string): number {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isSafeInteger(n)) throw new PeerCodecError(`${field} ${String(v)} is not a safe integer`);
  return n;
}

/** A decoded 64-bit field that names a member (0 for none): the whole uint64, as a bigint. */
export function wireNodeId(v: U64, field: string): NodeId {
  let id: bigint;
  try {
    id = BigInt(v);
  } catch {
    throw new PeerCodecError(`${field} ${String(v)} is not a uint64`);
  }
  if (id < 0n || id > MAX_NODE_ID) throw new PeerCodecError(`${field} ${String(v)} is not a uint64`);
  return id;
}

function entryToWire(e: Entry): WireEntry {
  return { term: e.term, index: e.index, type: e.type === 'confChange' ? 'ENTRY_CONF_CHANGE' : 'ENTRY_NORMAL', data: e.data };
}

function entryFromWire(w: WireEntry): Entry {
  const type: EntryType = w.type === 'ENTRY_CONF_CHANGE' ? 'confChange' : 'normal';
  return { term: wireCount(w.term, 'entry term'), index: wireCount(w.index, 'entry index'), type, data: plainBytes(w.data) };
}

function snapshotToWire(s: Snapshot): WireSnapshot {
  const { index, term, confState } = s.metadata;
  return { data: s.data, metadata: { index, term, confState: { voters: [...confState.voters], learners: [...confState.learners] } } };
}

function snapshotFromWire(w: WireSnapshot): Snapshot {
  const md = w.metadata;
  if (!md) throw new PeerCodecError('snapshot without metadata');
  const confState: ConfState = {
    voters: (md.confState?.voters ?? []).map((v) => wireNodeId(v, 'voter')),
    learners: (md.confState?.learners ?? []).map((v) => wireNodeId(v, 'learner')),
  };
  return { data: plainBytes(w.data), metadata: { index: wireCount(md.index, 'snapshot index'), term: wireCount(md.term, 'snapshot term'), confState } };
}

export function messageToWire(m: Message): WireMessage {
  const w: WireMessage = {
    type: TO_WIRE[m.type],
    to: m.to,
    from: m.from,
    term: m.term,
    logTerm: m.logTerm,
    index: m.index,
    entries: m.entries.map(entryToWire),
    commit: m.commit,
    snapshot: m.snapshot ? snapshotToWire(m.snapshot) : null,
    reject: m.reject,
    rejectHint: m.rejectHint,
  };
  if (m.context !== undefined) w.context = m.context;
  return w;
}

export function messageFromWire(w: WireMessage): Message {
  const type = FROM_WIRE.get(w.type);
  if (type === undefined) throw new PeerCodecError(`unknown message type ${String(w.type)}`);
  const m: {
    -readonly [K in keyof Message]: Message[K];
  } = {
    type,
    to: wireNodeId(w.to, 'to'),
    from: wireNodeId(w.from, 'from'),
    term: wireCount(w.term, 'term'),
    logTerm: wireCount(w.logTerm, 'logTerm'),
    index: wireCount(w.index, 'index'),
    entries: w.entries.map(entryFromWire),
    commit: wireCount(w.commit, 'commit'),
    reject: w.reject,
    rejectHint: wireCount(w.rejectHint, 'rejectHint'),
  };
  if (w.snapshot) m.snapshot = snapshotFromWire(w.snapshot);
  if (w.context !== undefined && w.context !== null) m.context = plainBytes(w.context);
  return m;
}

/** A member as a forwarded promotion answers with it (the id a decimal uint64, as the store API keeps it). */
export function memberToWire(m: MemberInfo): WireMember {
  return { id: wireNodeId(m.id, 'member id'), name: m.name, peerUrls: [...m.peerURLs], clientUrls: [...m.clientURLs], isLearner: m.isLearner };
}

export function memberFromWire(w: WireMember): MemberInfo {
  return { id: wireNodeId(w.id, 'member id').toString(), name: w.name, peerURLs: w.peerUrls, clientURLs: w.clientUrls, isLearner: w.isLearner };
}

/** Rough encoded size of a message, for batch and queue limits (no need to encode to know). */
export function approxMessageBytes(m: Message): number {
  let n = 64 + (m.context?.length ?? 0);
  for (const e of m.entries) n += e.data.length + 16;
  if (m.snapshot) n += m.snapshot.data.length + 16 + 8 * (m.snapshot.metadata.confState.voters.length + m.snapshot.metadata.confState.learners.length);
  return n;
}
