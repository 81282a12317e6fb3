// Priority: a pod's spec.priorityClassName becomes spec.priority and spec.preemptionPolicy from the
// scheduling.k8s.io/v1 PriorityClass of that name (the globalDefault class, or 0, when it names none); a
// pod may not bring its own priority that disagrees. PriorityClasses: at most one globalDefault, and the
// two system classes cannot be deleted. Messages as Kubernetes' plugin (and its storage, for the delete).
import { StatusError, statuses } from '../status.js';
import type { StoredObject } from '../storage/interface.js';
import type { AdmissionPlugin } from './admission-chain.js';
import { isPodRequest, podSpecOf } from './default-toleration-seconds.js';
import type { AdmissionAttributes } from './interface.js';

export const PRIORITY = 'Priority';

/** What the plugin reads PriorityClasses from: the API server's watch cache, never the store per request. */
export interface PriorityClassLister {
  list(): Promise<readonly StoredObject[]>;
  /** One class, asked of the store when the cache lacks it (a class made a moment before its pod). */
  get(name: string): Promise<StoredObject | undefined>;
}

/** The classes Kubernetes makes at start (scheduling.SystemPriorityClasses), value and description. */
export const SYSTEM_PRIORITY_CLASSES: readonly { readonly name: string; readonly value: number; readonly description: string }[] = [
  { name: 'system-node-critical', value: 2_000_001_000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2_000_000_000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

/** When no class is the default (scheduling.DefaultPriorityWhenNoDefaultClassExists). */
export const DEFAULT_PRIORITY = 0;
const PREEMPT_LOWER = 'PreemptLowerPriority';

export function systemPriorityClassObject(c: (typeof SYSTEM_PRIORITY_CLASSES)[number]): StoredObject {
  return {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: c.name },
    value: c.value,
    globalDefault: false,
    description: c.description,
    preemptionPolicy: PREEMPT_LOWER,
  };
}

const PODS = { group: '', resource: 'pods' };
const PRIORITY_CLASSES = { group: 'scheduling.k8s.io', resource: 'priorityclasses' };

function forbidden(attrs: AdmissionAttributes, why: string): StatusError {
  return new StatusError(statuses.forbidden({ group: attrs.resource.group, resource: attrs.resource.resource }, attrs.name, why));
}

/** The globalDefault class; after a race made two, the one of lowest value, as Kubernetes picks. */
function defaultClass(classes: readonly StoredObject[]): StoredObject | undefined {
  let best: StoredObject | undefined;
  for (const c of classes) {
    if (c['globalDefault'] !== true) continue;
    if (best === undefined || Number(best['value']) > Number(c['value'])) best = c;
  }
  return best;
}

async function admitPod(lister: PriorityClassLister, attrs: AdmissionAttributes, obj: StoredObject): Promise<void> {
  const spec = podSpecOf(obj);
  if (attrs.operation === 'UPDATE') {
    // The priority was set at create; an update that leaves it out keeps it (validation forbids changing it).
    const old = attrs.oldObject === undefined ? {} : podSpecOf(structuredClone(attrs.oldObject));
    if (spec['priority'] === undefined && old['priority'] !== undefined) spec['priority'] = old['priority'];
    if (spec['preemptionPolicy'] === undefined && old['preemptionPolicy'] !== undefined) spec['preemptionPolicy'] = old['preemptionPolicy'];
    return;
  }
  const classes = await lister.list();
  const name = typeof spec['priorityClassName'] === 'string' ? spec['priorityClassName'] : '';
  let priority = DEFAULT_PRIORITY;
  let preemption: unknown = PREEMPT_LOWER;
  if (name === '') {
    const d = defaultClass(classes);
    if (d !== undefined) {
      spec['priorityClassName'] = d.metadata.name;
      priority = Number(d['value']);
      preemption = d['preemptionPolicy'];
    }
  } else {
    const pc = classes.find((c) => c.metadata.name === name) ?? (await lister.get(name));
    // The system classes resolve even before the cache has seen them made.
    const sys = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name);
    if (pc === undefined && sys === undefined) throw forbidden(attrs, `no PriorityClass with name ${name} was found`);
    priority = pc !== undefined ? Number(pc['value']) : (sys?.value ?? DEFAULT_PRIORITY);
    preemption = pc !== undefined ? pc['preemptionPolicy'] : PREEMPT_LOWER;
  }
  const given = spec['priority'];
  if (given !== undefined && given !== null && given !== priority) {
    throw forbidden(attrs, `the integer value of priority (${String(given)}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
  }
  spec['priority'] = priority;
  if (typeof preemption === 'string' && preemption !== '') {
    const givenPolicy = spec['preemptionPolicy'];
    if (typeof givenPolicy === 'string' && givenPolicy !== '' && givenPolicy !== preemption) {
      throw forbidden(attrs, `the string value of PreemptionPolicy (${givenPolicy}) must not be provided in pod spec; priority admission controller computed ${preemption} from the given PriorityClass name`);
    }
    spec['preemptionPolicy'] = preemption;
  }
}

async function validatePriorityClass(lister: PriorityClassLister, attrs: AdmissionAttributes): Promise<void> {
  if (attrs.operation === 'DELETE') {
    if (SYSTEM_PRIORITY_CLASSES.some((c) => c.name === attrs.name)) throw forbidden(attrs, 'this is a system priority class and cannot be deleted');
    return;
  }
  if (attrs.object?.['globalDefault'] !== true) return;
  const d = defaultClass(await lister.list());
  if (d === undefined) return;
  if (attrs.operation === 'CREATE' || d.metadata.name !== attrs.name) {
    throw forbidden(attrs, `PriorityClass ${d.metadata.name ?? ''} is already marked as default. Only one default can exist`);
  }
}

function is(attrs: AdmissionAttributes, gr: { group: string; resource: string }): boolean {
  return attrs.resource.group === gr.group && attrs.resource.resource === gr.resource && attrs.subresource === '';
}

export function priorityPlugin(lister: PriorityClassLister): AdmissionPlugin {
  return {
    name: PRIORITY,
    handles: (attrs) => (isPodRequest(attrs) && (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE')) || is(attrs, PRIORITY_CLASSES),
    async admit(attrs, obj) {
      if (obj !== undefined && is(attrs, PODS)) await admitPod(lister, attrs, obj);
    },
    async validate(attrs) {
      if (is(attrs, PRIORITY_CLASSES)) await validatePriorityClass(lister, attrs);
    },
  };
}
