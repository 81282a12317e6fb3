// The watch wire format: one JSON event `{"type":…,"object":…}` per line, lines split anywhere across
// chunks. Bounded: a line longer than the limit is an error, not an unbounded buffer.
import { ClientError } from './api-status-error.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T = unknown> {
  readonly type: WatchEventType;
  readonly object: T;
}

const TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

export function parseWatchEvent(line: string): WatchEvent {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    throw new ClientError('CLIENT_BAD_RESPONSE', `watch: malformed event: ${(e as Error).message}`);
  }
  if (typeof v !== 'object' || v === null) throw new ClientError('CLIENT_BAD_RESPONSE', 'watch: an event is not an object');
  const o = v as Record<string, unknown>;
  if (typeof o.type !== 'string' || !TYPES.has(o.type)) throw new ClientError('CLIENT_BAD_RESPONSE', `watch: unknown event type ${JSON.stringify(o.type)}`);
  if (typeof o.object !== 'object' || o.object === null) throw new ClientError('CLIENT_BAD_RESPONSE', 'watch: an event has no object');
  return { type: o.type as WatchEventType, object: o.object };
}

export class WatchDecoder {
  private parts: Buffer[] = [];
  private size = 0;
  constructor(private readonly maxLineBytes = 16 * 1024 * 1024) {}

  /** The complete events in this chunk (and what earlier chunks left over). */
  push(chunk: Buffer): WatchEvent[] {
    const out: WatchEvent[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      const line = this.parts.length > 0 ? Buffer.concat([...this.parts, piece]) : piece;
      this.parts = [];
      this.size = 0;
      start = nl + 1;
      const text = line.toString('utf8').trim();
      if (text !== '') out.push(parseWatchEvent(text));
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.size += rest.length;
      if (this.size > this.maxLineBytes) throw new ClientError('CLIENT_TOO_LARGE', `watch: an event is larger than ${this.maxLineBytes} bytes`);
      this.parts.push(Buffer.from(rest));
    }
    return out;
  }

  /** The stream ended: a final event without its newline still counts. */
  end(): WatchEvent[] {
    const text = Buffer.concat(this.parts).toString('utf8').trim();
    this.parts = [];
    this.size = 0;
    return text === '' ? [] : [parseWatchEvent(text)];
  }
}
