// The chain the API server runs, in Kubernetes' order of its default plugins: NamespaceLifecycle,
// ServiceAccount, DefaultTolerationSeconds, Priority, NodeRestriction, then MutatingAdmissionWebhook;
// validating: Priority's PriorityClass checks, NodeRestriction's, then ValidatingAdmissionWebhook. What the plugins read (namespaces,
// PriorityClasses, webhook configurations) comes from the registry's watch caches.
import type { Logger } from 'pino';
import type { StoredObject } from '../storage/interface.js';
import { Chain } from './admission-chain.js';
import { defaultTolerationSeconds } from './default-toleration-seconds.js';
import { namespaceLifecyclePlugin } from './namespace-lifecycle.js';
import { nodeRestrictionPlugin } from './node-restriction.js';
import { priorityPlugin } from './priority.js';
import { serviceAccountPlugin } from './service-account.js';
import type { WebhookClient } from './webhook-client.js';
import { WebhookSource } from './webhook-config.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';

/** What admission reads from the registry: cached lists, and cluster-scoped objects (cache first, then the store). */
export interface AdmissionReads {
  cachedList(group: string, resource: string): Promise<readonly StoredObject[]>;
  get(group: string, resource: string, name: string): Promise<StoredObject | undefined>;
}

export interface AdmissionOptions {
  /** --default-not-ready-toleration-seconds (300). */
  readonly notReadyTolerationSeconds?: number;
  /** --default-unreachable-toleration-seconds (300). */
  readonly unreachableTolerationSeconds?: number;
  readonly webhookClient?: WebhookClient;
}

export const DEFAULT_TOLERATION_SECONDS_VALUE = 300;

const ADMISSIONREGISTRATION = 'admissionregistration.k8s.io';

export function defaultAdmissionChain(reads: AdmissionReads, opts: AdmissionOptions, log: Logger): Chain {
  const priorityClasses = {
    list: () => reads.cachedList('scheduling.k8s.io', 'priorityclasses'),
    get: (name: string) => reads.get('scheduling.k8s.io', 'priorityclasses', name),
  };
  const getNamespace = (name: string): Promise<StoredObject | undefined> => reads.get('', 'namespaces', name);
  const webhooks = new WebhookDispatcher({
    mutating: new WebhookSource(() => reads.cachedList(ADMISSIONREGISTRATION, 'mutatingwebhookconfigurations'), true),
    validating: new WebhookSource(() => reads.cachedList(ADMISSIONREGISTRATION, 'validatingwebhookconfigurations'), false),
    namespaceLabels: async (name) => {
      const ns = await getNamespace(name);
      if (ns === undefined) return undefined;
      const l = ns.metadata['labels'];
      return typeof l === 'object' && l !== null ? (l as Record<string, string>) : {};
    },
    ...(opts.webhookClient !== undefined ? { client: opts.webhookClient } : {}),
    log,
  });
  return new Chain(
    [
      namespaceLifecyclePlugin({ getNamespace }),
      serviceAccountPlugin(),
      defaultTolerationSeconds({
        notReadySeconds: opts.notReadyTolerationSeconds ?? DEFAULT_TOLERATION_SECONDS_VALUE,
        unreachableSeconds: opts.unreachableTolerationSeconds ?? DEFAULT_TOLERATION_SECONDS_VALUE,
      }),
      priorityPlugin(priorityClasses),
      nodeRestrictionPlugin(),
    ],
    webhooks,
  );
}
