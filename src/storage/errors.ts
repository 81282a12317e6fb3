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

export const errVersion = (dir: string, version: number, known: number): StorageError =>
  new StorageError('STORAGE_VERSION', `${dir} holds raft data in format version ${version}; this Setpoint reads version ${known}`);

/** The `code` that abstract-level / classic-level put on their errors, looking through LEVEL_DATABASE_NOT_OPEN. */
export function levelErrorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  // abstract-level wraps the binding's error in LEVEL_DATABASE_NOT_OPEN (open) or LEVEL_* (others); the
  // specific reason is the innermost code.
  let code: string | undefined;
  for (let depth = 0; depth < 4 && typeof cur === 'object' && cur !== null; depth++) {
    const c = (cur as { code?: unknown }).code;
    if (typeof c === 'string') code = c;
    cur = (cur as { cause?: unknown }).cause;
  }
  return code;
}

/** Innermost message of a LevelDB error chain: the one that says what LevelDB actually found. */
function levelMessage(e: unknown): string {
  let cur: unknown = e;
  let message = String(e);
  for (let depth = 0; depth < 4 && cur instanceof Error; depth++) {
    message = cur.message;
    cur = cur.cause;
  }
  return message;
}

/** Maps an error from LevelDB to a StorageError once, at the edge; anything already mapped passes through. */
export function fromLevelError(dir: string, doing: string, e: unknown): StorageError {
  if (e instanceof StorageError) return e;
  const code = levelErrorCode(e);
  const detail = levelMessage(e);
  switch (code) {
    case 'LEVEL_LOCKED':
      return new StorageError('STORAGE_LOCKED', `${dir} is in use by another process or handle (LevelDB LOCK is held): ${detail}`, { cause: e });
    case 'LEVEL_CORRUPTION':
      return errCorrupt(dir, `LevelDB reports corruption while ${doing}: ${detail}`, e);
    case 'LEVEL_DATABASE_NOT_OPEN':
    case 'LEVEL_IO_ERROR':
    default:
      return new StorageError('STORAGE_IO', `${dir}: ${doing} failed: ${detail}`, { cause: e });
  }
}
