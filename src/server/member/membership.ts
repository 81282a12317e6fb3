// The cluster's members as the store sees them: ids, names, peer and client URLs, learners. Ids are
// derived as etcd derives them (a hash of the peer URLs and the cluster token; added members mix in the
// time), kept below 2^53 so the Raft core can use them as numbers; they go on the wire as uint64.
import { createHash } from 'node:crypto';
import { pack, unpack } from 'msgpackr';
import type { MemberInfo } from './store-api.js';

export interface ClusterMember {
  readonly id: number;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

function hash52(parts: readonly string[]): number {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  const b = h.digest();
  // 52 bits, never 0 (0 means "none" to the core).
  const n = (b.readUInt32BE(0) & 0xfffff) * 0x100000000 + b.readUInt32BE(4);
  return n === 0 ? 1 : n;
}

export function memberIdFor(peerURLs: readonly string[], clusterToken: string, addedAt?: number): number {
  return hash52([...[...peerURLs].sort(), clusterToken, ...(addedAt !== undefined ? [String(addedAt)] : [])]);
}

export function clusterIdFor(memberIds: readonly number[]): number {
  return hash52([...memberIds].sort((a, b) => a - b).map(String));
}

/** Parses etcd's --initial-cluster: "name=url,name=url2,other=url3". */
export function parseInitialCluster(s: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of s.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`--initial-cluster: "${part}" is not name=url`);
    const name = part.slice(0, eq);
    const url = part.slice(eq + 1);
    try {
      new URL(url);
    } catch {
      throw new Error(`--initial-cluster: "${url}" is not a URL`);
    }
    out.set(name, [...(out.get(name) ?? []), url]);
  }
  if (out.size === 0) throw new Error('--initial-cluster is empty');
  return out;
}

export class Membership {
  readonly members = new Map<number, ClusterMember>();
  /** Ids removed from the cluster: they may never come back (etcd refuses them). */
  readonly removed = new Set<number>();

  constructor(readonly clusterId: number) {}

  static fromInitialCluster(initial: Map<string, string[]>, token: string): Membership {
    const ms: ClusterMember[] = [];
    for (const [name, urls] of initial) ms.push({ id: memberIdFor(urls, token), name, peerURLs: urls, clientURLs: [], isLearner: false });
    const m = new Membership(clusterIdFor(ms.map((x) => x.id)));
    for (const x of ms) m.members.set(x.id, x);
    return m;
  }

  encode(): Uint8Array {
    return pack({ clusterId: this.clusterId, members: [...this.members.values()], removed: [...this.removed] });
  }

  static decode(data: Uint8Array): Membership {
    const raw = unpack(data) as { clusterId: number; members: ClusterMember[]; removed: number[] };
    const m = new Membership(raw.clusterId);
    for (const x of raw.members) m.members.set(x.id, { ...x, peerURLs: [...x.peerURLs], clientURLs: [...x.clientURLs] });
    for (const id of raw.removed) m.removed.add(id);
    return m;
  }

  voters(): number[] {
    return [...this.members.values()].filter((m) => !m.isLearner).map((m) => m.id);
  }

  learners(): number[] {
    return [...this.members.values()].filter((m) => m.isLearner).map((m) => m.id);
  }

  byPeerURL(url: string): ClusterMember | undefined {
    for (const m of this.members.values()) if (m.peerURLs.includes(url)) return m;
    return undefined;
  }

  list(): MemberInfo[] {
    return [...this.members.values()].sort((a, b) => a.id - b.id).map(toInfo);
  }
}

export function toInfo(m: ClusterMember): MemberInfo {
  return { id: String(m.id), name: m.name, peerURLs: [...m.peerURLs], clientURLs: [...m.clientURLs], isLearner: m.isLearner };
}
