// Asking a running cluster who its members are, before this member belongs to it: a member started with
// --initial-cluster-state existing learns its own id and the cluster id this way (etcd asks its peers'
// /members endpoint).
import { status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import type { PeerTls } from './credentials.js';
import { parsePeerUrl } from './credentials.js';
import { newPeerClient, peerTimings } from './channel.js';
import { peerService } from './proto.js';
import { Metadata } from '@grpc/grpc-js';

/** The membership record from the first peer that answers; tries each URL in turn. */
export async function fetchMembership(peerURLs: readonly string[], tls: PeerTls | undefined, timeoutMs = 5000): Promise<Uint8Array> {
  const m = peerService().members;
  const errors: string[] = [];
  for (const raw of peerURLs) {
    const client = newPeerClient(parsePeerUrl(raw), tls, peerTimings(1000));
    try {
      return await new Promise<Uint8Array>((resolve, reject) => {
        client.makeUnaryRequest(m.path, m.requestSerialize, m.responseDeserialize, {}, new Metadata(), { deadline: Date.now() + timeoutMs }, (err: ServiceError | null, res?: { membership: Uint8Array }) => {
          if (err || !res) reject(err ?? new Error('empty answer'));
          else resolve(res.membership);
        });
      });
    } catch (e) {
      const se = e as Partial<ServiceError>;
      errors.push(`${raw}: ${se.code === status.UNAVAILABLE ? 'unreachable' : (se.details ?? (e as Error).message)}`);
    } finally {
      client.close();
    }
  }
  throw new Error(`cannot reach any member of the cluster to join it (${errors.join('; ')})`);
}
