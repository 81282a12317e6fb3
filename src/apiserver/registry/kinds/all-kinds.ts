// The kinds the API server serves, in discovery order (core first, then groups as Kubernetes lists them).
import type { Strategy } from '../strategy.js';
import { mutatingWebhookStrategy, priorityClassStrategy, validatingWebhookStrategy } from './cluster-config.js';
import { configMapStrategy, secretStrategy, serviceAccountStrategy } from './config-map.js';
import { eventStrategy } from './event.js';
import { eventsV1Strategy } from './events-v1.js';
import { leaseStrategy } from './lease.js';
import { namespaceStrategy } from './namespace.js';
import { nodeStrategy } from './node.js';
import { podStrategy } from './pod.js';
import { deploymentStrategy, replicaSetStrategy } from './workload.js';

export const ALL_STRATEGIES: readonly Strategy[] = [
  configMapStrategy,
  eventStrategy,
  namespaceStrategy,
  nodeStrategy,
  podStrategy,
  secretStrategy,
  serviceAccountStrategy,
  deploymentStrategy,
  replicaSetStrategy,
  eventsV1Strategy,
  mutatingWebhookStrategy,
  validatingWebhookStrategy,
  leaseStrategy,
  priorityClassStrategy,
];
