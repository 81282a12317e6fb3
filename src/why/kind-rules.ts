// Per kind, what "converged" means and which recorded facts say why not: a Deployment's Progressing,
// Available and ReplicaFailure conditions and replica counts, a ReplicaSet's ReplicaFailure (where webhook
// denials surface), a Pod's PodScheduled (the scheduler's FitError) and container states, a Node's Ready
// and its heartbeat, a Namespace's deletion conditions while it is Terminating, and for any other kind the kstatus conditions (Ready, Available, Stalled, Reconciling).
import type { KubeObject } from '../client/kube-object.js';
import { arr, condition, conditionLine, conditionsOf, int, obj, text, type Condition } from './object-fields.js';
import type { Finding, Severity } from './why-types.js';

export interface KindVerdict {
  readonly converged: boolean;
  readonly state: string;
  readonly findings: Finding[];
}

/** Kubernetes' node-monitor-grace-period: a Ready condition not renewed for this long is stale. */
export const NODE_HEARTBEAT_GRACE_MS = 40_000;

function fromCondition(c: Condition, severity: Severity, who?: string): Finding {
  const time = c.lastTransitionTime !== '' ? c.lastTransitionTime : c.lastUpdateTime;
  return {
    severity,
    source: 'condition',
    summary: conditionLine(c),
    evidence: { ...(time !== '' ? { time } : {}), ...(who !== undefined ? { who } : {}), reason: c.reason, message: c.message },
  };
}

function staleness(o: KubeObject, controller: string): Finding | undefined {
  const gen = int(o.metadata?.generation);
  const status = obj(o.status);
  const observed = int(status.observedGeneration);
  if (gen === undefined) return undefined;
  if (observed === undefined) {
    return {
      severity: 'warning',
      source: 'stale',
      summary: `no status recorded yet: the ${controller} has not processed this object (is it running?)`,
      evidence: { ...(o.metadata?.creationTimestamp !== undefined ? { time: o.metadata.creationTimestamp } : {}), who: controller },
    };
  }
  if (observed >= gen) return undefined;
  return {
    severity: 'warning',
    source: 'stale',
    summary: `status is stale: observedGeneration ${observed} < generation ${gen}: the ${controller} has not acted on the latest spec change`,
    evidence: { who: controller },
  };
}

function deployment(o: KubeObject): KindVerdict {
  const spec = obj(o.spec);
  const st = obj(o.status);
  const desired = int(spec.replicas) ?? 1;
  const available = int(st.availableReplicas) ?? 0;
  const updated = int(st.updatedReplicas) ?? 0;
  const total = int(st.replicas) ?? 0;
  const findings: Finding[] = [];
  const stale = staleness(o, 'deployment controller');
  if (stale) findings.push(stale);
  const progressing = condition(o, 'Progressing');
  if (progressing?.status === 'False') findings.push(fromCondition(progressing, 'error', 'deployment-controller'));
  const failure = condition(o, 'ReplicaFailure');
  if (failure?.status === 'True') findings.push(fromCondition(failure, 'error', 'deployment-controller'));
  const avail = condition(o, 'Available');
  if (avail?.status === 'False') findings.push(fromCondition(avail, 'warning', 'deployment-controller'));
  if (spec.paused === true) findings.push({ severity: 'warning', source: 'status', summary: 'the rollout is paused (spec.paused): the controller will not roll out template changes', evidence: {} });
  const converged = stale === undefined && updated === desired && available === desired && total === desired;
  return { converged, state: `${available}/${desired} available, ${updated} updated, ${total} total`, findings };
}

function replicaSet(o: KubeObject): KindVerdict {
  const desired = int(obj(o.spec).replicas) ?? 1;
  const st = obj(o.status);
  const ready = int(st.readyReplicas) ?? 0;
  const total = int(st.replicas) ?? 0;
  const findings: Finding[] = [];
  const stale = staleness(o, 'replicaset controller');
  if (stale) findings.push(stale);
  const failure = condition(o, 'ReplicaFailure');
  if (failure?.status === 'True') findings.push(fromCondition(failure, 'error', 'replicaset-controller'));
  return { converged: stale === undefined && ready === desired && total === desired, state: `${ready}/${desired} ready, ${total} created`, findings };
}

const BAD_WAITING = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'CreateContainerConfigError', 'CreateContainerError', 'InvalidImageName', 'RunContainerError']);

function pod(o: KubeObject): KindVerdict {
  const st = obj(o.status);
  const phase = text(st.phase) === '' ? 'Pending' : text(st.phase);
  const findings: Finding[] = [];
  const sched = condition(o, 'PodScheduled');
  if (sched?.status === 'False') findings.push(fromCondition(sched, 'error', 'default-scheduler'));
  else if (sched === undefined && text(obj(o.spec).nodeName) === '' && phase === 'Pending') {
    findings.push({ severity: 'warning', source: 'status', summary: 'not scheduled and no PodScheduled condition: the scheduler has not tried this pod yet (is it running, is spec.schedulerName right?)', evidence: { who: text(obj(o.spec).schedulerName) || 'default-scheduler' } });
  }
  const statuses = [...arr(st.initContainerStatuses), ...arr(st.containerStatuses)];
  for (const cs of statuses) {
    const name = text(cs.name);
    const waiting = obj(obj(cs.state).waiting);
    const reason = text(waiting.reason);
    const last = obj(obj(cs.lastState).terminated);
    const restarts = int(cs.restartCount) ?? 0;
    if (reason !== '' && (BAD_WAITING.has(reason) || restarts > 0)) {
      const exit = last.exitCode !== undefined ? `; last exit code ${text(last.exitCode)}${text(last.reason) !== '' ? ` (${text(last.reason)})` : ''}` : '';
      findings.push({
        severity: 'error',
        source: 'status',
        summary: `container ${name} is waiting: ${reason}${text(waiting.message) !== '' ? `: ${text(waiting.message)}` : ''}${exit}, ${restarts} restarts`,
        evidence: { reason, message: text(waiting.message), ...(text(last.finishedAt) !== '' ? { time: text(last.finishedAt) } : {}), who: text(obj(o.spec).nodeName) || 'agent' },
      });
    }
    const term = obj(obj(cs.state).terminated);
    if (term.exitCode !== undefined && int(term.exitCode) !== 0 && phase !== 'Succeeded') {
      findings.push({ severity: 'error', source: 'status', summary: `container ${name} exited with code ${text(term.exitCode)}${text(term.reason) !== '' ? ` (${text(term.reason)})` : ''}`, evidence: { time: text(term.finishedAt), reason: text(term.reason), message: text(term.message) } });
    }
  }
  const ready = condition(o, 'Ready');
  if (ready?.status === 'False' && sched?.status !== 'False' && findings.length === 0) findings.push(fromCondition(ready, 'warning'));
  if (o.metadata?.deletionTimestamp !== undefined) {
    const fin = o.metadata.finalizers ?? [];
    findings.push({ severity: 'warning', source: 'status', summary: `being deleted since ${o.metadata.deletionTimestamp}${fin.length > 0 ? `, held by finalizers ${fin.join(', ')}` : ', waiting for its node to stop it'}`, evidence: { time: o.metadata.deletionTimestamp } });
  }
  const converged = phase === 'Succeeded' || (phase === 'Running' && ready?.status === 'True');
  const cs = arr(st.containerStatuses);
  const readyCount = cs.filter((c) => c.ready === true).length;
  const containers = arr(obj(o.spec).containers).length;
  return { converged, state: `${phase}, ${readyCount}/${containers} containers ready`, findings };
}

/** A node's liveness: the newest of its Ready heartbeat and its Lease's renewTime (the agent renews both). */
function node(o: KubeObject, now: number, leaseRenewTime: string | undefined): KindVerdict {
  const findings: Finding[] = [];
  const ready = condition(o, 'Ready');
  let converged = ready?.status === 'True';
  if (ready === undefined) findings.push({ severity: 'error', source: 'status', summary: 'no Ready condition: the node agent has never reported', evidence: {} });
  else if (ready.status !== 'True') findings.push(fromCondition(ready, 'error', 'node agent'));
  else {
    const beats = [ready.lastHeartbeatTime, leaseRenewTime ?? ''].map((t) => Date.parse(t)).filter((t) => !Number.isNaN(t));
    const last = beats.length > 0 ? Math.max(...beats) : undefined;
    if (last !== undefined && now - last > NODE_HEARTBEAT_GRACE_MS) {
      converged = false;
      const what = leaseRenewTime !== undefined ? 'Ready=True is stale: neither the condition nor the node Lease renewed' : 'Ready=True is stale: not renewed';
      findings.push({ severity: 'error', source: 'stale', summary: `${what} for ${Math.round((now - last) / 1000)}s (grace ${NODE_HEARTBEAT_GRACE_MS / 1000}s): the node agent stopped reporting`, evidence: { time: new Date(last).toISOString(), who: 'node agent' } });
    }
  }
  for (const c of conditionsOf(o)) if (c.type !== 'Ready' && c.status === 'True') findings.push(fromCondition(c, 'warning', 'node agent'));
  if (obj(o.spec).unschedulable === true) findings.push({ severity: 'warning', source: 'status', summary: 'cordoned (spec.unschedulable): no new pods are placed here', evidence: {} });
  return { converged, state: ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : `NotReady (${ready.status})`, findings };
}

/** The namespace controller's deletion conditions that say what holds a Terminating namespace. */
const NAMESPACE_DELETION_TROUBLE = new Set(['NamespaceDeletionDiscoveryFailure', 'NamespaceDeletionGroupVersionParsingFailure', 'NamespaceDeletionContentFailure', 'NamespaceContentRemaining', 'NamespaceFinalizersRemaining']);

/** A Namespace converges to Active; a Terminating one is explained by the conditions the namespace controller sets. */
function namespace(o: KubeObject): KindVerdict {
  const phase = text(obj(o.status).phase) || 'Active';
  const deleting = o.metadata?.deletionTimestamp;
  if (phase !== 'Terminating' && deleting === undefined) return { converged: true, state: phase, findings: [] };
  const findings: Finding[] = [];
  for (const c of conditionsOf(o)) {
    if (NAMESPACE_DELETION_TROUBLE.has(c.type) && c.status === 'True') findings.push(fromCondition(c, c.type.endsWith('Failure') ? 'error' : 'warning', 'namespace-controller'));
  }
  const specFin = obj(o.spec).finalizers;
  const fin = Array.isArray(specFin) ? specFin.map(text) : [];
  if (findings.length === 0 && fin.length > 0) findings.push({ severity: 'warning', source: 'status', summary: `Terminating, held by finalizers ${fin.join(', ')}`, evidence: deleting !== undefined ? { time: deleting } : {} });
  return { converged: false, state: `Terminating${deleting !== undefined ? ` since ${deleting}` : ''}`, findings };
}

function generic(o: KubeObject): KindVerdict {
  const findings: Finding[] = [];
  let converged = true;
  for (const c of conditionsOf(o)) {
    const bad = ((c.type === 'Ready' || c.type === 'Available') && c.status !== 'True') || ((c.type === 'Stalled' || c.type === 'Reconciling') && c.status === 'True');
    if (bad) {
      converged = false;
      findings.push(fromCondition(c, c.type === 'Reconciling' ? 'warning' : 'error'));
    }
  }
  const stale = staleness({ ...o, status: { observedGeneration: 0, ...obj(o.status) } }, 'controller');
  if (stale && obj(o.status).observedGeneration !== undefined) {
    converged = false;
    findings.push(stale);
  }
  // An object being deleted has not converged until it is gone (a foreground deletion waits on its dependents).
  const deleting = o.metadata?.deletionTimestamp;
  if (deleting !== undefined) {
    const fin = o.metadata?.finalizers ?? [];
    findings.push({ severity: 'warning', source: 'status', summary: `being deleted since ${deleting}${fin.length > 0 ? `, held by finalizers ${fin.join(', ')}` : ''}`, evidence: { time: deleting } });
    return { converged: false, state: 'being deleted', findings };
  }
  return { converged, state: converged ? 'no failing condition' : 'not ready', findings };
}

export interface JudgeContext {
  readonly now: number;
  /** For a Node: its Lease's spec.renewTime in kube-node-lease, when there is one. */
  readonly leaseRenewTime?: string;
}

export function judge(kind: string, o: KubeObject, c: JudgeContext): KindVerdict {
  const now = c.now;
  switch (kind) {
    case 'Deployment':
      return deployment(o);
    case 'ReplicaSet':
      return replicaSet(o);
    case 'Pod':
      return pod(o);
    case 'Node':
      return node(o, now, c.leaseRenewTime);
    case 'Namespace':
      return namespace(o);
    default:
      return generic(o);
  }
}
