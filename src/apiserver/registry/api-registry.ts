// Every kind the API server serves, assembled on one store: a watch cache per resource in front of the
// etcd-backed storage, a GenericStore per kind registered in the ResourceRegistry (discovery and routing
// read it), OpenAPI v3 documents per group-version from the schema model, the namespaces Kubernetes makes
// at start, and apiserver_storage_objects.
import type { KubeletClientCert } from './pod-log.js';
import type { Logger } from 'pino';
import { openAPIDocument, groupVersionPath, type OpenAPIResource } from '../../api/openapi.js';
import { builtinSchemas, type SchemaRegistry } from '../../api/schema/registry.js';
import type { EtcdClient } from '../../etcd-client/etcd-client.js';
import type { Chain } from '../admission/admission-chain.js';
import { defaultAdmissionChain, type AdmissionOptions, type AdmissionReads } from '../admission/default-admission.js';
import { NOOP_ADMISSION, type AdmissionChain } from '../admission/interface.js';
import { SYSTEM_PRIORITY_CLASSES, systemPriorityClassObject } from '../admission/priority.js';
import type { OpenApiV3Source } from '../endpoints/openapi.js';
import type { HealthCheck } from '../endpoints/health.js';
import type { ApiServerMetrics } from '../metrics.js';
import { ResourceRegistry } from '../resource-registry.js';
import { Cacher } from '../storage/cacher/cacher.js';
import { EtcdStorage } from '../storage/etcd3/etcd-storage.js';
import { StorageError, type Storage, type StoredObject } from '../storage/interface.js';
import { GenericStore } from './generic-store.js';
import { withHistory } from './history-subresource.js';
import { withReconcile } from './reconcile-subresource.js';
import { ALL_STRATEGIES } from './kinds/all-kinds.js';
import type { StoreContext } from './store-context.js';
import { rfc3339 } from './store-context.js';
import type { Strategy } from './strategy.js';

/** The namespaces the API server makes when they are missing. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export interface ApiRegistryOptions {
  readonly client: EtcdClient;
  readonly etcdPrefix: string;
  readonly eventTtlSeconds: number;
  readonly log: Logger;
  /** Default: Kubernetes' default plugins and the webhooks (src/apiserver/admission/default-admission.ts). */
  readonly admission?: AdmissionChain;
  /** For the default chain: the toleration seconds (flags) and a webhook client. */
  readonly admissionOptions?: AdmissionOptions;
  /** Serve reads from a watch cache per resource (default true). */
  readonly watchCache?: boolean;
  readonly strategies?: readonly Strategy[];
  readonly schemas?: SchemaRegistry;
  readonly random?: () => number;
  readonly now?: () => Date;
  /** How often apiserver_storage_objects is refreshed (default 60 s as Kubernetes). */
  readonly storageObjectsIntervalMs?: number;
}

export class ApiRegistry {
  readonly registry = new ResourceRegistry();
  readonly stores = new Map<string, GenericStore>();
  readonly ctx: StoreContext;
  private readonly raw: EtcdStorage;
  private readonly cachers: Cacher[] = [];
  private metricsTimer: NodeJS.Timeout | undefined;
  private readonly chain: Chain | undefined;

  constructor(private readonly opts: ApiRegistryOptions) {
    const prefix = opts.etcdPrefix.replace(/\/+$/, '');
    this.raw = new EtcdStorage({ client: opts.client, logger: opts.log });
    this.ctx = {
      etcdPrefix: prefix,
      raw: this.raw,
      schemas: opts.schemas ?? builtinSchemas,
      admission: opts.admission ?? NOOP_ADMISSION,
      eventTtlSeconds: opts.eventTtlSeconds,
      random: opts.random ?? Math.random,
      now: opts.now ?? (() => new Date()),
      log: opts.log.child({ component: 'registry' }),
    };
    // One cache per stored resource: core and events.k8s.io Events share the `events` keys.
    const caches = new Map<string, Storage>();
    for (const s of opts.strategies ?? ALL_STRATEGIES) {
      const resource = s.storageResource ?? s.descriptor.resource;
      let storage = caches.get(resource);
      if (!storage) {
        storage = opts.watchCache === false ? this.raw : this.cacher(`${prefix}/${resource}/`);
        caches.set(resource, storage);
      }
      const store = new GenericStore(s, storage, this.ctx);
      // Every kind serves its history (history-subresource.ts): one generic subresource, not one per kind.
      this.registry.register(withReconcile(withHistory(s.descriptor)), store);
      this.stores.set(`${s.descriptor.group}/${s.descriptor.resource}`, store);
    }
    if (opts.admission === undefined) {
      this.chain = defaultAdmissionChain(this.admissionReads(), opts.admissionOptions ?? {}, opts.log);
      this.ctx.admission = this.chain;
    }
  }

  /** Admission reads through the watch caches (resourceVersion 0: from memory, no store round trip). */
  private admissionReads(): AdmissionReads {
    const notFound = (e: unknown): boolean => e instanceof StorageError && e.code === 'NotFound';
    return {
      cachedList: async (group, resource) => {
        const store = this.store(group, resource);
        if (store === undefined) return [];
        return (await store.storage.list(store.listPrefix(''), { resourceVersion: '0' })).items;
      },
      get: async (group, resource, name): Promise<StoredObject | undefined> => {
        const store = this.store(group, resource);
        if (store === undefined) return undefined;
        const key = store.key('', name);
        try {
          return await store.storage.get(key, { resourceVersion: '0' });
        } catch (e) {
          if (!notFound(e)) throw e;
        }
        // Not in the cache yet (made a moment ago): the store says, as Kubernetes' plugins ask live then.
        try {
          return await this.raw.get(key);
        } catch (e) {
          if (notFound(e)) return undefined;
          throw e;
        }
      },
    };
  }

  private cacher(resourcePrefix: string): Cacher {
    const c = new Cacher({ storage: this.raw, resourcePrefix, logger: this.opts.log });
    this.cachers.push(c);
    return c;
  }

  store(group: string, resource: string): GenericStore | undefined {
    return this.stores.get(`${group}/${resource}`);
  }

  /** The client certificate pods/log presents to agents (see pod-log.ts). */
  setKubeletClient(cert: KubeletClientCert): void {
    this.ctx.kubeletClient = cert;
  }

  /** Swaps in the admission chain (admission's plugins and webhooks are built after the registry). */
  setAdmission(chain: AdmissionChain): void {
    this.ctx.admission = chain;
  }

  /** Makes default, kube-system, kube-public and kube-node-lease if missing (idempotent, races welcome). */
  async ensureSystemNamespaces(): Promise<void> {
    for (const name of SYSTEM_NAMESPACES) {
      const key = `${this.ctx.etcdPrefix}/namespaces/${name}`;
      const obj = {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, uid: crypto.randomUUID(), creationTimestamp: rfc3339(this.ctx.now()), labels: { 'kubernetes.io/metadata.name': name } },
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      };
      try {
        await this.raw.create(key, obj);
      } catch (e) {
        if (!(e instanceof StorageError && e.code === 'AlreadyExists')) throw e;
      }
    }
  }

  /** Makes system-node-critical and system-cluster-critical if missing, as Kubernetes does at start. */
  async ensureSystemPriorityClasses(): Promise<void> {
    for (const c of SYSTEM_PRIORITY_CLASSES) {
      const obj = systemPriorityClassObject(c);
      obj.metadata = { ...obj.metadata, uid: crypto.randomUUID(), creationTimestamp: rfc3339(this.ctx.now()), generation: 1 };
      try {
        await this.raw.create(`${this.ctx.etcdPrefix}/priorityclasses/${c.name}`, obj);
      } catch (e) {
        if (!(e instanceof StorageError && e.code === 'AlreadyExists')) throw e;
      }
    }
  }

  /** The OpenAPI v3 documents kubectl validates and explains with, one per group-version. */
  openapi(serverVersion?: string): OpenApiV3Source {
    let docs: Map<string, unknown> | undefined;
    return {
      documents: () => {
        if (docs) return docs;
        const byGv = new Map<string, { gv: { group: string; version: string }; resources: OpenAPIResource[] }>();
        for (const { descriptor: d } of this.registry.all()) {
          const gv = { group: d.group, version: d.version };
          const k = groupVersionPath(gv);
          let e = byGv.get(k);
          if (!e) {
            e = { gv, resources: [] };
            byGv.set(k, e);
          }
          e.resources.push({
            name: d.resource,
            kind: d.kind,
            namespaced: d.namespaced,
            verbs: d.verbs,
            subresources: d.subresources
              // Subresources of kinds the schema model lacks (policy/v1 Eviction) are left out of the documents.
              // history's HistoryRecordList is Setpoint's own and has no schema: it is left out the same way.
              .filter((s) => s.name !== 'log' && this.ctx.schemas.kindSchema(s.kind) !== undefined)
              .map((s) => ({ name: s.name, kind: s.kind.kind, group: s.kind.group, version: s.kind.version, verbs: s.verbs })),
          });
        }
        docs = new Map();
        for (const [k, e] of byGv) docs.set(k, openAPIDocument(this.ctx.schemas, e.gv, e.resources, serverVersion !== undefined ? { serverVersion } : {}));
        return docs;
      },
    };
  }

  /** /readyz: every watch cache has made its first list. */
  readyCheck(): HealthCheck {
    return {
      name: 'watch-cache',
      check: async () => {
        const waiting = this.cachers.filter((c) => !c.stats().ready).length;
        if (waiting > 0) throw new Error(`${waiting} watch caches are not ready`);
      },
    };
  }

  /** Feeds apiserver_storage_objects now and every interval. */
  startStorageObjects(metrics: ApiServerMetrics): void {
    const once = async (): Promise<void> => {
      const seen = new Set<string>();
      for (const store of this.stores.values()) {
        if (seen.has(store.resourcePrefix)) continue;
        seen.add(store.resourcePrefix);
        try {
          const n = await this.raw.count(store.resourcePrefix);
          const gr = store.groupResource;
          metrics.setStorageObjects(gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`, n);
        } catch (e) {
          this.ctx.log.debug({ err: (e as Error).message }, 'counting objects failed');
        }
      }
    };
    void once();
    this.metricsTimer = setInterval(() => void once(), this.opts.storageObjectsIntervalMs ?? 60_000);
    this.metricsTimer.unref();
  }

  async close(): Promise<void> {
    if (this.metricsTimer) clearInterval(this.metricsTimer);
    this.chain?.close();
    await Promise.all(this.cachers.map((c) => c.close()));
    await this.raw.close();
  }
}
