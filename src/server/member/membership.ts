// The cluster's members as the store sees them: ids, names, peer and client URLs, learners. Ids are
// etcd 3.4's, computed from the same bytes (etcdserver/api/membership): a member's id is the first 8 bytes
// (big-endian) of the SHA-1 of its sorted peer URLs, then the cluster token, then — for a member added at
// run time — the Unix time in seconds, in decimal (etcd adds members with an empty token); the cluster id
// is the same of the member ids, sorted, as 8-byte big-endian integers. A Setpoint cluster started with
// the same --initial-cluster and --initial-cluster-token as an etcd cluster has the same ids.
import { createHash } from 'node:crypto';
import { pack, unpack } from 'msgpackr';
import type { NodeId } from '../../raft/types.js';
import { MAX_NODE_ID, NONE, compareNodeIds, isNodeId } from '../../raft/types.js';
import type { MemberInfo } from './store-api.js';

export interface ClusterMember {
  readonly id: NodeId;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

/** Go's sort.Strings: by bytes (UTF-8), which JavaScript's default sort (UTF-16 units) is not beyond ASCII. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Peer URLs in the order etcd keeps a member's (types.NewURLs sorts them). */
function sortedURLs(urls: readonly string[]): string[] {
  return [...urls].sort(byBytes);
}

/**
 * A member's peer URLs as etcd's types.NewURLs takes them, since they are what its id is derived from:
 * trimmed, the scheme in lower case, http, https, unix or unixs, a host:port, no path; sorted. Throws an
 * Error saying what is wrong (etcd's words) for anything else.
 */
export function parsePeerURLs(strs: readonly string[]): string[] {
  if (strs.length === 0) throw new Error('no valid URLs given');
  return sortedURLs(
    strs.map((raw) => {
      const s = raw.trim();
      const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/.exec(s);
      const scheme = m?.[1]?.toLowerCase();
      if (!m || (scheme !== 'http' && scheme !== 'https' && scheme !== 'unix' && scheme !== 'unixs')) throw new Error(`URL scheme must be http, https, unix, or unixs: ${s}`);
      const host = m[2] as string;
      if (!/^(?:\[[^\]]*\]|[^:[\]]*):[^:]*$/.test(host)) throw new Error(`URL address does not have the form "host:port": ${s}`);
      if (m[3] !== '') throw new Error(`URL must not contain a path: ${s}`);
      return `${scheme}://${host}`;
    }),
  );
}

function first8(h: Buffer): NodeId {
  return h.readBigUInt64BE(0);
}

/**
 * A member's id, as etcd's NewMember computes it. `addedAtSecs` is the Unix time in seconds for a member
 * added to a running cluster (etcd's MemberAdd passes an empty cluster token with it); a founding member
 * has none.
 */
export function memberIdFor(peerURLs: readonly string[], clusterToken: string, addedAtSecs?: number): NodeId {
  const h = createHash('sha1');
  for (const u of sortedURLs(peerURLs)) h.update(u);
  h.update(clusterToken);
  if (addedAtSecs !== undefined) h.update(String(addedAtSecs));
  return first8(h.digest());
}

/** The id of the cluster the members found, as etcd's RaftCluster.genID computes it. */
export function clusterIdFor(memberIds: readonly NodeId[]): NodeId {
  const b = Buffer.alloc(8 * memberIds.length);
  [...memberIds].sort(compareNodeIds).forEach((id, i) => b.writeBigUInt64BE(id, 8 * i));
  return first8(createHash('sha1').update(b).digest());
}

/** A member id from the store API (a decimal uint64 string), or undefined if it is not one. */
export function parseMemberId(s: string): NodeId | undefined {
  if (!/^\d{1,20}$/.test(s)) return undefined;
  const id = BigInt(s);
  return id <= MAX_NODE_ID ? id : undefined;
}

/** Parses etcd's --initial-cluster: "name=url,name=url2,other=url3". */
export function parseInitialCluster(s: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of s.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`--initial-cluster: "${part}" is not name=url`);
    const name = part.slice(0, eq);
    const url = part.slice(eq + 1);
    out.set(name, [...(out.get(name) ?? []), url]);
  }
  if (out.size === 0) throw new Error('--initial-cluster is empty');
  for (const [name, urls] of out) {
    try {
      out.set(name, parsePeerURLs(urls));
    } catch (e) {
      throw new Error(`--initial-cluster: ${(e as Error).message}`, { cause: e });
    }
  }
  return out;
}

/** The membership record's version: see encode(). */
const RECORD_VERSION = 1;

export class Membership {
  readonly members = new Map<NodeId, ClusterMember>();
  /** Ids removed from the cluster: they may never come back (etcd refuses them). */
  readonly removed = new Set<NodeId>();

  constructor(readonly clusterId: NodeId) {}

  static fromInitialCluster(initial: Map<string, string[]>, token: string): Membership {
    const ms: ClusterMember[] = [];
    for (const [name, urls] of initial) {
      const id = memberIdFor(urls, token);
      // As etcd's NewClusterFromURLsMap: two members with the same URLs would be one member.
      if (id === NONE) throw new Error(`cannot use ${id.toString(16)} as member id`);
      const same = ms.find((m) => m.id === id);
      if (same) throw new Error(`--initial-cluster: members ${same.name} and ${name} have the same id ${id.toString(16)} (the same peer URLs)`);
      ms.push({ id, name, peerURLs: urls, clientURLs: [], isLearner: false });
    }
    const m = new Membership(clusterIdFor(ms.map((x) => x.id)));
    for (const x of ms) m.members.set(x.id, x);
    return m;
  }

  /**
   * The membership record: it is the Raft snapshot's data (so it is on disk, in every snapshot file) and
   * what a joining member is sent. msgpack, ids as 64-bit integers: `{ v: 1, clusterId, members: [{ id,
   * name, peerURLs, clientURLs, isLearner }], removed: [id] }`. Version rule: a key may be added (readers
   * ignore what they do not know) without a new version; changing a key's name, type or meaning needs
   * `v: 2`, and decode() must go on reading v 1 (or the raft storage's format version goes up and the old
   * directories are refused). test/server/member/record-formats.test.ts freezes the samples.
   */
  encode(): Uint8Array {
    return pack({ v: RECORD_VERSION, clusterId: this.clusterId, members: [...this.members.values()], removed: [...this.removed] });
  }

  static decode(data: Uint8Array): Membership {
    const raw = unpack(data) as unknown;
    const bad = (what: string): never => {
      throw new Error(`membership record: ${what}`);
    };
    if (typeof raw !== 'object' || raw === null) return bad('not a map');
    const r = raw as Record<string, unknown>;
    if (r['v'] !== RECORD_VERSION) return bad(`version ${String(r['v'])}, this Setpoint reads version ${RECORD_VERSION}`);
    if (!isNodeId(r['clusterId'])) return bad('no cluster id');
    if (!Array.isArray(r['members']) || !Array.isArray(r['removed'])) return bad('no member lists');
    const m = new Membership(r['clusterId']);
    for (const x of r['members'] as unknown[]) {
      const o = (typeof x === 'object' && x !== null ? x : {}) as Record<string, unknown>;
      const { id, name, peerURLs, clientURLs, isLearner } = o;
      if (!isNodeId(id) || typeof name !== 'string' || !isStrings(peerURLs) || !isStrings(clientURLs) || typeof isLearner !== 'boolean') return bad('a malformed member');
      m.members.set(id, { id, name, peerURLs: [...peerURLs], clientURLs: [...clientURLs], isLearner });
    }
    for (const id of r['removed'] as unknown[]) {
      if (!isNodeId(id)) return bad('a malformed removed id');
      m.removed.add(id);
    }
    return m;
  }

  voters(): NodeId[] {
    return [...this.members.values()].filter((m) => !m.isLearner).map((m) => m.id);
  }

  learners(): NodeId[] {
    return [...this.members.values()].filter((m) => m.isLearner).map((m) => m.id);
  }

  byPeerURL(url: string): ClusterMember | undefined {
    for (const m of this.members.values()) if (m.peerURLs.includes(url)) return m;
    return undefined;
  }

  /** By id, as etcd lists members. */
  list(): MemberInfo[] {
    return [...this.members.values()].sort((a, b) => compareNodeIds(a.id, b.id)).map(toInfo);
  }
}

function isStrings(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

export function toInfo(m: ClusterMember): MemberInfo {
  return { id: m.id.toString(), name: m.name, peerURLs: [...m.peerURLs], clientURLs: [...m.clientURLs], isLearner: m.isLearner };
}

/** Who this member is, kept in its data dir (member/identity.json) from its first start on. */
export interface MemberIdentity {
  readonly memberId: NodeId;
  readonly clusterId: NodeId;
}

const IDENTITY_VERSION = 1;

/**
 * identity.json: `{"version":1,"memberId":"<hex>","clusterId":"<hex>"}`, the ids in hex as etcd prints
 * them (strings: a JSON number loses bits past 2^53). Version rule as for the membership record: a key
 * may be added; anything else needs version 2, and version 1 must stay readable.
 */
export function encodeIdentity(id: MemberIdentity): string {
  return JSON.stringify({ version: IDENTITY_VERSION, memberId: id.memberId.toString(16), clusterId: id.clusterId.toString(16) });
}

export function decodeIdentity(text: string): MemberIdentity {
  const raw = JSON.parse(text) as unknown;
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  if (o['version'] !== IDENTITY_VERSION) {
    throw new Error(`identity version ${String(o['version'])}, this Setpoint reads version ${IDENTITY_VERSION} (a data dir of an older Setpoint: its member ids are not etcd's)`);
  }
  const hex = (k: string): NodeId => {
    const v = o[k];
    if (typeof v !== 'string' || !/^[0-9a-f]{1,16}$/.test(v)) throw new Error(`${k} is not a hex uint64`);
    const id = BigInt(`0x${v}`);
    if (!isNodeId(id)) throw new Error(`${k} is 0`);
    return id;
  };
  return { memberId: hex('memberId'), clusterId: hex('clusterId') };
}
