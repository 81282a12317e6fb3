// The shapes the watch layer trades in: what a watcher hands its sink (etcd's mvcc.WatchResponse), and the
// wire-shaped requests and responses of the Watch RPC (etcd's WatchRequest/WatchResponse, camelCase, every
// field present as proto3 decodes it), which the gRPC service maps 1:1.
import type { KvEvent } from '../kv/types.js';

/** WatchCreateRequest.FilterType: NOPUT drops PUT events, NODELETE drops DELETE events. */
export type WatchFilter = 'NOPUT' | 'NODELETE';

/**
 * What a watcher delivers: the events of whole revisions in revision order, an event-less progress
 * notification, or (compactRevision > 0) the notice that the watcher fell below the compacted revision.
 */
export interface WatcherResponse {
  readonly watchId: number;
  /** The store revision the watcher has observed up to (0 on a compaction notice, as in etcd). */
  readonly revision: number;
  readonly events: readonly KvEvent[];
  readonly compactRevision: number;
}

/**
 * The events of one or more whole revisions, with the revision they bring a watcher up to. The store
 * hands the same batch to every watcher that gets exactly these events, so no one may change it.
 */
export interface EventBatch {
  readonly events: readonly KvEvent[];
  readonly revision: number;
}

/**
 * Where a watcher's responses go. `offer` must not block: it returns false when the consumer is behind
 * (its bounded buffer is full), and the watcher is then set aside as a victim and retried later.
 */
export interface WatchSink {
  offer(resp: WatcherResponse): boolean;
  /**
   * Optional: events as offer({ watchId: the watcher's id, revision, events, compactRevision: 0 }) would
   * bring them, in a batch the sink may keep but must not change (it may be shared by many watchers).
   */
  offerBatch?(batch: EventBatch): boolean;
  /** Told each time the watcher joins the synced group (it has been sent everything up to the head). */
  synced?(): void;
}

export interface WatchOptions {
  readonly key: Uint8Array;
  /** As in etcd: absent or empty = the single key; "\0" = every key >= key. */
  readonly rangeEnd?: Uint8Array;
  /** Inclusive; 0 = the next revision. */
  readonly startRevision: number;
  readonly filters?: readonly WatchFilter[];
  readonly prevKv?: boolean;
  /** Kept on the watcher for the stream's periodic progress notifications. */
  readonly progressNotify?: boolean;
  /** Kept on the watcher for the stream's fragmenting of huge responses. */
  readonly fragment?: boolean;
  /** The id put in this watcher's responses. */
  readonly id?: number;
}

// ---- the Watch RPC ----

export interface WatchCreateRequest {
  readonly key?: Uint8Array;
  readonly rangeEnd?: Uint8Array;
  readonly startRevision?: number;
  readonly progressNotify?: boolean;
  readonly filters?: readonly WatchFilter[];
  readonly prevKv?: boolean;
  /** 0 = let the stream pick one (etcd's AutoWatchID). */
  readonly watchId?: number;
  readonly fragment?: boolean;
}

export type WatchRequest =
  | { readonly createRequest: WatchCreateRequest }
  | { readonly cancelRequest: { readonly watchId: number } }
  | { readonly progressRequest: Record<string, never> };

export interface WatchResponse {
  /** The gRPC layer adds cluster_id, member_id and raft_term. */
  readonly header: { readonly revision: number };
  readonly watchId: number;
  readonly created: boolean;
  readonly canceled: boolean;
  readonly compactRevision: number;
  readonly cancelReason: string;
  readonly fragment: boolean;
  readonly events: readonly KvEvent[];
}
