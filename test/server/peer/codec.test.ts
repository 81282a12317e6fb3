// Decoding a peer's message is where its bytes become the core's types: what the core relies on is checked.
import { describe, expect, it } from 'vitest';
import { msg } from '../../../src/raft/types.js';
import { messageFromWire, messageToWire, PeerCodecError } from '../../../src/server/peer/codec.js';
import { peerService } from '../../../src/server/peer/proto.js';
import type { WireMessage } from '../../../src/server/peer/proto.js';

const roundTrip = (w: WireMessage) => peerService().sendProtobuf.requestDeserialize(peerService().sendProtobuf.requestSerialize({ messages: [w] })).messages[0] as WireMessage;

describe('peer codec', () => {
  it('survives the wire with every message type and a snapshot', () => {
    const types = ['prop', 'readIndex', 'readIndexResp', 'transferLeader', 'app', 'appResp', 'vote', 'voteResp', 'preVote', 'preVoteResp', 'heartbeat', 'heartbeatResp', 'timeoutNow'] as const;
    for (const type of types) {
      const m = msg({ type, from: 3n, to: 1n, term: 9, index: 8, logTerm: 7, commit: 6, rejectHint: 5 });
      expect(messageFromWire(roundTrip(messageToWire(m)))).toStrictEqual(m);
    }
    const snap = msg({ type: 'snap', from: 1n, to: 2n, term: 2, snapshot: { data: new Uint8Array([1]), metadata: { index: 9, term: 2, confState: { voters: [1n, 2n], learners: [] } } } });
    expect(messageFromWire(roundTrip(messageToWire(snap)))).toStrictEqual(snap);
  });

  it('refuses what the core could not take', () => {
    const good = messageToWire(msg({ type: 'heartbeat', from: 1n, to: 2n, term: 1 }));
    expect(() => messageFromWire({ ...good, type: 'MSG_UNSPECIFIED' })).toThrow(PeerCodecError);
    expect(() => messageFromWire(roundTrip({ ...good, term: 2 ** 60 }))).toThrow(/term .* not an unsigned safe integer/);
    const snap = messageToWire(msg({ type: 'snap', from: 1n, to: 2n, term: 1, snapshot: { data: new Uint8Array(0), metadata: { index: 1, term: 1, confState: { voters: [1n], learners: [] } } } }));
    expect(() => messageFromWire({ ...snap, snapshot: { data: new Uint8Array(0), metadata: null } })).toThrow(/snapshot without metadata/);
  });
});
