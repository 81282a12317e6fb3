// Controllers under test against a real API server on real etcd 3.4: a context as the controller
// manager builds it (shared informers, the REST client, event recorders), the chosen controllers running,
// and stop() ending the loops, the informers and the server, also when a test failed.
import { ApiEventRecorder } from '../../src/client/event-recorder.js';
import { realClock, type Clock } from '../../src/client/clock.js';
import { SharedInformerFactory } from '../../src/client/informer-factory.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient, type ResourceType } from '../../src/client/resource-client.js';
import { RestClient } from '../../src/client/rest-client.js';
import type { Controller, ControllerContext, ControllerFactory } from '../../src/controllers/controller.js';
import { startRegistryServer, type RegistryServer } from '../apiserver/registry/registry-server.js';
import { testLog } from '../apiserver/helpers/test-server.js';

export interface ControllerHarness {
  readonly server: RegistryServer;
  readonly rest: RestClient;
  readonly ctx: ControllerContext;
  client<T extends KubeObject = KubeObject>(t: ResourceType): ResourceClient<T>;
  /** Builds and runs controllers on the shared context (call before or after others have started). */
  start(...factories: ControllerFactory[]): Controller[];
  stop(): Promise<void>;
}

export async function startControllerHarness(opts: { clock?: Clock } = {}): Promise<ControllerHarness> {
  const server = await startRegistryServer('etcd');
  const rest = new RestClient({ server: server.ts.url, tls: { ca: server.ts.ca.certPem, cert: server.ts.admin.certPem, key: server.ts.admin.keyPem } });
  const clock = opts.clock ?? realClock;
  const informers = new SharedInformerFactory(rest, { clock, log: testLog });
  const recorders: ApiEventRecorder[] = [];
  const ctx: ControllerContext = {
    informers,
    rest,
    clock,
    log: testLog,
    recorderFor(component) {
      const r = new ApiEventRecorder(rest, { component }, { clock, log: testLog });
      recorders.push(r);
      return r;
    },
  };
  const ac = new AbortController();
  const runs: Promise<void>[] = [];
  return {
    server,
    rest,
    ctx,
    client: <T extends KubeObject>(t: ResourceType) => new ResourceClient<T>(rest, t),
    start(...factories) {
      const built = factories.map((f) => f(ctx));
      informers.start(ac.signal);
      for (const c of built) runs.push(c.run(ac.signal, 2));
      return built;
    },
    async stop() {
      ac.abort();
      await Promise.allSettled(runs);
      await informers.stopped();
      await Promise.allSettled(recorders.map((r) => r.flush()));
      rest.close();
      await server.stop();
    },
  };
}
