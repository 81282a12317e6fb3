// core/v1 Pod: status through /status, the scheduler's /binding, /eviction, /log (served by the agent's
// proxy later). Defaults as Kubernetes' (restartPolicy, dnsPolicy, grace 30 s, default-scheduler, pull
// policy, termination message fields); the spec is immutable but for images, activeDeadlineSeconds and
// added tolerations; a pod on a node is deleted gracefully (deletionTimestamp, until its agent deletes it
// with grace 0).
import { fieldError } from '../../../api/field-errors.js';
import { FieldPath } from '../../../api/field-path.js';
import type { StoredObject } from '../../storage/interface.js';
import { withName, ageColumn, type TableColumn } from '../table.js';
import { deepCopy } from '../strategy.js';
import { arr, child, descriptor, num, rec, spec, status, statusSub, str, strategy, type Obj } from './common.js';
import { defaultPodSpec, validatePodSpec } from './pod-spec.js';

function qosClass(s: Obj): string {
  const cs = [...arr(s['containers']), ...arr(s['initContainers'])];
  let any = false;
  let guaranteed = true;
  for (const c of cs) {
    const r = rec(c['resources']);
    const req = rec(r['requests']);
    const lim = rec(r['limits']);
    if (Object.keys(req).length > 0 || Object.keys(lim).length > 0) any = true;
    for (const res of ['cpu', 'memory']) {
      if (lim[res] === undefined || (req[res] !== undefined && req[res] !== lim[res])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function readyCell(o: StoredObject): string {
  const cs = arr(spec(o)['containers']);
  const st = arr(status(o)['containerStatuses']);
  return `${st.filter((c) => c['ready'] === true).length}/${cs.length}`;
}

function restartsCell(o: StoredObject): number {
  return arr(status(o)['containerStatuses']).reduce((n, c) => n + num(c['restartCount']), 0);
}

/** What kubectl's STATUS column says: the phase, a container's waiting or terminated reason, Terminating. */
function statusCell(o: StoredObject): string {
  const st = status(o);
  let reason = str(st['reason']) || str(st['phase']);
  for (const c of arr(st['containerStatuses'])) {
    const state = rec(c['state']);
    const waiting = rec(state['waiting']);
    const term = rec(state['terminated']);
    if (str(waiting['reason']) !== '') reason = str(waiting['reason']);
    else if (str(term['reason']) !== '') reason = str(term['reason']);
    else if (state['terminated'] !== undefined) reason = num(term['signal']) !== 0 ? `Signal:${num(term['signal'])}` : `ExitCode:${num(term['exitCode'])}`;
  }
  if (o.metadata['deletionTimestamp'] && str(st['reason']) !== 'NodeLost') reason = 'Terminating';
  return reason;
}

const columns: readonly TableColumn[] = withName([
  { name: 'Ready', type: 'string', description: 'The aggregate readiness state of this pod for accepting traffic.', priority: 0, cell: readyCell },
  { name: 'Status', type: 'string', description: 'The aggregate status of the containers in this pod.', priority: 0, cell: statusCell },
  { name: 'Restarts', type: 'string', description: 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.', priority: 0, cell: (o) => String(restartsCell(o)) },
  ageColumn,
  { name: 'IP', type: 'string', description: 'The IP address assigned to this pod.', priority: 1, cell: (o) => str(status(o)['podIP']) || '<none>' },
  { name: 'Node', type: 'string', description: 'The node this pod is scheduled on.', priority: 1, cell: (o) => str(spec(o)['nodeName']) || '<none>' },
  { name: 'Nominated Node', type: 'string', description: 'The node the scheduler nominated for this pod.', priority: 1, cell: (o) => str(status(o)['nominatedNodeName']) || '<none>' },
  {
    name: 'Readiness Gates',
    type: 'string',
    description: 'The readiness gates of this pod, and how many of them are met.',
    priority: 1,
    cell: (o) => {
      const gates = arr(spec(o)['readinessGates']);
      if (gates.length === 0) return '<none>';
      const conds = arr(status(o)['conditions']);
      const met = gates.filter((g) => conds.some((c) => c['type'] === g['conditionType'] && c['status'] === 'True')).length;
      return `${met}/${gates.length}`;
    },
  },
]);

const UPDATABLE = 'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** The spec with what an update may change blanked out, to compare old and new. */
function frozen(s: Obj, old: Obj): string {
  const c = deepCopy(s);
  for (const k of ['containers', 'initContainers']) {
    const oc = arr(old[k]);
    arr(c[k]).forEach((x, i) => {
      x['image'] = str(oc[i]?.['image']);
    });
  }
  delete c['activeDeadlineSeconds'];
  // Tolerations may only grow: the old ones must still be there, in order.
  const ot = arr(old['tolerations']);
  const nt = arr(c['tolerations']);
  if (ot.every((t, i) => JSON.stringify(t) === JSON.stringify(nt[i]))) delete c['tolerations'];
  else c['tolerations'] = ['changed'];
  return JSON.stringify(c);
}

function frozenOld(old: Obj): string {
  const c = deepCopy(old);
  delete c['activeDeadlineSeconds'];
  delete c['tolerations'];
  return JSON.stringify(c);
}

export const podStrategy = strategy({
  descriptor: descriptor({
    group: '',
    version: 'v1',
    resource: 'pods',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    subresources: [
      statusSub('', 'v1', 'Pod'),
      { name: 'binding', kind: { group: '', version: 'v1', kind: 'Binding' }, verbs: ['create'] },
      { name: 'eviction', kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, verbs: ['create'] },
      { name: 'log', kind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get'] },
    ],
  }),
  hasStatus: true,
  returnDeletedObject: true,
  defaults(o) {
    defaultPodSpec(child(o, 'spec'));
  },
  prepareForCreate(o) {
    o['status'] = { phase: 'Pending', qosClass: qosClass(spec(o)) };
  },
  validate(o) {
    return validatePodSpec(spec(o), FieldPath.of('spec'));
  },
  validateUpdate(o, old) {
    const errs = validatePodSpec(spec(o), FieldPath.of('spec'));
    const s = spec(o);
    const os = spec(old);
    const oldNode = str(os['nodeName']);
    const nodeChanged = oldNode !== '' && str(s['nodeName']) !== oldNode;
    const mod = { ...s, nodeName: oldNode === '' ? s['nodeName'] : oldNode };
    if (nodeChanged || frozen(mod, os) !== frozenOld(os)) errs.push(fieldError.forbidden(FieldPath.of('spec'), UPDATABLE));
    return errs;
  },
  selectableFields(o) {
    const s = spec(o);
    const st = status(o);
    return {
      'spec.nodeName': str(s['nodeName']),
      'spec.restartPolicy': str(s['restartPolicy']),
      'spec.schedulerName': str(s['schedulerName']),
      'spec.serviceAccountName': str(s['serviceAccountName']),
      'spec.hostNetwork': String(s['hostNetwork'] === true),
      'status.phase': str(st['phase']),
      'status.podIP': str(st['podIP']),
      'status.nominatedNodeName': str(st['nominatedNodeName']),
    };
  },
  gracefulDelete(o, grace, now) {
    const s = spec(o);
    const phase = str(status(o)['phase']);
    let g = grace ?? (typeof s['terminationGracePeriodSeconds'] === 'number' ? s['terminationGracePeriodSeconds'] : 30);
    // Not on a node, or finished: nothing will stop it, so it goes at once (Kubernetes' rule).
    if (str(s['nodeName']) === '' || phase === 'Succeeded' || phase === 'Failed') g = 0;
    if (g <= 0) return undefined;
    const prev = o.metadata['deletionGracePeriodSeconds'];
    if (typeof prev === 'number' && prev <= g) return o;
    const at = new Date(Date.parse(now) + g * 1000).toISOString().replace('.000Z', 'Z');
    o.metadata['deletionTimestamp'] = at;
    o.metadata['deletionGracePeriodSeconds'] = g;
    return o;
  },
  columns,
});
