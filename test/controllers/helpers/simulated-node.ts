// A stand-in for a node and its agent in end-to-end controller tests (until simulated nodes land): every
// pod that appears is bound to one node, then reported Running and Ready; a pod being deleted is deleted
// for good (grace 0), as an agent does once its containers stopped. Driven by an informer and a work
// queue like any loop, so it acts on the current state of each pod, never on an event's copy.
import { pino } from 'pino';
import { Informer } from '../../../src/client/informer.js';
import { isNotFound, isConflict } from '../../../src/client/api-status-error.js';
import { objectKey, splitKey } from '../../../src/client/kube-object.js';
import { ResourceClient } from '../../../src/client/resource-client.js';
import { PODS } from '../../../src/client/resource-types.js';
import type { RestClient } from '../../../src/client/rest-client.js';
import { WorkQueue } from '../../../src/client/work-queue.js';
import type { Pod } from '../../../src/controllers/apps-types.js';
import { rfc3339 } from '../../../src/controllers/apps-types.js';
import { isPodReady } from '../../../src/controllers/pod-readiness.js';
import { runQueueWorkers } from '../../../src/controllers/queue-workers.js';

export class SimulatedNode {
  private readonly ac = new AbortController();
  private readonly pods: ResourceClient<Pod>;
  private readonly informer: Informer<Pod>;
  private readonly queue = new WorkQueue<string>();
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    rest: RestClient,
    readonly nodeName = 'node-1',
  ) {
    this.pods = new ResourceClient<Pod>(rest, PODS);
    this.informer = new Informer<Pod>(this.pods);
    this.informer.addEventHandler({ onAdd: (p) => this.queue.add(objectKey(p)), onUpdate: (_o, p) => this.queue.add(objectKey(p)) });
  }

  async start(): Promise<void> {
    const inf = this.informer.run(this.ac.signal);
    const workers = runQueueWorkers(this.queue, 2, (key) => this.reconcile(key), pino({ level: 'silent' }));
    this.running = Promise.allSettled([inf, workers]);
    await this.informer.waitForSync(this.ac.signal);
  }

  async stop(): Promise<void> {
    this.ac.abort();
    this.queue.shutDown();
    await this.running;
  }

  private async reconcile(key: string): Promise<object> {
    const { namespace, name } = splitKey(key);
    const pod = this.informer.lister.get(namespace, name);
    if (pod === undefined) return {};
    try {
      if (pod.metadata.deletionTimestamp) {
        await this.pods.delete(namespace, name, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid ?? '' } });
      } else if (!pod.spec?.nodeName) {
        await this.pods.bind(namespace, name, this.nodeName, { uid: pod.metadata.uid ?? '' });
      } else if (!isPodReady(pod)) {
        const now = rfc3339(new Date());
        await this.pods.patchStatus(namespace, name, 'merge', {
          status: {
            phase: 'Running',
            conditions: [
              { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
              { type: 'Initialized', status: 'True', lastTransitionTime: now },
              { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
              { type: 'Ready', status: 'True', lastTransitionTime: now },
            ],
          },
        });
      }
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) return {};
      throw e;
    }
    return {};
  }
}
