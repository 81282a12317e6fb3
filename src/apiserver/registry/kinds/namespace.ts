// core/v1 Namespace: cluster-scoped, named as a DNS label, status through /status, spec.finalizers through
// /finalize. A new namespace is Active with the `kubernetes` finalizer and its name label; deleting it turns
// it Terminating with a deletionTimestamp, and it stays until the namespace controller has emptied it and
// cleared spec.finalizers (then a delete removes it).
import { nameIsDNSLabel } from '../../../api/name-validation.js';
import { ageColumn, withName } from '../table.js';
import { child, descriptor, spec, status, statusSub, str, strategy } from './common.js';

export const namespaceStrategy = strategy({
  descriptor: descriptor({
    group: '',
    version: 'v1',
    resource: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    subresources: [statusSub('', 'v1', 'Namespace'), { name: 'finalize', kind: { group: '', version: 'v1', kind: 'Namespace' }, verbs: ['update'] }],
  }),
  nameRule: nameIsDNSLabel,
  hasStatus: true,
  returnDeletedObject: true,
  prepareForCreate(o) {
    o['status'] = { phase: 'Active' };
    const s = child(o, 'spec');
    s['finalizers'] = ['kubernetes'];
  },
  prepareForUpdate(o, old, subresource) {
    // spec.finalizers move only through /finalize.
    if (subresource === 'finalize') return;
    const s = child(o, 'spec');
    const was = spec(old)['finalizers'];
    if (was === undefined) delete s['finalizers'];
    else s['finalizers'] = was;
  },
  defaults(o) {
    const labels = child(o.metadata, 'labels');
    labels['kubernetes.io/metadata.name'] = o.metadata.name ?? '';
  },
  selectableFields(o) {
    return { 'status.phase': str(status(o)['phase']) };
  },
  // A Terminating namespace stays until /finalize empties spec.finalizers (a status write must not end it).
  holdsDeletion(o) {
    const fin = spec(o)['finalizers'];
    return Array.isArray(fin) && fin.length > 0;
  },
  gracefulDelete(o) {
    const fin = spec(o)['finalizers'];
    if (!Array.isArray(fin) || fin.length === 0) return undefined;
    o['status'] = { ...status(o), phase: 'Terminating' };
    return o;
  },
  columns: withName([{ name: 'Status', type: 'string', description: 'The status of the namespace', priority: 0, cell: (o) => str(status(o)['phase']) }, ageColumn]),
});
