// Splitting a huge watch response into fragments (etcd's sendFragments): a watcher that asked for
// `fragment` gets a response over the size limit as several, each but the last flagged fragment=true, so
// the client can reassemble one revision's events. Sizes are the protobuf encoding's, computed here from
// the field rules (proto3 omits default values) instead of encoding the message.
import type { KeyValue, KvEvent } from '../kv/types.js';
import type { WatchResponse } from './types.js';
import { varintLength as varintLen } from '../kv/pb.js';

/** etcd's MaxRequestBytes (1.5 MiB) plus the gRPC overhead it allows on top (512 KiB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 1.5 * 1024 * 1024 + 512 * 1024;

/**
 * Header fields the gRPC layer adds (cluster_id, member_id, raft_term): at most a tag and a 10-byte varint
 * each. Counting the worst case keeps a fragment under the limit whatever their values.
 */
const HEADER_ALLOWANCE = 3 * 11;

/** Tag (one byte for field numbers below 16) plus the value, or nothing for a zero. */
function intField(n: number): number {
  return n === 0 ? 0 : 1 + varintLen(n);
}

function bytesField(len: number): number {
  return len === 0 ? 0 : 1 + varintLen(len) + len;
}

function messageField(size: number): number {
  return 1 + varintLen(size) + size;
}

function keyValueSize(kv: KeyValue): number {
  const lease = kv.lease === '0' || kv.lease === '' ? 0 : 1 + varintLen(BigInt(kv.lease));
  return (
    bytesField(kv.key.length) +
    intField(kv.createRevision) +
    intField(kv.modRevision) +
    intField(kv.version) +
    bytesField(kv.value.length) +
    lease
  );
}

/** Size of one mvccpb.Event message. */
export function eventSize(ev: KvEvent): number {
  return (ev.type === 'DELETE' ? 2 : 0) + messageField(keyValueSize(ev.kv)) + (ev.prevKv ? messageField(keyValueSize(ev.prevKv)) : 0);
}

/** Size of a WatchResponse without its events. */
function envelopeSize(r: WatchResponse): number {
  const header = intField(r.header.revision) + HEADER_ALLOWANCE;
  return (
    messageField(header) +
    intField(r.watchId) +
    (r.created ? 2 : 0) +
    (r.canceled ? 2 : 0) +
    intField(r.compactRevision) +
    bytesField(Buffer.byteLength(r.cancelReason)) +
    (r.fragment ? 2 : 0)
  );
}

/** Size of a repeated `events` (field 11: a one-byte tag) entry. */
function eventFieldSize(ev: KvEvent): number {
  return messageField(eventSize(ev));
}

export function responseSize(r: WatchResponse): number {
  let n = envelopeSize(r);
  for (const ev of r.events) n += eventFieldSize(ev);
  return n;
}

/**
 * The responses to send for `r`: itself if it is under `maxBytes` or holds fewer than two events,
 * else fragments filled greedily, each holding at least one event, every one but the last flagged.
 */
export function fragmentResponse(r: WatchResponse, maxBytes: number): WatchResponse[] {
  if (r.events.length < 2) return [r];
  const sizes = r.events.map(eventFieldSize);
  const whole = envelopeSize(r) + sizes.reduce((a, b) => a + b, 0);
  if (whole < maxBytes) return [r];
  const base = envelopeSize({ ...r, fragment: true });
  const out: WatchResponse[] = [];
  let i = 0;
  while (i < r.events.length) {
    const startAt = i;
    let size = base;
    // Take events while the fragment stays under the limit; a single event always goes, however big.
    while (i < r.events.length) {
      const next = size + (sizes[i] as number);
      if (i > startAt && next >= maxBytes) break;
      size = next;
      i++;
    }
    out.push({ ...r, events: r.events.slice(startAt, i), fragment: i < r.events.length });
  }
  return out;
}
