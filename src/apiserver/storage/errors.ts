// The storage's errors with Kubernetes' texts, made in one place for both implementations (the etcd store
// and the watch cache), and the Status objects a watch ends with when it cannot go on.
import { StorageError } from './interface.js';
import type { Guard, StoredObject } from './interface.js';

/** k8s.io/apiserver storage.StorageError's text: what Kubernetes puts in its Conflict messages. */
function storageErrorText(kind: string, code: number, key: string, additional: string): string {
  return `StorageError: ${kind}, Code: ${code}, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: ${additional}`;
}

export function notFound(key: string): StorageError {
  return new StorageError('NotFound', storageErrorText('key not found', 1, key, '<nil>'), key);
}

export function alreadyExists(key: string): StorageError {
  return new StorageError('AlreadyExists', storageErrorText('key exists', 2, key, '<nil>'), key);
}

/** A precondition on the object (uid, resourceVersion) that does not hold. */
export function preconditionFailed(key: string, message: string): StorageError {
  return new StorageError('Conflict', storageErrorText('invalid object', 4, key, message), key);
}

export function guardFailed(key: string, guard: Guard): StorageError {
  return new StorageError('GuardFailed', `guard ${guard.key} is no longer at mod_revision ${guard.modRevision}`, key, { guard });
}

export function expired(message: string, detail?: { continue?: string; currentRevision?: number }): StorageError {
  return new StorageError('Expired', message, undefined, detail);
}

/** storage.NewTooLargeResourceVersionError: a 504 Timeout that tells the client to come back. */
export function tooLargeResourceVersion(minimum: number, current: number, retryAfterSeconds = 0): StorageError {
  return new StorageError('TooLargeResourceVersion', `Too large resource version: ${minimum}, current: ${current}`, undefined, { currentRevision: current, retryAfterSeconds });
}

export function badRequest(message: string): StorageError {
  return new StorageError('BadRequest', message);
}

export function unavailable(message: string, key?: string): StorageError {
  return new StorageError('Unavailable', message, key);
}

/** What a watch from a compacted revision (or one older than the cache's window) ends with. */
export function tooOldResourceVersion(requested: number, oldest: number): string {
  return `too old resource version: ${requested} (${oldest})`;
}

/** A metav1.Status for a watch's ERROR event. */
export function errorStatus(code: number, reason: string, message: string): StoredObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export function expiredStatus(message: string): StoredObject {
  return errorStatus(410, 'Expired', message);
}

export function internalErrorStatus(message: string): StoredObject {
  return errorStatus(500, 'InternalError', `Internal error occurred: ${message}`);
}
