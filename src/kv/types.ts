// Request and response shapes of the key-value API, mirroring etcd's protobuf messages field for field
// (camelCase), with keys and values as bytes. The gRPC layer maps to and from these unchanged.

export interface KeyValue {
  readonly key: Uint8Array;
  readonly createRevision: number;
  readonly modRevision: number;
  readonly version: number;
  readonly value: Uint8Array;
  /** Lease id (int64, decimal string to keep 64 bits exact); '0' for none. */
  readonly lease: string;
}

export type SortOrder = 'NONE' | 'ASCEND' | 'DESCEND';
export type SortTarget = 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE';

export interface RangeRequest {
  readonly key: Uint8Array;
  readonly rangeEnd?: Uint8Array;
  readonly limit?: number;
  readonly revision?: number;
  readonly sortOrder?: SortOrder;
  readonly sortTarget?: SortTarget;
  readonly serializable?: boolean;
  readonly keysOnly?: boolean;
  readonly countOnly?: boolean;
  readonly minModRevision?: number;
  readonly maxModRevision?: number;
  readonly minCreateRevision?: number;
  readonly maxCreateRevision?: number;
}

export interface ResponseHeader {
  readonly revision: number;
}

export interface RangeResponse {
  readonly header: ResponseHeader;
  readonly kvs: KeyValue[];
  readonly more: boolean;
  readonly count: number;
}

export interface PutRequest {
  readonly key: Uint8Array;
  readonly value?: Uint8Array;
  readonly lease?: string;
  readonly prevKv?: boolean;
  readonly ignoreValue?: boolean;
  readonly ignoreLease?: boolean;
}

export interface PutResponse {
  readonly header: ResponseHeader;
  readonly prevKv?: KeyValue;
}

export interface DeleteRangeRequest {
  readonly key: Uint8Array;
  readonly rangeEnd?: Uint8Array;
  readonly prevKv?: boolean;
}

export interface DeleteRangeResponse {
  readonly header: ResponseHeader;
  readonly deleted: number;
  readonly prevKvs: KeyValue[];
}

export type CompareResult = 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
export type CompareTarget = 'VERSION' | 'CREATE' | 'MOD' | 'VALUE' | 'LEASE';

export interface Compare {
  readonly result: CompareResult;
  readonly target: CompareTarget;
  readonly key: Uint8Array;
  readonly rangeEnd?: Uint8Array;
  readonly version?: number;
  readonly createRevision?: number;
  readonly modRevision?: number;
  readonly value?: Uint8Array;
  readonly lease?: string;
}

export type RequestOp =
  | { readonly requestRange: RangeRequest }
  | { readonly requestPut: PutRequest }
  | { readonly requestDeleteRange: DeleteRangeRequest }
  | { readonly requestTxn: TxnRequest };

export type ResponseOp =
  | { readonly responseRange: RangeResponse }
  | { readonly responsePut: PutResponse }
  | { readonly responseDeleteRange: DeleteRangeResponse }
  | { readonly responseTxn: TxnResponse };

export interface TxnRequest {
  readonly compare?: readonly Compare[];
  readonly success?: readonly RequestOp[];
  readonly failure?: readonly RequestOp[];
}

export interface TxnResponse {
  readonly header: ResponseHeader;
  readonly succeeded: boolean;
  readonly responses: ResponseOp[];
}

/** An alarm raised in the cluster (etcd's AlarmMember), kept by the store so a snapshot carries it. */
export interface StoredAlarm {
  readonly memberId: string;
  readonly alarm: string;
}

export type EventType = 'PUT' | 'DELETE';

export interface KvEvent {
  readonly type: EventType;
  readonly kv: KeyValue;
  readonly prevKv?: KeyValue;
}
