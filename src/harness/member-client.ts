// The few etcd v3 calls the harness itself makes to one member, over gRPC with the project's own protos:
// Status (is it serving, who leads, how far it has applied), a linearizable Range (the head revision) and
// HashKV (do the members hold the same history). One client per member, on its own connection, with a
// deadline on every call; the same for etcd and Setpoint members.
import { readFileSync } from 'node:fs';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import type { ChannelCredentials, MethodDefinition, ServiceError } from '@grpc/grpc-js';
import { etcdPackageDefinition } from '../server/v3rpc/etcd-proto.js';
import type { TlsFiles } from './tls-files.js';

/** A member's Status, ids as decimal strings (64-bit ids do not fit a number). */
export interface MemberStatus {
  readonly memberId: string;
  readonly clusterId: string;
  /** '0' when the member knows no leader. */
  readonly leader: string;
  readonly raftTerm: bigint;
  readonly raftIndex: bigint;
  readonly raftAppliedIndex: bigint;
  readonly isLearner: boolean;
  readonly revision: bigint;
}

interface Header {
  clusterId: string;
  memberId: string;
  revision: string;
  raftTerm: string;
}

type Method = MethodDefinition<object, object>;

function method(service: string, name: string): Method {
  const svc = etcdPackageDefinition()[`etcdserverpb.${service}`] as unknown as Record<string, Method> | undefined;
  const m = svc?.[name];
  if (!m) throw new Error(`etcdserverpb.${service}/${name} is not in proto/etcd`);
  return m;
}

function channelCredentials(tls: TlsFiles | undefined): ChannelCredentials {
  return tls ? credentials.createSsl(readFileSync(tls.caFile), readFileSync(tls.keyFile), readFileSync(tls.certFile)) : credentials.createInsecure();
}

export class MemberClient {
  private readonly client: Client;

  constructor(
    readonly url: string,
    tls?: TlsFiles,
  ) {
    // Its own connection: a member's client must not share a channel (and its backoff) with another's.
    this.client = new Client(url.replace(/^https?:\/\//, ''), channelCredentials(tls), { 'grpc.use_local_subchannel_pool': 1 });
  }

  private call<T>(m: Method, req: object, timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(m.path, m.requestSerialize, m.responseDeserialize, req, new Metadata(), { deadline: Date.now() + timeoutMs }, (e: ServiceError | null, res?: object) =>
        e ? reject(e) : resolve(res as T),
      );
    });
  }

  async status(timeoutMs = 5000): Promise<MemberStatus> {
    const r = await this.call<{ header: Header; leader: string; raftIndex: string; raftTerm: string; raftAppliedIndex: string; isLearner: boolean }>(method('Maintenance', 'Status'), {}, timeoutMs);
    return {
      memberId: r.header.memberId,
      clusterId: r.header.clusterId,
      leader: r.leader,
      raftTerm: BigInt(r.raftTerm),
      raftIndex: BigInt(r.raftIndex),
      raftAppliedIndex: BigInt(r.raftAppliedIndex),
      isLearner: r.isLearner,
      revision: BigInt(r.header.revision),
    };
  }

  /** The head revision, from a linearizable read of one key (it goes through a read barrier as any read does). */
  async headRevision(timeoutMs = 5000): Promise<bigint> {
    const r = await this.call<{ header: Header }>(method('KV', 'Range'), { key: Buffer.from('\0') }, timeoutMs);
    return BigInt(r.header.revision);
  }

  /** HashKV at `revision` (fails with "future revision" on a member that has not applied it yet). */
  async hashKV(revision: bigint, timeoutMs = 5000): Promise<{ hash: string; compactRevision: string }> {
    const r = await this.call<{ hash: number; compactRevision: string }>(method('Maintenance', 'HashKV'), { revision: revision.toString() }, timeoutMs);
    return { hash: String(r.hash), compactRevision: r.compactRevision };
  }

  close(): void {
    this.client.close();
  }
}
