// Every controller the manager can run, by Kubernetes' name for it (what `--controllers` takes). Keep it
// a plain list: each entry is one controller's factory, added by whoever writes the controller.
import type { ControllerFactory } from './controller.js';
import { newDeploymentController, DEPLOYMENT_CONTROLLER } from './deployment/deployment-controller.js';
import { newReplicaSetController, REPLICASET_CONTROLLER } from './replicaset/replica-set-controller.js';

export interface ControllerEntry {
  readonly name: string;
  readonly factory: ControllerFactory;
  /** Started by `*` (Kubernetes has a few controllers that are off unless named). Default true. */
  readonly enabledByDefault?: boolean;
}

export const ALL_CONTROLLERS: readonly ControllerEntry[] = [
  { name: REPLICASET_CONTROLLER, factory: newReplicaSetController },
  { name: DEPLOYMENT_CONTROLLER, factory: newDeploymentController },
];
