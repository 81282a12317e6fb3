// The seam between the API server's registry (one generic store for every kind) and where objects live:
// Kubernetes' storage.Interface, in TypeScript. Two implementations stand behind it — the etcd-backed store
// (every write one etcd v3 Txn: compare mod_revision, put) and the watch cache in front of it (lists and
// watches served from memory, writes passed through) — and the registry cannot tell them apart.
//
// Objects are plain decoded JSON (what the API carries); the storage sets `metadata.resourceVersion` to the
// object's etcd mod_revision on the way out and never stores it. Keys are whole etcd keys under the API
// server's --etcd-prefix, laid out as Kubernetes lays them out: `<prefix>/<resource>/<namespace>/<name>` for
// namespaced kinds, `<prefix>/<resource>/<name>` for cluster-scoped ones.
//
// Objects the storage returns are read-only: the watch cache hands the same (frozen) object to every reader,
// so a caller that wants to change one copies it first. Only tryUpdate's argument is the caller's to change.

/** A decoded API object. Only metadata is known to the storage. */
export interface StoredObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** Which object a write may touch: Kubernetes' DeleteOptions/UpdateOptions preconditions. */
export interface Preconditions {
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/**
 * Another key whose mod_revision must still be `modRevision` when the write commits, checked in the same
 * Txn. The fencing of leader-elected writers uses it: the API server reads the Lease the caller's token
 * names, checks holder and transitions, and guards the write with the Lease's mod_revision, so no
 * interleaving lets a deposed leader's write land.
 */
export interface Guard {
  readonly key: string;
  readonly modRevision: number;
  /**
   * When the key moved on, the guard checked again against what it holds now (throwing if the write must
   * not land): a Lease renewed between the check and the Txn still names the same holder and transition.
   */
  readonly refresh?: () => Promise<Guard>;
}

/** A key written in the same Txn as the object (its bounded history record, for `setpoint why`). */
export interface Companion {
  readonly key: string;
  /** The bytes to put, or null to delete the key. */
  readonly value: Uint8Array | null;
}

export interface WriteOptions {
  /** dryRun=All: run every check and return what would be stored, store nothing. */
  readonly dryRun?: boolean;
  readonly guards?: readonly Guard[];
  /**
   * Read when the Txn is sent (after guaranteedUpdate's tryUpdate), so a caller may pass an array that its
   * tryUpdate fills with what depends on the attempt (the registry's history entry).
   */
  readonly companions?: readonly Companion[];
}

export interface CreateOptions extends WriteOptions {
  /** Store under a lease of this TTL (Events: --event-ttl). Leases are shared across a time bucket. */
  readonly ttlSeconds?: number;
}

/** What a tryUpdate may answer instead of a new object: the object stays as it is (no write, same RV). */
export const NO_CHANGE: unique symbol = Symbol('no change');

export interface UpdateOptions extends WriteOptions {
  readonly preconditions?: Preconditions;
  /** Create when missing (tryUpdate is then called with undefined): PUT on a kind that allows it, apply. */
  readonly allowCreate?: boolean;
  readonly ttlSeconds?: number;
  /**
   * Keys read in the same linearizable read as the object (and read back with it after a conflict), handed
   * to tryUpdate: the registry's history record, which would otherwise cost every write a round trip more.
   */
  readonly readWith?: readonly string[];
}

/** The values of UpdateOptions.readWith's keys as this attempt read them (absent keys are not in it). */
export type ReadWith = ReadonlyMap<string, StoredObject>;

export interface DeleteOptions extends WriteOptions {
  readonly preconditions?: Preconditions;
  /** Called with the current object before the delete commits (after a conflict, with the new one). */
  readonly validate?: (current: StoredObject) => void | Promise<void>;
}

/** Label and field selectors, compiled: the storage filters with them before limiting. */
export interface Predicate {
  readonly matches: (obj: StoredObject) => boolean;
  /** True when it matches everything: the storage may skip decoding what it would only test. */
  readonly empty: boolean;
}

export type ResourceVersionMatch = 'NotOlderThan' | 'Exact';

export interface GetOptions {
  /** '' or absent: the latest (quorum read); '0': any version the server has; 'N': not older than N. */
  readonly resourceVersion?: string;
}

export interface ListOptions {
  /** '' or absent: consistent (as of now); '0': any; 'N' with resourceVersionMatch. */
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: ResourceVersionMatch;
  readonly limit?: number;
  /** An opaque token from a previous page: Kubernetes' continue token (carries the list's RV and start key). */
  readonly continue?: string;
  readonly predicate?: Predicate;
}

export interface ListResult {
  readonly items: StoredObject[];
  readonly resourceVersion: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  readonly type: WatchEventType;
  /** The object (for DELETED, its last state with the deletion's RV; for BOOKMARK, only metadata.resourceVersion; for ERROR, a Status). */
  readonly object: StoredObject;
}

export interface WatchOptions {
  /** Absent or '': start with ADDED for every existing object, then changes; '0': the same from the cache; 'N': changes after N. */
  readonly resourceVersion?: string;
  readonly predicate?: Predicate;
  /** Send BOOKMARK events now and then (only when the client asked: allowWatchBookmarks). */
  readonly allowBookmarks?: boolean;
  /**
   * The watch's timeoutSeconds: it ends by itself then (the iteration finishes), and the cache sends a
   * BOOKMARK just before, as Kubernetes does, so the client resumes from a recent resourceVersion.
   */
  readonly timeoutSeconds?: number;
}

/** A running watch: events in order until it ends (stop(), the storage closing, or an ERROR event). */
export interface Watch extends AsyncIterable<WatchEvent> {
  stop(): void;
}

export interface Storage {
  /** Fails with AlreadyExists if the key exists. */
  create(key: string, obj: StoredObject, opts?: CreateOptions): Promise<StoredObject>;
  /** Fails with NotFound. */
  get(key: string, opts?: GetOptions): Promise<StoredObject>;
  /** Everything under `prefix` (a key ending in '/'). */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /**
   * Kubernetes' GuaranteedUpdate: read, tryUpdate, write with compare(mod_revision); on a conflict read again
   * and call tryUpdate again (so tryUpdate must be a pure function of the object it is given). Fails with
   * NotFound (unless allowCreate), Conflict when a precondition does not hold, and whatever tryUpdate throws.
   */
  guaranteedUpdate(
    key: string,
    opts: UpdateOptions,
    tryUpdate: (current: StoredObject | undefined, readWith: ReadWith) => Promise<StoredObject | typeof NO_CHANGE>,
  ): Promise<{ object: StoredObject; created: boolean }>;
  /** Fails with NotFound, or Conflict when a precondition does not hold. Returns the object as deleted. */
  delete(key: string, opts?: DeleteOptions): Promise<StoredObject>;
  /** Watches one key, or every key under a prefix ending in '/'. */
  watch(keyOrPrefix: string, opts?: WatchOptions): Watch;
  /** The store's current revision, read through a quorum. */
  currentResourceVersion(): Promise<number>;
  /** How many objects are under `prefix` (apiserver_storage_objects). */
  count(prefix: string): Promise<number>;
  close(): Promise<void>;
}

/** Errors the storage raises, each mapped once to a Kubernetes Status by the handlers. */
export type StorageErrorCode =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  /** A resourceVersion or continue token older than the store's compacted history: 410 Gone / Expired. */
  | 'Expired'
  /** A resourceVersion newer than the store has reached (after waiting): 504 Timeout as Kubernetes does. */
  | 'TooLargeResourceVersion'
  /** A guard's key changed or went away: the caller's precondition on another object no longer holds. */
  | 'GuardFailed'
  | 'InvalidContinue'
  /** A malformed resourceVersion, or one given with a continue token: 400 BadRequest with the message. */
  | 'BadRequest'
  /** The store did not answer (unavailable, timed out). */
  | 'Unavailable'
  | 'RequestTooLarge';

/**
 * Messages are Kubernetes' own: for Conflict (a failed precondition) the storage's text that the handlers wrap
 * as `Operation cannot be fulfilled on <resource> "<name>": <message>`; for Expired, TooLargeResourceVersion,
 * BadRequest and InvalidContinue the Status message itself.
 */
export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    readonly key?: string,
    /**
     * For GuardFailed: which guard. For Conflict/Expired: the store's current revision, when known. For an
     * expired continue token: `continue`, a token that goes on at the latest revision (Kubernetes puts it in
     * the 410 Status's metadata.continue). For TooLargeResourceVersion: `retryAfterSeconds` (details).
     */
    readonly detail?: { readonly guard?: Guard; readonly currentRevision?: number; readonly continue?: string; readonly retryAfterSeconds?: number },
  ) {
    super(message);
    this.name = 'StorageError';
  }
}
