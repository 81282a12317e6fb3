// The object's admission history for `setpoint why`: what each defaulter, mutating and validating step did
// on each write (or refusal), kept bounded beside the object in a companion key written in the same Txn as
// the object, and deleted with it. Shape documented in docs/why-records.md.
import type { AdmissionRecord } from '../admission/interface.js';
import { encodeObject } from '../storage/etcd3/codec.js';
import type { Companion, Storage, StoredObject } from '../storage/interface.js';

/** How many writes an object's history keeps (the oldest go first). */
export const HISTORY_LIMIT = 20;

export interface HistoryEntry {
  readonly time: string;
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE';
  readonly subresource: string;
  readonly user: string;
  /** False when the request was refused (by validation or an admission step); the object did not change then. */
  readonly allowed: boolean;
  readonly message?: string;
  /** The resourceVersion the object had before this write ('' for a create). */
  readonly fromResourceVersion: string;
  readonly records: readonly AdmissionRecord[];
}

/** Stored as a StoredObject (metadata.name = the object's) so the storage reads it like any other. */
export interface HistoryDocument extends StoredObject {
  kind: 'AdmissionHistory';
  apiVersion: 'setpoint.io/v1';
  entries: HistoryEntry[];
}

export function historyKey(etcdPrefix: string, resource: string, namespace: string, name: string): string {
  return `${etcdPrefix}/setpoint.io/history/${resource}/${namespace === '' ? '' : `${namespace}/`}${name}`;
}

export function appendEntry(doc: HistoryDocument | undefined, name: string, entry: HistoryEntry): HistoryDocument {
  const entries = [...(doc?.entries ?? []), entry];
  return { kind: 'AdmissionHistory', apiVersion: 'setpoint.io/v1', metadata: { name }, entries: entries.slice(-HISTORY_LIMIT) };
}


export class HistoryWriter {
  constructor(private readonly raw: Storage) {}

  private async read(key: string): Promise<HistoryDocument | undefined> {
    try {
      return (await this.raw.get(key)) as HistoryDocument;
    } catch {
      return undefined;
    }
  }

  /**
   * The companion that appends `entry` to the history as the write read it (UpdateOptions.readWith: in the
   * same read as the object), for the write's Txn. A racing write may drop one entry.
   */
  companionOf(current: StoredObject | undefined, key: string, name: string, entry: HistoryEntry): Companion {
    return { key, value: encodeObject(appendEntry(current as HistoryDocument | undefined, name, entry)) };
  }

  /** The same, reading the history first (a create, which reads no object). */
  async companion(key: string, name: string, entry: HistoryEntry): Promise<Companion> {
    return this.companionOf(await this.read(key), key, name, entry);
  }

  deletion(key: string): Companion {
    return { key, value: null };
  }

  /** A refused request, written alone (there is no object write to ride on). Failures only lose the record. */
  async recordAlone(key: string, name: string, entry: HistoryEntry): Promise<void> {
    try {
      await this.raw.guaranteedUpdate(key, { allowCreate: true }, async (cur) => {
        const doc = appendEntry(cur as HistoryDocument | undefined, name, entry);
        return doc;
      });
    } catch {
      // The why-record is best effort for refusals; the client's answer does not depend on it.
    }
  }
}
