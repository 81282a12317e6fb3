// WatchResponse, encoded by hand. One revision's events go to every watcher of their keys, each in its
// own response (etcd sends one per watcher), so a put under a prefix with 1000 watchers would otherwise
// be turned into wire objects and protobuf-encoded 1000 times. Here each event is encoded once (cached
// by the event object, which the watchable store shares between watchers) and so is each header; a
// response is then the header, the watch id and the cached event bytes laid end to end: fields in number
// order, proto3 zero values omitted (as Go's encoder does). test/server/watch-encode.test.ts decodes them
// with the proto definitions and compares with protobufjs' encoding of the same response.
import type { KvEvent } from '../../kv/types.js';
import { Writer, bytesFieldLen, int64, intFieldLen, kvLength, putVarint, tagLen, varintLength, writeBytes, writeInt, writeKv } from '../../kv/pb.js';
import type { WatchResponse } from '../../watch/types.js';
import type { Header } from '../member/store-api.js';
import type { EncodedMessage } from '../grpc/bidi.js';
import { SLICE_ITEMS, runSliced } from '../../kv/sliced.js';
import type { Sliced } from '../../kv/sliced.js';

/** WatchResponse field 11 (events): tag, length and the Event, ready to be copied into any response. */
function encodeEventField(ev: KvEvent): Buffer {
  const kvLen = kvLength(ev.kv);
  const prevLen = ev.prevKv ? kvLength(ev.prevKv) : -1;
  const type = ev.type === 'DELETE' ? 1 : 0;
  const body = intFieldLen(1, type) + tagLen(2) + varintLength(kvLen) + kvLen + (prevLen >= 0 ? tagLen(3) + varintLength(prevLen) + prevLen : 0);
  const w = new Writer(tagLen(11) + varintLength(body) + body);
  w.varint((11 << 3) | 2);
  w.varint(body);
  writeInt(w, 1, type);
  writeKv(w, 2, ev.kv, kvLen);
  if (ev.prevKv) writeKv(w, 3, ev.prevKv, prevLen);
  return w.buf;
}

/** The cluster and member id fields of the last header encoded (they change only with membership). */
let idFields: { clusterId: string; memberId: string; bytes: Buffer } | undefined;

/**
 * Field 1 of any etcd response, the ResponseHeader: tag, length and fields in number order, zero values
 * omitted. A response whose only field is its header (a Put without prev_kv) is exactly these bytes.
 */
export function encodeHeaderField(h: Header): Buffer {
  if (!idFields || idFields.clusterId !== h.clusterId || idFields.memberId !== h.memberId) {
    const cluster = BigInt(h.clusterId);
    const member = BigInt(h.memberId);
    const ids = new Writer(intFieldLen(1, cluster) + intFieldLen(2, member));
    writeInt(ids, 1, cluster);
    writeInt(ids, 2, member);
    idFields = { clusterId: h.clusterId, memberId: h.memberId, bytes: ids.buf };
  }
  const ids = idFields.bytes;
  const body = ids.length + intFieldLen(3, int64(h.revision)) + intFieldLen(4, h.raftTerm);
  const w = new Writer(tagLen(1) + varintLength(body) + body);
  w.varint((1 << 3) | 2);
  w.varint(body);
  w.raw(ids);
  writeInt(w, 3, int64(h.revision));
  writeInt(w, 4, h.raftTerm);
  return w.buf;
}

/**
 * One watcher's events as a message the transport writes in place (encodeEvents' bytes without a buffer
 * of their own). The encoder keeps one and refills it per response: the transport uses it at once.
 */
class EventsMessage implements EncodedMessage {
  length = 0;
  header: Buffer = Buffer.alloc(0);
  watchId = 0;
  events: readonly Buffer[] = [];

  writeTo(buf: Buffer, at: number): void {
    buf.set(this.header, at);
    at += this.header.length;
    if (this.watchId !== 0) at = putVarint(buf, putVarint(buf, at, 2 << 3), this.watchId);
    for (const ev of this.events) {
      buf.set(ev, at);
      at += ev.length;
    }
  }
}

/** Encodes WatchResponses for one member: events once per event object, the header once per revision and term. */
export class WatchResponseEncoder {
  private readonly events = new WeakMap<KvEvent, Buffer>();
  private lastHeader: { readonly h: Header; readonly bytes: Buffer } | undefined;
  private readonly message = new EventsMessage();
  /** The message's event fields, reused while each response carries one event (the usual case). */
  private readonly oneEvent: Buffer[] = [Buffer.alloc(0)];

  encode(h: Header, r: WatchResponse): Buffer {
    return this.build(h, r.watchId, r.events, r);
  }

  /** The most common response: one watcher's events (or none, a progress notification), nothing else set. */
  encodeEvents(h: Header, watchId: number, events: readonly KvEvent[]): Buffer {
    return this.build(h, watchId, events, undefined);
  }

  /**
   * encodeEvents() as a message to write in place; valid until the next call. watchId must be
   * non-negative (a watcher's id; only control responses carry -1).
   */
  prepareEvents(h: Header, watchId: number, events: readonly KvEvent[]): EncodedMessage {
    const m = this.message;
    m.header = this.headerField(h);
    m.watchId = watchId;
    let size = m.header.length + intFieldLen(2, watchId);
    if (events.length === 1) {
      const b = this.eventField(events[0] as KvEvent);
      this.oneEvent[0] = b;
      m.events = this.oneEvent;
      size += b.length;
    } else {
      const bs = events.map((ev) => this.eventField(ev));
      for (const b of bs) size += b.length;
      m.events = bs;
    }
    m.length = size;
    return m;
  }

  /**
   * encodeEvents() for a revision with many events (a delete of half a million keys is one revision):
   * the same bytes, each event encoded and copied a slice at a time.
   */
  encodeEventsSliced(h: Header, watchId: number, events: readonly KvEvent[]): Promise<Buffer> {
    return runSliced(this.eventsSliced(h, watchId, events));
  }

  private *eventsSliced(h: Header, watchId: number, events: readonly KvEvent[]): Sliced<Buffer> {
    const header = this.headerField(h);
    const fields: Buffer[] = new Array<Buffer>(events.length);
    let size = header.length + intFieldLen(2, int64(watchId));
    for (let i = 0; i < events.length; i++) {
      // Not kept in the per-event cache: growing a WeakMap to half a million entries rehashed it in one
      // piece (40 ms of one slice), and every garbage collection until the revision died paid for them.
      const ev = events[i] as KvEvent;
      const b = this.events.get(ev) ?? encodeEventField(ev);
      fields[i] = b;
      size += b.length;
      if (i % SLICE_ITEMS === SLICE_ITEMS - 1) yield;
    }
    const w = new Writer(size);
    w.raw(header);
    writeInt(w, 2, int64(watchId));
    for (let i = 0; i < fields.length; i++) {
      w.raw(fields[i] as Buffer);
      if (i % (SLICE_ITEMS * 16) === SLICE_ITEMS * 16 - 1) yield;
    }
    return w.buf;
  }

  /** Fields in number order; `flags` absent means created, canceled, fragment, compact revision and reason are all unset. */
  private build(h: Header, watchId: number, events: readonly KvEvent[], flags: WatchResponse | undefined): Buffer {
    const header = this.headerField(h);
    let size = header.length + intFieldLen(2, int64(watchId));
    const reason = flags?.cancelReason ? Buffer.from(flags.cancelReason) : undefined;
    if (flags) {
      size += intFieldLen(3, flags.created ? 1 : 0) + intFieldLen(4, flags.canceled ? 1 : 0) + intFieldLen(5, int64(flags.compactRevision));
      if (reason) size += bytesFieldLen(6, reason.length);
      size += intFieldLen(7, flags.fragment ? 1 : 0);
    }
    for (const ev of events) size += this.eventField(ev).length;
    const w = new Writer(size);
    w.raw(header);
    writeInt(w, 2, int64(watchId));
    if (flags) {
      writeInt(w, 3, flags.created ? 1 : 0);
      writeInt(w, 4, flags.canceled ? 1 : 0);
      writeInt(w, 5, int64(flags.compactRevision));
      if (reason) writeBytes(w, 6, reason);
      writeInt(w, 7, flags.fragment ? 1 : 0);
    }
    // The second lookup of each event hits the cache the size pass filled.
    for (const ev of events) w.raw(this.eventField(ev));
    return w.buf;
  }

  private eventField(ev: KvEvent): Buffer {
    let b = this.events.get(ev);
    if (!b) {
      b = encodeEventField(ev);
      this.events.set(ev, b);
    }
    return b;
  }

  /** WatchResponse field 1: the ResponseHeader, kept while revision, term and ids stay the same. */
  private headerField(h: Header): Buffer {
    const last = this.lastHeader;
    if (last && last.h.revision === h.revision && last.h.raftTerm === h.raftTerm && last.h.memberId === h.memberId && last.h.clusterId === h.clusterId) {
      return last.bytes;
    }
    const bytes = encodeHeaderField(h);
    this.lastHeader = { h, bytes };
    return bytes;
  }
}
