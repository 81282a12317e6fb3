// What every kind's store shares: the storages (the watch cache for reads, the etcd store for the few
// reads that must be quorum and for companions), the schemas, admission, the clock and randomness.
import type { KubeletClientCert } from './pod-log.js';
import type { Logger } from 'pino';
import type { SchemaRegistry } from '../../api/schema/registry.js';
import type { AdmissionChain } from '../admission/interface.js';
import type { Storage } from '../storage/interface.js';

export interface StoreContext {
  /** --etcd-prefix, without a trailing '/' (`/registry`). */
  readonly etcdPrefix: string;
  /** The store itself (no cache): history companions, namespace and lease checks. */
  readonly raw: Storage;
  readonly schemas: SchemaRegistry;
  /** Read through at each request, so the admission chain can be swapped in once it is built. */
  admission: AdmissionChain;
  /** The client certificate pods/log presents to agents; set once the API server has it (pod-log.ts). */
  kubeletClient?: KubeletClientCert | undefined;
  readonly eventTtlSeconds: number;
  readonly random: () => number;
  readonly now: () => Date;
  readonly log: Logger;
}

/** RFC 3339 to the second, as metav1.Time serializes. */
export function rfc3339(d: Date): string {
  return new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
