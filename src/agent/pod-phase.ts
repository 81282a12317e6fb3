// A pod's phase and conditions from its container statuses, by kubelet's rules (getPhase and the status
// manager's condition generators): a container waiting after a termination counts as stopped, not
// waiting; a failed init container fails the pod only under restartPolicy Never; Ready follows
// ContainersReady (no readiness gates here). Transition times move only when a status changes.
import type { ContainerStatus, PodCondition, PodPhase, PodSpec } from './pod-types.js';

export function podPhase(spec: PodSpec, init: readonly ContainerStatus[], main: readonly ContainerStatus[]): PodPhase {
  const policy = spec.restartPolicy ?? 'Always';
  let pendingInit = 0;
  let failedInit = 0;
  for (const c of spec.initContainers ?? []) {
    const s = init.find((x) => x.name === c.name);
    if (!s) {
      pendingInit++;
      continue;
    }
    if (s.state.running) pendingInit++;
    else if (s.state.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated && s.lastState.terminated.exitCode !== 0) failedInit++;
      else pendingInit++;
    }
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  if (failedInit > 0) return 'Pending'; // the init container is being restarted
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of spec.containers) {
    const s = main.find((x) => x.name === c.name);
    if (!s) {
      unknown++;
      continue;
    }
    if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }
  if (pendingInit > 0 || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function cond(type: string, ok: boolean, reason?: string, message?: string): PodCondition {
  const c: PodCondition = { type, status: ok ? 'True' : 'False' };
  if (reason !== undefined) c.reason = reason;
  if (message !== undefined) c.message = message;
  return c;
}

export function podConditions(
  spec: PodSpec,
  phase: PodPhase,
  init: readonly ContainerStatus[],
  main: readonly ContainerStatus[],
  previous: readonly PodCondition[],
  now: string,
): PodCondition[] {
  const incomplete = (spec.initContainers ?? [])
    .filter((c) => {
      const s = init.find((x) => x.name === c.name);
      return !(s?.state.terminated && s.state.terminated.exitCode === 0);
    })
    .map((c) => c.name);
  const initialized =
    incomplete.length === 0 || phase === 'Succeeded'
      ? cond('Initialized', true, phase === 'Succeeded' && (spec.initContainers?.length ?? 0) > 0 ? 'PodCompleted' : undefined)
      : cond('Initialized', false, 'ContainersNotInitialized', `containers with incomplete status: [${incomplete.join(' ')}]`);

  const unknown = spec.containers.filter((c) => !main.some((s) => s.name === c.name)).map((c) => c.name);
  const unready = spec.containers.filter((c) => !main.find((s) => s.name === c.name)?.ready).map((c) => c.name);
  let ready: PodCondition;
  if (phase === 'Succeeded' && unknown.length === 0) ready = cond('ContainersReady', false, 'PodCompleted');
  else if (unknown.length > 0) ready = cond('ContainersReady', false, 'ContainersNotReady', `containers with unknown status: [${unknown.join(' ')}]`);
  else if (unready.length > 0) ready = cond('ContainersReady', false, 'ContainersNotReady', `containers with unready status: [${unready.join(' ')}]`);
  else ready = cond('ContainersReady', true);
  const podReady: PodCondition = { ...ready, type: 'Ready' };

  const scheduled = previous.find((c) => c.type === 'PodScheduled') ?? cond('PodScheduled', true);
  const out = [initialized, ready, podReady];
  const result: PodCondition[] = [];
  for (const c of out) {
    const before = previous.find((p) => p.type === c.type);
    const lastTransitionTime = before && before.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : now;
    result.push({ ...c, lastProbeTime: null, lastTransitionTime });
  }
  result.push({ ...scheduled, lastProbeTime: scheduled.lastProbeTime ?? null, lastTransitionTime: scheduled.lastTransitionTime ?? now });
  // Kubernetes' order: PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled.
  const order = ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];
  return result.sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
}
