// StorageError codes (storage/interface.ts) turned into the Status Kubernetes answers for each, as its
// registry's storeerr.Interpret*Error functions do: in one place, so every verb handler maps them alike.
import { StorageError } from './storage/interface.js';
import { statuses, statusOf, type GroupResource, type Status } from './status.js';

/** The operation a failed storage call was part of, as Kubernetes names it in ServerTimeout messages. */
export type StorageOperation = 'get' | 'list' | 'watch' | 'create' | 'update' | 'delete';

export interface StorageErrorContext {
  readonly resource: GroupResource;
  /** The object's name ('' for lists and watches). */
  readonly name: string;
  readonly operation: StorageOperation;
}

/**
 * The Status for a StorageError. Where Kubernetes' text depends only on the resource and name (NotFound,
 * AlreadyExists, Conflict, ServerTimeout) it is built here; where it carries what only the store knows
 * (`too old resource version: 5 (10)`, the continue-token text, a guard's lease), the storage's message is
 * the message, so the storage must word those as Kubernetes does.
 */
export function statusFromStorageError(err: StorageError, ctx: StorageErrorContext): Status {
  const name = ctx.name;
  switch (err.code) {
    case 'NotFound':
      return statuses.notFound(ctx.resource, name);
    case 'AlreadyExists':
      return statuses.alreadyExists(ctx.resource, name);
    case 'Conflict':
      // Preconditions on uid or resourceVersion carry their own text (`Precondition failed: UID in
      // precondition: …`); a stale resourceVersion on write says the optimistic-lock sentence.
      return statuses.conflict(ctx.resource, name, err.message.startsWith('Precondition failed') ? err.message : undefined);
    case 'GuardFailed':
      // A fenced writer whose Lease moved on: nothing in Kubernetes matches; Conflict tells the client to
      // re-read (and a deposed leader to stop), with the storage's reason.
      return statuses.conflict(ctx.resource, name, err.message);
    case 'Expired':
      return statuses.expired(err.message);
    case 'TooLargeResourceVersion':
      return statuses.tooLargeResourceVersion(err.message);
    case 'InvalidContinue':
    case 'BadRequest':
      return statuses.badRequest(err.message);
    case 'Unavailable':
      return statuses.serverTimeout(ctx.resource, ctx.operation, 2);
    case 'RequestTooLarge':
      // kube-apiserver passes etcd's error through as an unconverted error: 500 with no reason
      // (kubernetes/kubernetes#112152 is open about it). Clients see `Error from server: <message>`.
      return statuses.unknown(err.message);
  }
}

/** statusFromStorageError for StorageErrors, statusOf for anything else. */
export function statusForError(err: unknown, ctx: StorageErrorContext): Status {
  return err instanceof StorageError ? statusFromStorageError(err, ctx) : statusOf(err);
}
