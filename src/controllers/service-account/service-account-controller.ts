// The service account controller (Kubernetes' serviceaccounts-controller): every active namespace has
// a `default` ServiceAccount; one deleted comes back. A Terminating namespace gets none (the API server
// would refuse it, and the namespace controller is emptying it).
import { isAlreadyExists, isApiStatusError } from '../../client/api-status-error.js';
import { deletedObject, type SharedInformer } from '../../client/informer.js';
import type { KubeObject } from '../../client/kube-object.js';
import { ResourceClient } from '../../client/resource-client.js';
import { NAMESPACES, SERVICEACCOUNTS } from '../../client/resource-types.js';
import type { ControllerContext, ControllerFactory } from '../controller.js';
import { LoopController } from '../keyed-loop.js';

export const DEFAULT_SERVICE_ACCOUNT = 'default';

interface NamespaceObject extends KubeObject {
  status?: { phase?: string };
}

export class ServiceAccountController extends LoopController {
  private readonly namespaces: SharedInformer<NamespaceObject>;
  private readonly accounts: SharedInformer<KubeObject>;
  private readonly client: ResourceClient;

  constructor(ctx: ControllerContext) {
    super(ctx, 'serviceaccount');
    this.client = new ResourceClient(ctx.rest, SERVICEACCOUNTS);
    this.namespaces = ctx.informers.informerFor<NamespaceObject>(NAMESPACES);
    this.accounts = ctx.informers.informerFor(SERVICEACCOUNTS);
    const onNamespace = (o: NamespaceObject): void => this.loop.enqueue(o.metadata?.name ?? '');
    this.namespaces.addEventHandler({ onAdd: onNamespace, onUpdate: (_old, o) => onNamespace(o) });
    this.accounts.addEventHandler({
      onDelete: (o) => {
        const sa = deletedObject(o);
        if (sa.metadata?.name === DEFAULT_SERVICE_ACCOUNT) this.loop.enqueue(sa.metadata.namespace ?? '');
      },
    });
  }

  protected async reconcile(namespace: string): Promise<void> {
    const ns = this.namespaces.lister.get('', namespace);
    if (ns === undefined || ns.metadata?.deletionTimestamp || ns.status?.phase === 'Terminating') return;
    if (this.accounts.lister.get(namespace, DEFAULT_SERVICE_ACCOUNT) !== undefined) return;
    try {
      await this.client.create({ metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace } });
      this.log.info({ namespace }, 'created the default ServiceAccount');
    } catch (e) {
      // Already there (the cache lags), or the namespace began terminating meanwhile: nothing to do.
      if (isAlreadyExists(e) || isApiStatusError(e, 'Forbidden') || isApiStatusError(e, 'NotFound')) return;
      throw e;
    }
  }
}

export const serviceAccountFactory: ControllerFactory = (ctx) => new ServiceAccountController(ctx);
