// What a member keeps durably besides the write-ahead log's own records: the requests its log entries hold
// (a put and a txn in binary layouts, every other kind msgpack: src/server/member/requests.ts and
// txn-layout.ts), the context of a membership change, the membership record (the Raft snapshot's data)
// and identity.json (src/server/member/membership.ts). Each file says its version rule; these are the
// frozen samples of storage format version 3. Each must decode to its value (a change that could no
// longer read an old log fails) and be written as exactly these bytes (a change to what is written shows,
// and gets a sample of its own). Ids are etcd's 64-bit ones.
import { describe, expect, it } from 'vitest';
import { Membership, decodeIdentity, encodeIdentity } from '../../../src/server/member/membership.js';
import type { ClusterMember } from '../../../src/server/member/membership.js';
import { decodeConfChangeContext, decodeRequest, encodeConfChangeContext, encodeRequest } from '../../../src/server/member/requests.js';
import type { InternalRequest } from '../../../src/server/member/requests.js';
import { plain } from './helpers/plain.js';

const A = 0x8027cae8a0e355ean;
const B = 0xcfa6ba5483271eb1n;
const C = 0x298da9a3f41493cdn;
const CLUSTER = 0x5b2ef1e7cd3c1f5dn;
/** A request id as member A makes them: its id in base 36, a dot, a sequence number in base 36. */
const rid = (n: number): string => `1y5rasyz94e7e.${n.toString(36)}`;
const b = (s: string): Buffer => Buffer.from(s);
const POD = '/registry/pods/default/web';
const LEASE = '7587868090178990081';


interface RequestSample {
  readonly name: string;
  readonly request: InternalRequest;
  /** How it decodes, when that differs from `request` (a put's flags come back false, not absent). */
  readonly decoded?: InternalRequest;
  readonly hex: string;
}

const flagsOff = { prevKv: false, ignoreValue: false, ignoreLease: false };

const REQUESTS: readonly RequestSample[] = [
  {
    name: 'put layout: a key alone',
    request: { t: 'put', id: rid(1), req: { key: b('k') } },
    decoded: { t: 'put', id: rid(1), req: { key: b('k'), ...flagsOff } },
    hex: '01000f317935726173797a39346537652e31000000016b',
  },
  {
    name: 'put layout: value, lease, prev kv',
    request: { t: 'put', id: rid(2), req: { key: b(POD), value: b('{"kind":"Pod"}'), lease: LEASE, prevKv: true } },
    decoded: { t: 'put', id: rid(2), req: { key: b(POD), value: b('{"kind":"Pod"}'), lease: LEASE, ...flagsOff, prevKv: true } },
    hex: '01190f317935726173797a39346537652e320000001a2f72656769737472792f706f64732f64656661756c742f7765620000000e7b226b696e64223a22506f64227d1337353837383638303930313738393930303831',
  },
  {
    name: 'put layout: ignore value and lease',
    request: { t: 'put', id: rid(3), req: { key: b('k'), ignoreValue: true, ignoreLease: true } },
    decoded: { t: 'put', id: rid(3), req: { key: b('k'), prevKv: false, ignoreValue: true, ignoreLease: true } },
    hex: '01060f317935726173797a39346537652e33000000016b',
  },
  {
    name: 'put layout: an empty value',
    request: { t: 'put', id: rid(4), req: { key: b('k'), value: b('') } },
    decoded: { t: 'put', id: rid(4), req: { key: b('k'), value: b(''), ...flagsOff } },
    hex: '01080f317935726173797a39346537652e34000000016b00000000',
  },
  {
    name: "txn layout: Kubernetes' optimistic update",
    request: {
      t: 'txn',
      id: rid(5),
      req: {
        compare: [{ result: 'EQUAL', target: 'MOD', key: b(POD), modRevision: 7 }],
        success: [{ requestPut: { key: b(POD), value: b('{"v":2}') } }],
        failure: [{ requestRange: { key: b(POD) } }],
      },
    },
    hex:
      '020f317935726173797a39346537652e350700000001004700020000001a2f72656769737472792f706f64732f64656661756c742f776562401c000000000000000000010200030000001a2f72656769737472792f706f64732f64656661756c742f776562000000077b2276223a327d000000010100010000001a2f72656769737472792f706f64732f64656661756c742f776562',
  },
  {
    name: 'txn layout: every compare and range field, a nested txn, a delete',
    request: {
      t: 'txn',
      id: rid(6),
      req: {
        compare: [{ result: 'NOT_EQUAL', target: 'LEASE', key: b('a'), rangeEnd: b('b'), version: 1, createRevision: 2, modRevision: 3, value: b('x'), lease: '12' }],
        success: [
          { requestTxn: { success: [{ requestDeleteRange: { key: b('a'), rangeEnd: b('c'), prevKv: true } }] } },
          {
            requestRange: {
              key: b('a'),
              rangeEnd: b('z'),
              limit: 10,
              revision: 4,
              sortOrder: 'DESCEND',
              sortTarget: 'MOD',
              serializable: true,
              keysOnly: true,
              countOnly: false,
              minModRevision: 1,
              maxModRevision: 9,
              minCreateRevision: 1,
              maxCreateRevision: 9,
            },
          },
        ],
      },
    },
    hex:
      '020f317935726173797a39346537652e36030000000101ff0304000000016100000001623ff000000000000040000000000000004008000000000000000000017800023132000000020402000000010300070000000161000000016301011fff0000000161000000017a4024000000000000401000000000000002030101003ff000000000000040220000000000003ff00000000000004022000000000000',
  },
  {
    name: 'msgpack: delete range',
    request: { t: 'deleteRange', id: rid(7), req: { key: b('a'), rangeEnd: b('b'), prevKv: true } },
    hex: 'de0003a174ab64656c65746552616e6765a26964af317935726173797a39346537652e37a3726571de0003a36b6579c40161a872616e6765456e64c40162a6707265764b76c3',
  },
  { name: 'msgpack: compact', request: { t: 'compact', id: rid(8), revision: 42 }, hex: 'de0003a174a7636f6d70616374a26964af317935726173797a39346537652e38a87265766973696f6e2a' },
  {
    name: 'msgpack: lease grant',
    request: { t: 'leaseGrant', id: rid(9), lease: LEASE, ttl: 60 },
    hex: 'de0004a174aa6c656173654772616e74a26964af317935726173797a39346537652e39a56c65617365b337353837383638303930313738393930303831a374746c3c',
  },
  {
    name: 'msgpack: lease revoke',
    request: { t: 'leaseRevoke', id: rid(10), lease: LEASE },
    hex: 'de0003a174ab6c656173655265766f6b65a26964af317935726173797a39346537652e61a56c65617365b337353837383638303930313738393930303831',
  },
  {
    name: 'msgpack: alarm (member id decimal)',
    request: { t: 'alarm', id: rid(11), action: 'ACTIVATE', memberId: A.toString(), alarm: 'NOSPACE' },
    hex: 'de0005a174a5616c61726da26964af317935726173797a39346537652e62a6616374696f6ea84143544956415445a86d656d6265724964b339323334353732363631343236393638303432a5616c61726da74e4f5350414345',
  },
  {
    name: 'msgpack: member attributes (publish)',
    request: { t: 'memberAttr', id: rid(12), memberId: A.toString(), name: 'n1', clientURLs: ['http://127.0.0.1:2379'] },
    hex: 'de0005a174aa6d656d62657241747472a26964af317935726173797a39346537652e63a86d656d6265724964b339323334353732363631343236393638303432a46e616d65a26e31aa636c69656e7455524c7391b5687474703a2f2f3132372e302e302e313a32333739',
  },
  {
    name: 'msgpack: member update',
    request: { t: 'memberUpdate', id: rid(13), memberId: B.toString(), peerURLs: ['http://127.0.0.1:22380'] },
    hex: 'de0004a174ac6d656d626572557064617465a26964af317935726173797a39346537652e64a86d656d6265724964b43134393632383531363834313235343439393035a87065657255524c7391b6687474703a2f2f3132372e302e302e313a3232333830',
  },
  {
    name: 'msgpack: a put the layout cannot hold (an id of 256 characters)',
    request: { t: 'put', id: 'x'.repeat(256), req: { key: b('k'), value: b('v') } },
    hex: `de0003a174a3707574a26964da0100${'78'.repeat(256)}a3726571de0002a36b6579c4016ba576616c7565c40176`,
  },
  {
    name: 'msgpack: a txn the layout cannot hold (a limit that is not a number)',
    request: { t: 'txn', id: rid(14), req: { success: [{ requestRange: { key: b('k'), limit: '5' as unknown as number } }] } },
    hex: 'de0003a174a374786ea26964af317935726173797a39346537652e65a3726571de0001a77375636365737391de0001ac7265717565737452616e6765de0002a36b6579c4016ba56c696d6974a135',
  },
];

const LEARNER: ClusterMember = { id: B, name: '', peerURLs: ['http://127.0.0.1:32380'], clientURLs: [], isLearner: true };

describe('log entry requests (storage format version 3)', () => {
  it.each(REQUESTS.map((s) => [s.name, s] as const))('%s: decodes from its frozen bytes, and is written as them', (_name, s) => {
    expect(plain(decodeRequest(Buffer.from(s.hex, 'hex')))).toEqual(plain(s.decoded ?? s.request));
    expect(Buffer.from(encodeRequest(s.request)).toString('hex')).toBe(s.hex);
  });

  it("a membership change's context: the member (id past 2^63, kept whole) and the waiting caller", () => {
    const hex =
      'de0002a57265714964af317935726173797a39346537652e66a66d656d626572de0005a26964cfcfa6ba5483271eb1a46e616d65a0a87065657255524c7391b6687474703a2f2f3132372e302e302e313a3332333830aa636c69656e7455524c7390a969734c6561726e6572c3';
    expect(decodeConfChangeContext(Buffer.from(hex, 'hex'))).toEqual({ reqId: rid(15), member: LEARNER });
    expect(Buffer.from(encodeConfChangeContext({ reqId: rid(15), member: LEARNER })).toString('hex')).toBe(hex);
  });
});

describe('the membership record and identity.json (version 1)', () => {
  const MEMBERSHIP_HEX =
    'de0004a17601a9636c75737465724964d35b2ef1e7cd3c1f5da76d656d6265727392de0005a26964cf8027cae8a0e355eaa46e616d65a26e31a87065657255524c7391b5687474703a2f2f3132372e302e302e313a32333830aa636c69656e7455524c7391b5687474703a2f2f3132372e302e302e313a32333739a969734c6561726e6572c2de0005a26964cfcfa6ba5483271eb1a46e616d65a0a87065657255524c7391b6687474703a2f2f3132372e302e302e313a3332333830aa636c69656e7455524c7390a969734c6561726e6572c3a772656d6f76656491d3298da9a3f41493cd';

  function sample(): Membership {
    const m = new Membership(CLUSTER);
    m.members.set(A, { id: A, name: 'n1', peerURLs: ['http://127.0.0.1:2380'], clientURLs: ['http://127.0.0.1:2379'], isLearner: false });
    m.members.set(B, LEARNER);
    m.removed.add(C);
    return m;
  }

  it('the membership record decodes from its frozen bytes, and is written as them', () => {
    const m = Membership.decode(Buffer.from(MEMBERSHIP_HEX, 'hex'));
    expect(m.clusterId).toBe(CLUSTER);
    expect([...m.members.values()]).toEqual([...sample().members.values()]);
    expect([...m.removed]).toEqual([C]);
    expect(Buffer.from(sample().encode()).toString('hex')).toBe(MEMBERSHIP_HEX);
  });

  it('a membership record of another version, or with ids that are not uint64s, is refused', () => {
    const v2 = MEMBERSHIP_HEX.replace('a17601', 'a17602');
    expect(() => Membership.decode(Buffer.from(v2, 'hex'))).toThrow(/membership record: version 2, this Setpoint reads version 1/);
    // The cluster id as a msgpack number (how 52-bit ids were written).
    const numeric = MEMBERSHIP_HEX.replace('d35b2ef1e7cd3c1f5d', '05');
    expect(() => Membership.decode(Buffer.from(numeric, 'hex'))).toThrow(/no cluster id/);
  });

  it('identity.json decodes from its frozen text, and is written as it; the 52-bit form is refused', () => {
    const text = '{"version":1,"memberId":"8027cae8a0e355ea","clusterId":"5b2ef1e7cd3c1f5d"}';
    expect(decodeIdentity(text)).toEqual({ memberId: A, clusterId: CLUSTER });
    expect(encodeIdentity({ memberId: A, clusterId: CLUSTER })).toBe(text);
    expect(() => decodeIdentity('{"memberId":3379431546224206,"clusterId":1230459374839405}')).toThrow(/identity version undefined/);
  });
});
