// apps/v1 Deployment and ReplicaSet: status through /status, replicas through /scale, generation bumped on
// spec changes, the selector immutable and required to match the template's labels, the template's pod
// spec defaulted and validated as a Pod's.
import { fieldError, type FieldError } from '../../../api/field-errors.js';
import { FieldPath } from '../../../api/field-path.js';
import { formatLabelSelector, labelSelectorAsSelector, type LabelSelector } from '../../../api/label-selector.js';
import type { StoredObject } from '../../storage/interface.js';
import type { SubresourceDescriptor } from '../../resource-registry.js';
import { ageColumn, withName, type TableColumn } from '../table.js';
import { arr, child, descriptor, num, rec, setDefault, spec, status, statusSub, str, strategy } from './common.js';
import { defaultPodSpec, validatePodSpec } from './pod-spec.js';

const scaleSub: SubresourceDescriptor = { name: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] };

function defaultTemplate(o: StoredObject): void {
  const s = child(o, 'spec');
  setDefault(s, 'replicas', 1);
  setDefault(s, 'revisionHistoryLimit', 10);
  defaultPodSpec(child(child(s, 'template'), 'spec'));
}

function validateWorkload(o: StoredObject): FieldError[] {
  const s = spec(o);
  const errs: FieldError[] = [];
  const path = FieldPath.of('spec');
  const replicas = s['replicas'];
  if (typeof replicas === 'number' && replicas < 0) errs.push(fieldError.invalid(path.child('replicas'), replicas, 'must be greater than or equal to 0'));
  const sel = s['selector'] as LabelSelector | undefined;
  const tmpl = rec(s['template']);
  const labels = rec(rec(tmpl['metadata'])['labels']) as Record<string, string>;
  if (sel === undefined || sel === null) errs.push(fieldError.required(path.child('selector')));
  else {
    const parsed = labelSelectorAsSelector(sel);
    if (parsed.isEmpty()) errs.push(fieldError.invalid(path.child('selector'), formatLabelSelector(sel), 'empty selector is invalid for deployment'));
    else if (!parsed.matches(labels)) errs.push(fieldError.invalid(path.child('template', 'metadata', 'labels'), labels, '`selector` does not match template `labels`'));
  }
  errs.push(...validatePodSpec(rec(tmpl['spec']), path.child('template', 'spec')));
  const rp = rec(tmpl['spec'])['restartPolicy'];
  if (typeof rp === 'string' && rp !== 'Always') errs.push(fieldError.notSupported(path.child('template', 'spec', 'restartPolicy'), rp, ['Always']));
  return errs;
}

function validateWorkloadUpdate(o: StoredObject, old: StoredObject): FieldError[] {
  const errs = validateWorkload(o);
  if (JSON.stringify(spec(o)['selector']) !== JSON.stringify(spec(old)['selector'])) errs.push(fieldError.immutable(FieldPath.of('spec', 'selector'), spec(o)['selector']));
  return errs;
}

function containerCells(): TableColumn[] {
  const containers = (o: StoredObject): ReturnType<typeof arr> => arr(rec(rec(spec(o)['template'])['spec'])['containers']);
  return [
    { name: 'Containers', type: 'string', description: 'Names of each container in the template.', priority: 1, cell: (o) => containers(o).map((c) => str(c['name'])).join(',') },
    { name: 'Images', type: 'string', description: 'Images referenced by each container in the template.', priority: 1, cell: (o) => containers(o).map((c) => str(c['image'])).join(',') },
    { name: 'Selector', type: 'string', description: 'Label selector for pods.', priority: 1, cell: (o) => formatLabelSelector(spec(o)['selector'] as LabelSelector | undefined) },
  ];
}

export const deploymentStrategy = strategy({
  descriptor: descriptor({
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    subresources: [statusSub('apps', 'v1', 'Deployment'), scaleSub],
  }),
  hasStatus: true,
  hasGeneration: true,
  defaults(o) {
    defaultTemplate(o);
    const s = child(o, 'spec');
    setDefault(s, 'progressDeadlineSeconds', 600);
    const st = child(s, 'strategy');
    setDefault(st, 'type', 'RollingUpdate');
    if (st['type'] === 'RollingUpdate') {
      const ru = child(st, 'rollingUpdate');
      setDefault(ru, 'maxUnavailable', '25%');
      setDefault(ru, 'maxSurge', '25%');
    }
  },
  validate: validateWorkload,
  validateUpdate: validateWorkloadUpdate,
  columns: withName([
    { name: 'Ready', type: 'string', description: 'Number of the pod with ready state', priority: 0, cell: (o) => `${num(status(o)['readyReplicas'])}/${num(spec(o)['replicas'])}` },
    { name: 'Up-to-date', type: 'integer', description: 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', priority: 0, cell: (o) => num(status(o)['updatedReplicas']) },
    { name: 'Available', type: 'integer', description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', priority: 0, cell: (o) => num(status(o)['availableReplicas']) },
    ageColumn,
    ...containerCells(),
  ]),
});

export const replicaSetStrategy = strategy({
  descriptor: descriptor({
    group: 'apps',
    version: 'v1',
    resource: 'replicasets',
    kind: 'ReplicaSet',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    subresources: [statusSub('apps', 'v1', 'ReplicaSet'), scaleSub],
  }),
  hasStatus: true,
  hasGeneration: true,
  defaults(o) {
    const s = child(o, 'spec');
    setDefault(s, 'replicas', 1);
    defaultPodSpec(child(child(s, 'template'), 'spec'));
  },
  validate: validateWorkload,
  validateUpdate: validateWorkloadUpdate,
  columns: withName([
    { name: 'Desired', type: 'integer', description: 'Number of desired pods.', priority: 0, cell: (o) => num(spec(o)['replicas']) },
    { name: 'Current', type: 'integer', description: 'Number of actual replicas.', priority: 0, cell: (o) => num(status(o)['replicas']) },
    { name: 'Ready', type: 'integer', description: 'Number of ready replicas.', priority: 0, cell: (o) => num(status(o)['readyReplicas']) },
    ageColumn,
    ...containerCells(),
  ]),
});
