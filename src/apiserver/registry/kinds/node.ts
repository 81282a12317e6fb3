// core/v1 Node: cluster-scoped, status through /status (the agent's heartbeats), the columns of `kubectl
// get nodes`.
import type { StoredObject } from '../../storage/interface.js';
import { ageColumn, withName } from '../table.js';
import { arr, descriptor, rec, spec, status, statusSub, str, strategy } from './common.js';

function readiness(o: StoredObject): string {
  const ready = arr(status(o)['conditions']).find((c) => c['type'] === 'Ready');
  // As kubectl prints it: any Ready but True (False, or Unknown for a silent node) is NotReady.
  let s = ready === undefined ? 'Unknown' : ready['status'] === 'True' ? 'Ready' : 'NotReady';
  if (spec(o)['unschedulable'] === true) s += ',SchedulingDisabled';
  return s;
}

function roles(o: StoredObject): string {
  const r = Object.keys(rec(o.metadata['labels']))
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter((k) => k !== '');
  return r.length === 0 ? '<none>' : r.sort().join(',');
}

function address(o: StoredObject, type: string): string {
  return str(arr(status(o)['addresses']).find((a) => a['type'] === type)?.['address']) || '<none>';
}

const info = (o: StoredObject, k: string): string => str(rec(status(o)['nodeInfo'])[k]) || '<unknown>';

export const nodeStrategy = strategy({
  descriptor: descriptor({ group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'], subresources: [statusSub('', 'v1', 'Node')] }),
  hasStatus: true,
  returnDeletedObject: true,
  selectableFields: (o) => ({ 'spec.unschedulable': String(spec(o)['unschedulable'] === true) }),
  columns: withName([
    { name: 'Status', type: 'string', description: 'The status of the node', priority: 0, cell: readiness },
    { name: 'Roles', type: 'string', description: 'The roles of the node', priority: 0, cell: roles },
    ageColumn,
    { name: 'Version', type: 'string', description: 'Kubelet Version reported by the node.', priority: 0, cell: (o) => str(rec(status(o)['nodeInfo'])['kubeletVersion']) },
    { name: 'Internal-IP', type: 'string', description: 'List of addresses reachable to the node.', priority: 1, cell: (o) => address(o, 'InternalIP') },
    { name: 'External-IP', type: 'string', description: 'List of addresses reachable to the node.', priority: 1, cell: (o) => address(o, 'ExternalIP') },
    { name: 'OS-Image', type: 'string', description: 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', priority: 1, cell: (o) => info(o, 'osImage') },
    { name: 'Kernel-Version', type: 'string', description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", priority: 1, cell: (o) => info(o, 'kernelVersion') },
    { name: 'Container-Runtime', type: 'string', description: 'Container runtime version reported by the node through runtime remote API (e.g. containerd://1.4.2).', priority: 1, cell: (o) => info(o, 'containerRuntimeVersion') },
  ]),
});
