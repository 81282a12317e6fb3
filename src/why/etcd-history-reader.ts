// Reads the admission history the API server keeps beside each object (docs/why-records.md) straight from
// the store, through the etcd v3 API like every other client: the API server does not serve it (yet).
import { historyKey } from '../apiserver/registry/history.js';
import { EtcdClient } from '../etcd-client/etcd-client.js';
import type { TlsFiles } from '../etcd-client/endpoints.js';
import { arr, obj, text } from './object-fields.js';
import type { HistoryEntry } from './why-source.js';

export interface HistoryStore {
  readonly endpoints: readonly string[];
  readonly prefix: string;
  readonly tls?: TlsFiles;
}

export class EtcdHistoryReader {
  private readonly client: EtcdClient;

  constructor(private readonly store: HistoryStore) {
    this.client = new EtcdClient({ endpoints: store.endpoints, ...(store.tls ? { tls: store.tls } : {}), callTimeoutMs: 10_000 });
  }

  async read(resource: string, namespace: string, name: string): Promise<HistoryEntry[]> {
    const kv = await this.client.get(historyKey(this.store.prefix, resource, namespace, name));
    if (!kv) return [];
    let doc: unknown;
    try {
      doc = JSON.parse(kv.value.toString('utf8'));
    } catch {
      return [];
    }
    return arr(obj(doc).entries).map((e) => ({
      time: text(e.time),
      operation: (text(e.operation) === 'UPDATE' || text(e.operation) === 'DELETE' ? text(e.operation) : 'CREATE') as HistoryEntry['operation'],
      subresource: text(e.subresource),
      user: text(e.user),
      allowed: e.allowed !== false,
      ...(typeof e.message === 'string' ? { message: e.message } : {}),
      fromResourceVersion: text(e.fromResourceVersion),
      records: arr(e.records).map((r) => ({
        stage: (['defaulting', 'mutating', 'validating'].includes(text(r.stage)) ? text(r.stage) : 'mutating') as 'defaulting' | 'mutating' | 'validating',
        plugin: text(r.plugin),
        allowed: r.allowed !== false,
        ...(typeof r.message === 'string' ? { message: r.message } : {}),
        changedPaths: Array.isArray(r.changedPaths) ? (r.changedPaths as unknown[]).map(text) : [],
        latencyMs: typeof r.latencyMs === 'number' ? r.latencyMs : 0,
      })),
    }));
  }

  close(): void {
    this.client.close();
  }
}
