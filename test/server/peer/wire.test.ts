// The Send stream's hand-written codec (src/server/peer/wire.ts) and protobufjs (from raft.proto) read
// each other's bytes as the same messages, in both directions, for any message the core can make; and it refuses
// what messageFromWire refuses, one message at a time, while bytes that are no batch fail as a whole.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Entry, Message, MessageType } from '../../../src/raft/types.js';
import { MAX_NODE_ID } from '../../../src/raft/types.js';
import { messageFromWire, messageToWire, PeerCodecError } from '../../../src/server/peer/codec.js';
import { peerService } from '../../../src/server/peer/proto.js';
import { decodeMessageBatch, encodeMessageBatch } from '../../../src/server/peer/wire.js';

const TYPES: MessageType[] = ['hup', 'beat', 'checkQuorum', 'unreachable', 'snapStatus', 'prop', 'readIndex', 'readIndexResp', 'transferLeader', 'app', 'appResp', 'vote', 'voteResp', 'preVote', 'preVoteResp', 'snap', 'heartbeat', 'heartbeatResp', 'timeoutNow'];

const uint = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300 }), fc.maxSafeNat());
// Member ids: etcd's are uint64 hashes, most of them past 2^53 (where a Number rounds) and many past 2^63.
const id = fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 300n }), fc.bigInt({ min: 0n, max: MAX_NODE_ID }), fc.constant(MAX_NODE_ID), fc.constant(2n ** 53n + 1n));
const bytes = fc.uint8Array({ maxLength: 40 });
const entry: fc.Arbitrary<Entry> = fc.record({ term: uint, index: uint, type: fc.constantFrom('normal' as const, 'confChange' as const), data: bytes });
const message: fc.Arbitrary<Message> = fc
  .record({
    type: fc.constantFrom(...TYPES),
    to: id,
    from: id,
    term: uint,
    logTerm: uint,
    index: uint,
    entries: fc.array(entry, { maxLength: 4 }),
    commit: uint,
    reject: fc.boolean(),
    rejectHint: uint,
    snapshot: fc.option(
      fc.record({
        data: bytes,
        metadata: fc.record({ index: uint, term: uint, confState: fc.record({ voters: fc.array(id, { maxLength: 4 }), learners: fc.array(id, { maxLength: 3 }) }) }),
      }),
      { nil: undefined },
    ),
    context: fc.option(bytes, { nil: undefined }),
  })
  .map((m) => {
    // Plain objects, as the codecs make them (fast-check's records have no prototype).
    const out: Record<string, unknown> = { ...m, entries: m.entries.map((e) => ({ ...e })) };
    if (m.snapshot === undefined) delete out['snapshot'];
    else {
      const md = m.snapshot.metadata;
      out['snapshot'] = { data: m.snapshot.data, metadata: { index: md.index, term: md.term, confState: { voters: [...md.confState.voters], learners: [...md.confState.learners] } } };
    }
    if (m.context === undefined) delete out['context'];
    return out as unknown as Message;
  });

const pb = (): ReturnType<typeof peerService>['sendProtobuf'] => peerService().sendProtobuf;

describe('the Send stream codec', () => {
  it('writes what protobufjs reads back as the same messages', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 5 }), (ms) => {
        const decoded = pb().requestDeserialize(encodeMessageBatch(ms)).messages.map(messageFromWire);
        expect(decoded).toStrictEqual(ms);
      }),
    );
  });

  it('reads what protobufjs writes as the same messages', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 5 }), (ms) => {
        const bytes = pb().requestSerialize({ messages: ms.map(messageToWire) });
        expect(decodeMessageBatch(bytes)).toStrictEqual(ms);
      }),
    );
  });

  it('refuses a message the core could not take, alone, and a batch that is not protobuf, whole', () => {
    const good: Message = { type: 'heartbeat', to: 2n, from: 1n, term: 3, logTerm: 0, index: 0, entries: [], commit: 1, reject: false, rejectHint: 0 };
    const wire = messageToWire(good);
    const bytes = pb().requestSerialize({ messages: [wire, { ...wire, type: 'MSG_UNSPECIFIED' }, { ...wire, term: 2 ** 60 }, wire] });
    const out = decodeMessageBatch(bytes);
    expect(out[0]).toStrictEqual(good);
    expect(out[1]).toBeInstanceOf(PeerCodecError);
    expect((out[2] as Error).message).toMatch(/term .* not an unsigned safe integer/);
    expect(out[3]).toStrictEqual(good);
    // A `to` of 2^64 (ten varint bytes, the last more than 1) is not a uint64: that message alone is refused.
    const tooBig = Buffer.from([0x0a, 0x0d, 0x08, 0x11, 0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02]);
    const withGood = Buffer.concat([tooBig, encodeMessageBatch([good])]);
    const [bad, fine] = decodeMessageBatch(withGood);
    expect((bad as Error).message).toMatch(/larger than a uint64/);
    expect(fine).toStrictEqual(good);
    expect(() => decodeMessageBatch(Buffer.from([0x0a, 0x05, 0x08]))).toThrow(PeerCodecError);
    expect(() => decodeMessageBatch(Buffer.from([0x0a, 0x02, 0x08, 0xff]))).toThrow(PeerCodecError);
  });
});
