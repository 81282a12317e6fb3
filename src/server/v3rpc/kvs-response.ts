// RangeResponse and DeleteRangeResponse encoded by hand, in slices, when they carry many key-values. A
// range of half a million keys is about 25 MB of answer: through protobufjs it was a wire object and two
// Long conversions per key, a third of a second of the member's loop and most of a major GC's garbage.
// Here each KeyValue is written once into one buffer, a few milliseconds at a time, in field-number order
// with proto3 zero values omitted (as Go's encoder and kv/pb.ts do).
import type { KeyValue } from '../../kv/types.js';
import { Writer, intFieldLen, kvLength, tagLen, varintLength, writeInt, writeKv } from '../../kv/pb.js';
import { SLICE_ITEMS, runSliced } from '../../kv/sliced.js';
import type { Sliced } from '../../kv/sliced.js';
import type { Header } from '../member/store-api.js';
import { encodeHeaderField } from './watch-encode.js';

/** From this many key-values on, a response is encoded here; below, protobufjs's cost does not matter. */
export const SLICED_KVS = 1024;

/** A message: `head` (fields before the key-values, encoded), the key-values as field `field`, then `tail`. */
function* encodeWithKvs(head: Buffer, field: number, kvs: readonly KeyValue[], tail: (w: Writer) => void, tailLen: number): Sliced<Buffer> {
  const lens = new Int32Array(kvs.length);
  let size = head.length + tailLen;
  for (let i = 0; i < kvs.length; i++) {
    const len = kvLength(kvs[i] as KeyValue);
    lens[i] = len;
    size += tagLen(field) + varintLength(len) + len;
    if (i % SLICE_ITEMS === SLICE_ITEMS - 1) yield;
  }
  const w = new Writer(size);
  w.raw(head);
  for (let i = 0; i < kvs.length; i++) {
    writeKv(w, field, kvs[i] as KeyValue, lens[i] as number);
    if (i % SLICE_ITEMS === SLICE_ITEMS - 1) yield;
  }
  tail(w);
  return w.buf;
}

/** etcdserverpb.RangeResponse: header (1), kvs (2), more (3), count (4). */
export function encodeRangeResponse(h: Header, kvs: readonly KeyValue[], more: boolean, count: number): Promise<Buffer> {
  const tailLen = intFieldLen(3, more ? 1 : 0) + intFieldLen(4, count);
  const tail = (w: Writer): void => {
    writeInt(w, 3, more ? 1 : 0);
    writeInt(w, 4, count);
  };
  return runSliced(encodeWithKvs(encodeHeaderField(h), 2, kvs, tail, tailLen));
}

/** etcdserverpb.DeleteRangeResponse: header (1), deleted (2), prev_kvs (3). */
export function encodeDeleteRangeResponse(h: Header, deleted: number, prevKvs: readonly KeyValue[]): Promise<Buffer> {
  const header = encodeHeaderField(h);
  const head = new Writer(header.length + intFieldLen(2, deleted));
  head.raw(header);
  writeInt(head, 2, deleted);
  return runSliced(encodeWithKvs(head.buf, 3, prevKvs, () => undefined, 0));
}
