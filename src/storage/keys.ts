// The key layout of the raft data directory. One byte of prefix per kind of record; LevelDB sorts keys
// bytewise, so big-endian numbers after the prefix make a kind's records iterate in numeric order and a
// range of log entries a contiguous key range.
//
//   'l' + u64be index   one log entry
//   'm' + name          one metadata record (format marker, hard state, conf state, log start, snapshot)
//   's' + u32be chunk   one chunk of the latest snapshot's data

const LOG_PREFIX = 0x6c; // 'l'
const META_PREFIX = 0x6d; // 'm'
const SNAP_CHUNK_PREFIX = 0x73; // 's'

const TWO_32 = 2 ** 32;

function metaKey(name: string): Uint8Array {
  return Buffer.from(String.fromCharCode(META_PREFIX) + name, 'latin1');
}

/** Written once at creation; says "this is Setpoint raft data, format N". */
export const FORMAT_KEY = metaKey('format');
export const HARD_STATE_KEY = metaKey('hardstate');
/** The configuration at the application's applied index (absent: the snapshot's configuration). */
export const CONF_STATE_KEY = metaKey('confstate');
/** Index and term of the entry just before the first one kept: what compaction or a snapshot left. */
export const LOG_START_KEY = metaKey('logstart');
export const SNAPSHOT_KEY = metaKey('snapshot');

export function logKey(index: number): Uint8Array {
  const k = Buffer.allocUnsafe(9);
  k[0] = LOG_PREFIX;
  k.writeUInt32BE(Math.floor(index / TWO_32), 1);
  k.writeUInt32BE(index >>> 0, 5);
  return k;
}

/** The index in a log key, or undefined if the key is not one (a stray key in the log range is corruption). */
export function logIndexOf(key: Uint8Array): number | undefined {
  if (key.length !== 9 || key[0] !== LOG_PREFIX) return undefined;
  const b = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return b.readUInt32BE(1) * TWO_32 + b.readUInt32BE(5);
}

/** Bounds covering every log key: [LOG_FIRST, LOG_LAST]. */
export const LOG_FIRST = Buffer.from([LOG_PREFIX]);
export const LOG_LAST = Buffer.from([LOG_PREFIX, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

export function snapChunkKey(chunk: number): Uint8Array {
  const k = Buffer.allocUnsafe(5);
  k[0] = SNAP_CHUNK_PREFIX;
  k.writeUInt32BE(chunk, 1);
  return k;
}

/** Renders a key for error messages: printable prefix, hex for the rest. */
export function describeKey(key: Uint8Array): string {
  const index = logIndexOf(key);
  if (index !== undefined) return `log entry ${index}`;
  if (key[0] === SNAP_CHUNK_PREFIX && key.length === 5) return `snapshot chunk ${Buffer.from(key).readUInt32BE(1)}`;
  if (key[0] === META_PREFIX) return `metadata record '${Buffer.from(key.subarray(1)).toString('latin1')}'`;
  return `key ${Buffer.from(key).toString('hex')}`;
}
