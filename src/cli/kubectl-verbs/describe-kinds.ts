// kubectl describe's layout for the kinds operators debug most: pods, deployments, replica sets and nodes
// (what each prints, in kubectl's order and words). Related objects (a deployment's replica sets, a replica
// set's pods, a node's pods) come in through `related`, fetched by the verb.
import { humanAge } from '../../apiserver/registry/table.js';
import type { KubeObject } from '../../client/kube-object.js';
import type {
  DescribeWriter} from './describe-writer.js';
import {
  asArr,
  asObj,
  conditions,
  containers,
  controlledBy,
  labelsAndAnnotations,
  nodeSelector,
  num,
  podTemplate,
  rfc1123,
  str,
  tolerationLines,
  volumes,
  type Obj,
} from './describe-writer.js';

export interface Related {
  /** Deployment: its replica sets; ReplicaSet: its pods; Node: the pods on it. */
  readonly objects: readonly KubeObject[];
}

function qosClass(spec: Obj): string {
  const cs = asArr(spec.containers);
  let any = false;
  let guaranteed = cs.length > 0;
  for (const c of cs) {
    const r = asObj(c.resources);
    const req = asObj(r.requests);
    const lim = asObj(r.limits);
    if (Object.keys(req).length > 0 || Object.keys(lim).length > 0) any = true;
    for (const k of ['cpu', 'memory']) {
      const l = lim[k];
      const q = req[k] ?? l;
      if (l === undefined || q !== l) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export function describePod(w: DescribeWriter, o: KubeObject): void {
  const meta = asObj(o.metadata);
  const spec = asObj(o.spec);
  const status = asObj(o.status);
  w.line(0, `Name:\t${str(meta.name)}`);
  w.line(0, `Namespace:\t${str(meta.namespace)}`);
  if (typeof spec.priority === 'number') w.line(0, `Priority:\t${spec.priority}`);
  if (str(spec.priorityClassName) !== '') w.line(0, `Priority Class Name:\t${str(spec.priorityClassName)}`);
  if (str(spec.serviceAccountName) !== '') w.line(0, `Service Account:\t${str(spec.serviceAccountName)}`);
  const node = str(spec.nodeName);
  w.line(0, `Node:\t${node === '' ? '<none>' : `${node}/${str(status.hostIP)}`}`);
  if (status.startTime !== undefined) w.line(0, `Start Time:\t${rfc1123(status.startTime)}`);
  labelsAndAnnotations(w, 0, meta);
  if (meta.deletionTimestamp !== undefined) {
    w.line(0, `Status:\tTerminating (lasts ${str(meta.deletionGracePeriodSeconds)}s)`);
    w.line(0, `Termination Grace Period:\t${str(meta.deletionGracePeriodSeconds)}s`);
  } else w.line(0, `Status:\t${str(status.phase, 'Pending')}`);
  if (status.reason !== undefined) w.line(0, `Reason:\t${str(status.reason)}`);
  if (status.message !== undefined) w.line(0, `Message:\t${str(status.message)}`);
  w.line(0, `IP:\t${str(status.podIP)}`);
  const ips = asArr(status.podIPs);
  if (ips.length === 0) w.line(0, 'IPs:\t<none>');
  else {
    w.line(0, 'IPs:');
    for (const ip of ips) w.line(1, `IP:\t${str(ip.ip)}`);
  }
  controlledBy(w, meta);
  if (str(status.nominatedNodeName) !== '') w.line(0, `NominatedNodeName:\t${str(status.nominatedNodeName)}`);
  containers(w, 0, 'Init Containers', spec.initContainers, status.initContainerStatuses ?? []);
  containers(w, 0, 'Containers', spec.containers, status.containerStatuses ?? []);
  // kubectl's pod conditions have no rule line, and a space after each cell.
  const conds = asArr(status.conditions);
  if (conds.length > 0) {
    w.line(0, 'Conditions:');
    w.line(1, 'Type\tStatus');
    for (const c of conds) w.line(1, `${str(c.type)} \t${str(c.status)} `);
  }
  volumes(w, 0, spec.volumes);
  w.line(0, `QoS Class:\t${str(status.qosClass, qosClass(spec))}`);
  nodeSelector(w, 0, spec.nodeSelector);
  tolerationLines(w, 0, spec.tolerations);
}

function replicaSetsLine(rss: readonly KubeObject[]): string {
  if (rss.length === 0) return '<none>';
  return rss.map((r) => `${r.metadata?.name ?? ''} (${num(asObj(r.status).replicas)}/${num(asObj(r.spec).replicas)} replicas created)`).join(', ');
}

function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, sorted(x)]));
}

function templateKey(template: unknown): string {
  const t = asObj(template);
  const meta = asObj(t.metadata);
  const { 'pod-template-hash': _hash, ...labels } = asObj(meta.labels);
  return JSON.stringify(sorted({ ...t, metadata: { ...meta, labels } }));
}

export function describeDeployment(w: DescribeWriter, o: KubeObject, related: Related): void {
  const meta = asObj(o.metadata);
  const spec = asObj(o.spec);
  const status = asObj(o.status);
  w.line(0, `Name:\t${str(meta.name)}`);
  w.line(0, `Namespace:\t${str(meta.namespace)}`);
  w.line(0, `CreationTimestamp:\t${rfc1123(meta.creationTimestamp)}`);
  labelsAndAnnotations(w, 0, meta);
  w.line(0, `Selector:\t${selectorString(spec.selector)}`);
  const desired = num(spec.replicas, 1);
  w.line(0, `Replicas:\t${desired} desired | ${num(status.updatedReplicas)} updated | ${num(status.replicas)} total | ${num(status.availableReplicas)} available | ${num(status.unavailableReplicas)} unavailable`);
  const strategy = asObj(spec.strategy);
  w.line(0, `StrategyType:\t${str(strategy.type)}`);
  w.line(0, `MinReadySeconds:\t${num(spec.minReadySeconds)}`);
  if (strategy.type === 'RollingUpdate') {
    const ru = asObj(strategy.rollingUpdate);
    w.line(0, `RollingUpdateStrategy:\t${str(ru.maxUnavailable, '25%')} max unavailable, ${str(ru.maxSurge, '25%')} max surge`);
  }
  podTemplate(w, spec.template);
  conditions(w, 0, status.conditions, ['Reason']);
  // The new replica set carries the deployment's revision; the others with pods left are the old ones.
  // The new replica set is the one whose template is the deployment's (pod-template-hash aside), as
  // kubectl's deploymentutil finds it; the others with pods left are the old ones.
  const owned = related.objects;
  const want = templateKey(spec.template);
  const isNew = (r: KubeObject): boolean => templateKey(asObj(r.spec).template) === want;
  const old = owned.filter((r) => !isNew(r) && num(asObj(r.spec).replicas) > 0);
  const current = owned.filter(isNew);
  // kubectl prints both lines only when there is a replica set to name in one of them.
  if (old.length > 0 || current.length > 0) {
    w.line(0, `OldReplicaSets:\t${replicaSetsLine(old)}`);
    w.line(0, `NewReplicaSet:\t${replicaSetsLine(current)}`);
  }
}

export function selectorString(sel: unknown): string {
  const s = asObj(sel);
  const parts = Object.entries(asObj(s.matchLabels))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${str(v)}`);
  for (const e of asArr(s.matchExpressions)) {
    const values = (Array.isArray(e.values) ? (e.values as unknown[]) : []).map((v) => str(v));
    const op = str(e.operator);
    if (op === 'Exists') parts.push(str(e.key));
    else if (op === 'DoesNotExist') parts.push(`!${str(e.key)}`);
    else parts.push(`${str(e.key)} ${op.toLowerCase()} (${values.join(',')})`);
  }
  return parts.length === 0 ? '<none>' : parts.join(',');
}

export function describeReplicaSet(w: DescribeWriter, o: KubeObject, related: Related): void {
  const meta = asObj(o.metadata);
  const spec = asObj(o.spec);
  const status = asObj(o.status);
  w.line(0, `Name:\t${str(meta.name)}`);
  w.line(0, `Namespace:\t${str(meta.namespace)}`);
  w.line(0, `Selector:\t${selectorString(spec.selector)}`);
  labelsAndAnnotations(w, 0, meta);
  controlledBy(w, meta);
  w.line(0, `Replicas:\t${num(status.replicas)} current / ${num(spec.replicas, 1)} desired`);
  const phase = (p: string): number => related.objects.filter((x) => str(asObj(x.status).phase, 'Pending') === p).length;
  w.line(0, `Pods Status:\t${phase('Running')} Running / ${phase('Pending')} Waiting / ${phase('Succeeded')} Succeeded / ${phase('Failed')} Failed`);
  podTemplate(w, spec.template);
  // kubectl writes a space after a replica set condition's type.
  conditions(w, 0, status.conditions, ['Reason'], ' ');
}

const NODE_INFO: readonly (readonly [string, string])[] = [
  ['Machine ID', 'machineID'],
  ['System UUID', 'systemUUID'],
  ['Boot ID', 'bootID'],
  ['Kernel Version', 'kernelVersion'],
  ['OS Image', 'osImage'],
  ['Operating System', 'operatingSystem'],
  ['Architecture', 'architecture'],
  ['Container Runtime Version', 'containerRuntimeVersion'],
  ['Kubelet Version', 'kubeletVersion'],
  ['Kube-Proxy Version', 'kubeProxyVersion'],
];

/** kubectl's ConfigMap layout: each key, a rule, its value. */
export function describeConfigMap(w: DescribeWriter, o: KubeObject): void {
  const meta = asObj(o.metadata);
  w.line(0, `Name:\t${str(meta.name)}`);
  w.line(0, `Namespace:\t${str(meta.namespace)}`);
  labelsAndAnnotations(w, 0, meta);
  w.line(0, '');
  w.line(0, 'Data');
  w.line(0, '====');
  for (const [k, v] of Object.entries(asObj(o.data)).sort(([a], [b]) => (a < b ? -1 : 1))) {
    w.line(0, `${k}:`);
    w.line(0, '----');
    w.line(0, str(v));
    w.line(0, '');
  }
  w.line(0, '');
  w.line(0, 'BinaryData');
  w.line(0, '====');
  for (const [k, v] of Object.entries(asObj(o.binaryData)).sort(([a], [b]) => (a < b ? -1 : 1))) w.line(0, `${k}: ${Buffer.from(str(v), 'base64').length} bytes`);
  w.line(0, '');
}

export function describeNode(w: DescribeWriter, o: KubeObject, related: Related, now: number): void {
  const meta = asObj(o.metadata);
  const spec = asObj(o.spec);
  const status = asObj(o.status);
  const labels = asObj(meta.labels);
  const roles = Object.keys(labels)
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .sort();
  w.line(0, `Name:\t${str(meta.name)}`);
  w.line(0, `Roles:\t${roles.length === 0 ? '<none>' : roles.join(',')}`);
  labelsAndAnnotations(w, 0, meta);
  w.line(0, `CreationTimestamp:\t${rfc1123(meta.creationTimestamp)}`);
  const taints = asArr(spec.taints);
  if (taints.length === 0) w.line(0, 'Taints:\t<none>');
  else taints.forEach((t, i) => w.line(0, `${i === 0 ? 'Taints:' : ''}\t${str(t.key)}${t.value !== undefined && t.value !== '' ? `=${str(t.value)}` : ''}:${str(t.effect)}`));
  w.line(0, `Unschedulable:\t${spec.unschedulable === true ? 'true' : 'false'}`);
  conditions(w, 0, status.conditions, ['LastHeartbeatTime', 'LastTransitionTime', 'Reason', 'Message']);
  w.line(0, 'Addresses:');
  for (const a of asArr(status.addresses)) w.line(1, `${str(a.type)}:\t${str(a.address)}`);
  for (const [title, list] of [['Capacity', status.capacity], ['Allocatable', status.allocatable]] as const) {
    if (Object.keys(asObj(list)).length === 0) continue;
    w.line(0, `${title}:`);
    for (const [k, v] of Object.entries(asObj(list)).sort(([a], [b]) => (a < b ? -1 : 1))) w.line(1, `${k}:\t${str(v)}`);
  }
  const info = asObj(status.nodeInfo);
  w.line(0, 'System Info:');
  for (const [title, k] of NODE_INFO) w.line(1, `${title}:\t${str(info[k])}`);
  const pods = related.objects.filter((p) => !['Succeeded', 'Failed'].includes(str(asObj(p.status).phase)));
  w.line(0, `Non-terminated Pods:\t(${pods.length} in total)`);
  w.line(1, 'Namespace\tName\tAge');
  w.line(1, '---------\t----\t---');
  for (const p of pods) w.line(1, `${p.metadata?.namespace ?? ''}\t${p.metadata?.name ?? ''}\t${humanAge(p.metadata?.creationTimestamp, now)}`);
}
