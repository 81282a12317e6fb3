// Errors from the durable Raft storage. Each carries a stable `code` (messages may change, codes will not)
// so the server can tell an operator exactly what is wrong with a data directory instead of crashing or,
// worse, starting over with an empty log.

export type StorageErrorCode =
  | 'STORAGE_FOREIGN_DIR' // the directory holds something that is not Setpoint raft data
  | 'STORAGE_VERSION' // written by a Setpoint whose on-disk format this one does not know
  | 'STORAGE_CORRUPT' // records are damaged or inconsistent with each other
  | 'STORAGE_LOCKED' // another process (or another open in this one) holds the directory
  | 'STORAGE_IO' // the disk failed a read or write; the storage refuses further writes
  | 'STORAGE_CLOSED'; // used after close()

export class StorageError extends Error {
  readonly code: StorageErrorCode;

  constructor(code: StorageErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageError';
    this.code = code;
  }
}

export const errCorrupt = (dir: string, what: string, cause?: unknown): StorageError =>
  new StorageError('STORAGE_CORRUPT', `${dir}: raft data is corrupt: ${what}`, cause === undefined ? {} : { cause });

export const errForeignDir = (dir: string, why: string): StorageError =>
  new StorageError('STORAGE_FOREIGN_DIR', `${dir} is not a Setpoint raft data directory: ${why}`);

/**
 * A directory in a format this code does not read. The message says what to do: an older format cannot
 * be converted (before version 3 member ids were not etcd's 64-bit ids, and every member's log, snapshot
 * and peers' configuration hold them), so its data has to be copied out and into a new cluster.
 */
export const errVersion = (dir: string, version: number, known: number): StorageError =>
  new StorageError(
    'STORAGE_VERSION',
    version < known
      ? `${dir} holds raft data in format version ${version}; this Setpoint reads version ${known} and cannot convert it ` +
          '(its member ids are not etcd\'s 64-bit ids): copy the keys out with the Setpoint that wrote it ' +
          "(etcdctl get '' --prefix -w json), start this one on empty data directories, and write them back"
      : `${dir} holds raft data in format version ${version}; this Setpoint reads version ${known}: ` +
          'it was written by a newer Setpoint, so run that one on it',
  );

export function ioError(dir: string, doing: string, e: unknown): StorageError {
  return new StorageError('STORAGE_IO', `${dir}: ${doing} failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
}
