// The peer protocol as grpc-js sees it: proto/raft/raft.proto loaded once, the Peer service's method
// definitions, the decoded shapes of its messages, and the metadata every call carries.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Metadata } from '@grpc/grpc-js';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { Message, NodeId } from '../../raft/types.js';
import { PeerCodecError } from './codec.js';
import type { DecodedMessage } from './wire.js';
import { decodeMessageBatch, encodeMessageBatch } from './wire.js';

/** Metadata keys (lower case, as HTTP/2 requires). Values are uint64 in decimal. */
export const MD_FROM = 'setpoint-from';
export const MD_TO = 'setpoint-to';
export const MD_CLUSTER_ID = 'setpoint-cluster-id';
/** Trailer naming why a receiver refused a call (a PeerErrorCode). */
export const MD_REFUSAL = 'setpoint-refusal';
/** Trailer naming the EtcdErrorCode of a forwarded call (lease, promotion) that failed on the leader. */
export const MD_ETCD_ERROR = 'setpoint-etcd-error';

/** Largest kv chunk a producer may yield; a chunks message carries one or more up to KV_BATCH_BYTES. */
export const MAX_KV_CHUNK_BYTES = 4 * 1024 * 1024;
export const KV_BATCH_BYTES = 1024 * 1024;
/** Target size of one MessageBatch; a single larger message still goes alone. */
export const MESSAGE_BATCH_BYTES = 1024 * 1024;
/**
 * gRPC message limit on both ends. Raft keeps messages near maxSizePerMsg (1 MiB) but one entry may be a
 * whole 1.5 MiB request, and a batch may hold several; kv messages stay under 4 MiB plus framing.
 */
export const MAX_GRPC_MESSAGE_BYTES = 16 * 1024 * 1024;

// Decoded shapes, as proto-loader yields them with the options below (camelCase fields, 64-bit integers
// as decimal strings, enums as their names, every scalar defaulted, message fields null when absent).

/**
 * A 64-bit integer field: decoded as a decimal string (member ids need all 64 bits, which a number would
 * round); protobufjs encodes a number, a decimal string or a bigint exactly. Read through codec.ts's
 * wireCount and wireNodeId, which check the value.
 */
export type U64 = string | number | bigint;
export type WireMessageType =
  | 'MSG_UNSPECIFIED'
  | 'MSG_HUP'
  | 'MSG_BEAT'
  | 'MSG_CHECK_QUORUM'
  | 'MSG_UNREACHABLE'
  | 'MSG_SNAP_STATUS'
  | 'MSG_PROP'
  | 'MSG_READ_INDEX'
  | 'MSG_READ_INDEX_RESP'
  | 'MSG_TRANSFER_LEADER'
  | 'MSG_APP'
  | 'MSG_APP_RESP'
  | 'MSG_VOTE'
  | 'MSG_VOTE_RESP'
  | 'MSG_PRE_VOTE'
  | 'MSG_PRE_VOTE_RESP'
  | 'MSG_SNAP'
  | 'MSG_HEARTBEAT'
  | 'MSG_HEARTBEAT_RESP'
  | 'MSG_TIMEOUT_NOW';

export interface WireEntry {
  term: U64;
  index: U64;
  type: 'ENTRY_NORMAL' | 'ENTRY_CONF_CHANGE';
  data: Uint8Array;
}

export interface WireSnapshot {
  data: Uint8Array;
  metadata: { confState: { voters: U64[]; learners: U64[] } | null; index: U64; term: U64 } | null;
}

export interface WireMessage {
  type: WireMessageType;
  to: U64;
  from: U64;
  term: U64;
  logTerm: U64;
  index: U64;
  entries: WireEntry[];
  commit: U64;
  snapshot: WireSnapshot | null;
  reject: boolean;
  rejectHint: U64;
  context?: Uint8Array;
}

export interface WireMessageBatch {
  messages: WireMessage[];
}

/**
 * What the Send stream carries, in the core's types (peer/wire.ts encodes and decodes it by hand): the
 * sender gives Messages; the receiver gets each Message, or the PeerCodecError that kept it out.
 */
export interface SendBatch {
  readonly messages: readonly DecodedMessage[];
}

function serializeSendBatch(b: SendBatch): Buffer {
  for (const m of b.messages) if (m instanceof PeerCodecError) throw m;
  return encodeMessageBatch(b.messages as readonly Message[]);
}

function deserializeSendBatch(buf: Buffer): SendBatch {
  return { messages: decodeMessageBatch(buf) };
}

export interface WireSendSummary {
  batches: U64;
  messages: U64;
}

export type WireSnapshotChunk =
  | { part: 'header'; header: WireMessage }
  | { part: 'kv'; kv: { chunks: Uint8Array[] } }
  | { part: 'trailer'; trailer: { chunks: U64; bytes: U64 } };

export interface WireLeaseKeepAliveRequest {
  id: string;
}
export interface WireLeaseKeepAliveResponse {
  ttl: U64;
}
export interface WireLeaseTimeToLiveRequest {
  id: string;
  keys: boolean;
}
export interface WireLeaseTimeToLiveResponse {
  ttl: U64;
  grantedTtl: U64;
  keys: Uint8Array[];
}

export interface WireMemberPromoteRequest {
  id: U64;
}
export interface WireMember {
  id: U64;
  name: string;
  peerUrls: string[];
  clientUrls: string[];
  isLearner: boolean;
}
export interface WireMemberPromoteResponse {
  members: WireMember[];
}

export type Empty = Record<string, never>;

/** The Peer service: one method definition per RPC, typed with the shapes above. */
export interface PeerService {
  readonly send: MethodDefinition<SendBatch, WireSendSummary>;
  /** Send as protobufjs encodes it from raft.proto: what peer/wire.ts is tested against. */
  readonly sendProtobuf: MethodDefinition<WireMessageBatch, WireSendSummary>;
  readonly snapshot: MethodDefinition<WireSnapshotChunk, Empty>;
  readonly leaseKeepAlive: MethodDefinition<WireLeaseKeepAliveRequest, WireLeaseKeepAliveResponse>;
  readonly leaseTimeToLive: MethodDefinition<WireLeaseTimeToLiveRequest, WireLeaseTimeToLiveResponse>;
  readonly memberPromote: MethodDefinition<WireMemberPromoteRequest, WireMemberPromoteResponse>;
  readonly probe: MethodDefinition<Empty, Empty>;
  readonly members: MethodDefinition<Empty, { membership: Uint8Array }>;
  /** The whole definition, for Server.addService. */
  readonly definition: ServiceDefinition;
}

/** Walks up from this module to the repository's proto/ folder: the same from src/ (tsx, vitest) and dist/. */
function findProto(relative: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'proto', relative);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`peer transport: cannot find proto/${relative} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

let cached: PeerService | undefined;

export function peerService(): PeerService {
  if (cached) return cached;
  const pkg = loadSync(findProto('raft/raft.proto'), {
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const definition = pkg['setpoint.raft.Peer'] as ServiceDefinition | undefined;
  if (!definition) throw new Error('peer transport: raft.proto has no service setpoint.raft.Peer');
  const method = <Req, Res>(name: string): MethodDefinition<Req, Res> => {
    const m = definition[name] as MethodDefinition<Req, Res> | undefined;
    if (!m) throw new Error(`peer transport: raft.proto has no method Peer.${name}`);
    return m;
  };
  const sendProtobuf = method<WireMessageBatch, WireSendSummary>('Send');
  const send: MethodDefinition<SendBatch, WireSendSummary> = {
    ...sendProtobuf,
    requestSerialize: serializeSendBatch,
    requestDeserialize: deserializeSendBatch,
  };
  cached = {
    send,
    sendProtobuf,
    snapshot: method('Snapshot'),
    leaseKeepAlive: method('LeaseKeepAlive'),
    leaseTimeToLive: method('LeaseTimeToLive'),
    memberPromote: method('MemberPromote'),
    probe: method('Probe'),
    members: method('Members'),
    definition: { ...definition, Send: send },
  };
  return cached;
}

/** The identity metadata a member puts on every call it makes to peer `to`. */
export function callMetadata(from: NodeId, to: NodeId, clusterId: string): Metadata {
  const md = new Metadata();
  md.set(MD_FROM, String(from));
  md.set(MD_TO, String(to));
  md.set(MD_CLUSTER_ID, clusterId);
  return md;
}
