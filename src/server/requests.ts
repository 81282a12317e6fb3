// What goes into the Raft log: every client write and cluster operation is one entry holding one
// internal request, encoded with msgpack. The id ties the applied result back to the waiting caller on
// the member that proposed it.
import { pack, unpack } from 'msgpackr';
import type { DeleteRangeRequest, PutRequest, TxnRequest } from '../kv/types.js';
import type { AlarmType } from './store-api.js';
import type { ClusterMember } from './membership.js';

export type InternalRequest =
  | { readonly t: 'put'; readonly id: string; readonly req: PutRequest }
  | { readonly t: 'deleteRange'; readonly id: string; readonly req: DeleteRangeRequest }
  | { readonly t: 'txn'; readonly id: string; readonly req: TxnRequest }
  | { readonly t: 'compact'; readonly id: string; readonly revision: number }
  | { readonly t: 'leaseGrant'; readonly id: string; readonly lease: string; readonly ttl: number }
  | { readonly t: 'leaseRevoke'; readonly id: string; readonly lease: string }
  | { readonly t: 'alarm'; readonly id: string; readonly action: 'ACTIVATE' | 'DEACTIVATE'; readonly memberId: string; readonly alarm: AlarmType }
  /** A member publishes its name and client URLs once it runs (etcd's publish). */
  | { readonly t: 'memberAttr'; readonly id: string; readonly memberId: string; readonly name: string; readonly clientURLs: readonly string[] }
  | { readonly t: 'memberUpdate'; readonly id: string; readonly memberId: string; readonly peerURLs: readonly string[] };

export function encodeRequest(r: InternalRequest): Uint8Array {
  return pack(r);
}

export function decodeRequest(data: Uint8Array): InternalRequest {
  return unpack(data) as InternalRequest;
}

/** What a membership change carries in its ConfChange context: the member, and the waiting caller. */
export interface ConfChangeContext {
  readonly reqId: string;
  readonly member: ClusterMember;
}

export function encodeConfChangeContext(c: ConfChangeContext): Uint8Array {
  return pack(c);
}

export function decodeConfChangeContext(data: Uint8Array): ConfChangeContext {
  return unpack(data) as ConfChangeContext;
}
