// Errors of the peer transport, each with a stable code. Refusals travel between members as a gRPC
// FAILED_PRECONDITION status whose trailer names the code, so the sender knows why without parsing text.
import { Metadata, status } from '@grpc/grpc-js';
import type { ServiceError, StatusObject } from '@grpc/grpc-js';
import type { NodeId } from '../../raft/types.js';
import { MD_REFUSAL } from './proto.js';

export type PeerRefusalCode =
  | 'PEER_CLUSTER_ID_MISMATCH' // the caller belongs to another cluster
  | 'PEER_MEMBER_REMOVED' // the caller has been removed from this cluster
  | 'PEER_WRONG_RECIPIENT' // the call was meant for another member (a peer URL points at the wrong member)
  | 'PEER_BAD_REQUEST'; // the call lacks or garbles its identity metadata

export type PeerErrorCode =
  | PeerRefusalCode
  | 'PEER_UNREACHABLE' // no answer from the peer (connection down, deadline passed)
  | 'PEER_UNKNOWN' // a call to a member this transport does not know
  | 'PEER_SNAPSHOT_FAILED' // a snapshot stream ended without the receiver staging it
  | 'PEER_CLOSED' // the transport is closed
  | 'PEER_CONFIG'; // bad URLs or TLS settings

// etcd's rafthttp wording where etcd has one, so operators recognise the condition.
const REFUSAL_MESSAGES: Readonly<Record<PeerRefusalCode, string>> = {
  PEER_CLUSTER_ID_MISMATCH: 'cluster ID mismatch',
  PEER_MEMBER_REMOVED: 'the member has been permanently removed from the cluster',
  PEER_WRONG_RECIPIENT: 'to field mismatch',
  PEER_BAD_REQUEST: 'missing or bad peer identity metadata',
};

export class PeerError extends Error {
  readonly code: PeerErrorCode;
  /** The gRPC status, when the error came from a call. */
  readonly grpcCode: number | undefined;

  constructor(code: PeerErrorCode, message: string, grpcCode?: number) {
    super(message);
    this.name = 'PeerError';
    this.code = code;
    this.grpcCode = grpcCode;
  }
}

export function refusalMessage(code: PeerRefusalCode): string {
  return REFUSAL_MESSAGES[code];
}

/** The status a receiver ends a refused call with. */
export function refusalStatus(code: PeerRefusalCode, detail: string): Partial<StatusObject> {
  const metadata = new Metadata();
  metadata.set(MD_REFUSAL, code);
  return { code: status.FAILED_PRECONDITION, details: `${REFUSAL_MESSAGES[code]} (${detail})`, metadata };
}

/** The refusal a failed call carries, if the peer refused it (as opposed to the call failing). */
export function refusalOf(err: Partial<ServiceError>): PeerRefusalCode | undefined {
  if (err.code !== status.FAILED_PRECONDITION || !err.metadata) return undefined;
  const v = err.metadata.get(MD_REFUSAL)[0];
  return typeof v === 'string' && v in REFUSAL_MESSAGES ? (v as PeerRefusalCode) : undefined;
}

/** A failed call as a PeerError: a refusal keeps its code, anything else means the peer is unreachable. */
export function peerErrorOf(err: Partial<ServiceError>, peer: NodeId): PeerError {
  const refusal = refusalOf(err);
  if (refusal) return new PeerError(refusal, `peer ${peer.toString(16)} refused the call: ${err.details ?? REFUSAL_MESSAGES[refusal]}`, err.code);
  return new PeerError('PEER_UNREACHABLE', `peer ${peer.toString(16)} unreachable: ${err.details ?? err.message ?? 'call failed'}`, err.code);
}
