// The namespace controller (Kubernetes' pkg/controller/namespace): a namespace with a deletionTimestamp
// is emptied of every namespaced kind discovery lists, its conditions say what is left and why, and once
// nothing is left the `kubernetes` finalizer goes through /finalize, so the API server removes it.
import { isNotFound } from '../../client/api-status-error.js';
import { deletedObject, type SharedInformer } from '../../client/informer.js';
import type { KubeObject } from '../../client/kube-object.js';
import { ReconcileRecorder } from '../../client/reconcile-recorder.js';
import { ResourceClient } from '../../client/resource-client.js';
import { NAMESPACES } from '../../client/resource-types.js';
import type { ControllerContext, ControllerFactory } from '../controller.js';
import { LoopController, type ReconcileResult } from '../keyed-loop.js';
import { sameConditions, setCondition, type StatusCondition } from '../status-conditions.js';
import { deletionConditions, type ContentReport } from './deletion-conditions.js';
import { namespaceLoopReport } from './namespace-record.js';
import { discoverNamespacedResources, type DiscoveredResource } from './namespaced-resources.js';

export const KUBERNETES_FINALIZER = 'kubernetes';
/** How soon a namespace whose content is still going is looked at again, when nothing better is known. */
const RECHECK_MS = 1000;

interface NamespaceObject extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: string; conditions?: StatusCondition[] };
}

export class NamespaceController extends LoopController {
  private readonly informer: SharedInformer<NamespaceObject>;
  private readonly namespaces: ResourceClient<NamespaceObject>;
  /** Records on Terminating namespaces: what content remains. */
  readonly records: ReconcileRecorder;

  constructor(ctx: ControllerContext) {
    super(ctx, 'namespace');
    this.namespaces = new ResourceClient(ctx.rest, NAMESPACES);
    this.records = new ReconcileRecorder({ rest: ctx.rest, controller: 'namespace-controller', clock: ctx.clock, log: this.log });
    this.informer = ctx.informers.informerFor<NamespaceObject>(NAMESPACES);
    const onChange = (o: NamespaceObject): void => {
      if (o.metadata?.deletionTimestamp) this.loop.enqueue(o.metadata.name ?? '');
    };
    this.informer.addEventHandler({ onAdd: onChange, onUpdate: (_old, o) => onChange(o), onDelete: (o) => this.records.forget(NAMESPACES, '', deletedObject(o).metadata?.name ?? '') });
  }

  protected async reconcile(name: string): Promise<ReconcileResult | void> {
    const ns = this.informer.lister.get('', name);
    if (ns === undefined || !ns.metadata?.deletionTimestamp) return;
    const finalizers = ns.spec?.finalizers ?? [];
    if (!finalizers.includes(KUBERNETES_FINALIZER)) return;
    const discovery = await discoverNamespacedResources(this.ctx.rest);
    const { report, estimateMs } = await this.deleteAllContent(name, discovery.resources, discovery.failures);
    const latest = await this.writeConditions(ns, report);
    this.records.record(NAMESPACES, '', name, namespaceLoopReport(report, KUBERNETES_FINALIZER, ns.metadata?.uid));
    const clean = report.discoveryFailures.length === 0 && report.deleteFailures.length === 0 && report.remaining.size === 0;
    if (!clean) {
      this.log.info({ namespace: name, remaining: Object.fromEntries(report.remaining), failures: report.deleteFailures.length }, 'namespace content remaining');
      return { requeueAfterMs: Math.max(RECHECK_MS, estimateMs) };
    }
    await this.finalize(latest, finalizers.filter((f) => f !== KUBERNETES_FINALIZER));
  }

  /** One pass: delete each kind's objects in the namespace, then count what is still there. */
  private async deleteAllContent(namespace: string, resources: readonly DiscoveredResource[], discoveryFailures: string[]): Promise<{ report: ContentReport; estimateMs: number }> {
    const deleteFailures: string[] = [];
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    let estimateMs = 0;
    for (const r of resources) {
      const gr = `${r.resource}.${r.group}`;
      const client = new ResourceClient(this.ctx.rest, r);
      try {
        if (r.verbs.includes('deletecollection')) await client.deleteCollection(namespace);
        else for (const o of (await client.listAll(namespace)).items) await this.deleteOne(client, namespace, o);
      } catch (e) {
        deleteFailures.push(`${gr}: ${(e as Error).message}`);
      }
      let items: KubeObject[];
      try {
        items = (await client.listAll(namespace)).items;
      } catch (e) {
        deleteFailures.push(`${gr}: ${(e as Error).message}`);
        continue;
      }
      if (items.length > 0) remaining.set(gr, items.length);
      for (const o of items) {
        for (const f of o.metadata?.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
        // A pod going gracefully is gone within its grace period: look again then, not before.
        const grace = o.metadata?.deletionGracePeriodSeconds ?? 0;
        estimateMs = Math.max(estimateMs, grace * 1000);
      }
    }
    return { report: { discoveryFailures, deleteFailures, remaining, finalizers }, estimateMs };
  }

  private async deleteOne(client: ResourceClient, namespace: string, o: KubeObject): Promise<void> {
    try {
      await client.delete(namespace, o.metadata?.name ?? '', { preconditions: { uid: o.metadata?.uid ?? '' } });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** Writes the conditions if they changed; returns the namespace as it now is. */
  private async writeConditions(ns: NamespaceObject, report: ContentReport): Promise<NamespaceObject> {
    const now = this.ctx.clock.wallNow();
    let next = ns.status?.conditions ?? [];
    for (const c of deletionConditions(report)) next = setCondition(next, c, now);
    if (sameConditions(next, ns.status?.conditions)) return ns;
    try {
      return await this.namespaces.patchStatus('', ns.metadata?.name ?? '', 'merge', { status: { conditions: next } });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      return ns;
    }
  }

  private async finalize(ns: NamespaceObject, finalizers: string[]): Promise<void> {
    const name = ns.metadata?.name ?? '';
    this.log.info({ namespace: name }, 'namespace empty: removing the kubernetes finalizer');
    try {
      await this.ctx.rest.request({
        method: 'PUT',
        path: this.namespaces.path('', name, 'finalize'),
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, resourceVersion: ns.metadata?.resourceVersion }, spec: { finalizers } },
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}

export const namespaceControllerFactory: ControllerFactory = (ctx) => new NamespaceController(ctx);
