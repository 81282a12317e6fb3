// The lifecycle controllers as the controller manager lists them (each entry's name is its controller's
// `name`), built from the manager's lifecycle flags; all-controllers.ts spreads this list into its own.
import type { ControllerFactory } from './controller.js';
import { garbageCollectorFactory } from './garbage-collector/garbage-collector.js';
import { DEFAULT_LIFECYCLE_OPTIONS, type LifecycleOptions } from './lifecycle-flags.js';
import { namespaceControllerFactory } from './namespace/namespace-controller.js';
import { nodeLifecycleFactory } from './node-lifecycle/node-lifecycle-controller.js';
import { taintEvictionFactory } from './node-lifecycle/taint-eviction-controller.js';
import { DEFAULT_POD_GC_OPTIONS, podGcFactory } from './pod-gc/pod-gc-controller.js';
import { serviceAccountFactory } from './service-account/service-account-controller.js';

export interface NamedControllerFactory {
  readonly name: string;
  readonly factory: ControllerFactory;
}

export function lifecycleControllers(opts: LifecycleOptions = DEFAULT_LIFECYCLE_OPTIONS): NamedControllerFactory[] {
  return [
    { name: 'garbage-collector', factory: garbageCollectorFactory },
    { name: 'namespace', factory: namespaceControllerFactory },
    { name: 'node-lifecycle', factory: nodeLifecycleFactory(opts) },
    { name: 'taint-eviction-controller', factory: taintEvictionFactory },
    { name: 'pod-garbage-collector', factory: podGcFactory({ ...DEFAULT_POD_GC_OPTIONS, terminatedPodGcThreshold: opts.terminatedPodGcThreshold }) },
    { name: 'serviceaccount', factory: serviceAccountFactory },
  ];
}
