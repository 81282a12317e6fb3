// kube-controller-manager's flags for the lifecycle controllers, with Kubernetes' names and defaults, for
// the controller manager's command to register beside its own (same shape as the API server's FlagSpec:
// durations are Go durations, which the command parses into milliseconds before calling
// `lifecycleOptionsFrom`). `--pod-eviction-timeout` is gone since Kubernetes 1.27 (taint-based eviction
// with tolerationSeconds replaced it), so it is not here.

export interface LifecycleFlagSpec {
  readonly name: string;
  readonly kind: 'duration' | 'int' | 'float';
  readonly default: string;
  readonly help: string;
}

export const LIFECYCLE_FLAGS: readonly LifecycleFlagSpec[] = [
  {
    name: 'node-monitor-grace-period',
    kind: 'duration',
    // 40s until Kubernetes 1.32 raised it to 50s (kubernetes/kubernetes#126287); Setpoint serves v1.32.
    default: '50s',
    help: 'how long a node may go without renewing its Lease or posting Ready before it is marked Ready=Unknown and tainted unreachable',
  },
  { name: 'node-startup-grace-period', kind: 'duration', default: '1m0s', help: 'how long a new node may go without ever posting status before it is marked Ready=Unknown' },
  { name: 'node-monitor-period', kind: 'duration', default: '5s', help: 'how often the node lifecycle controller looks at every node (a node is also looked at when its grace runs out)' },
  {
    name: 'node-eviction-rate',
    kind: 'float',
    default: '0.1',
    help: 'nodes per second that may newly get a NoExecute taint (and so have their pods evicted), burst 1, so a widespread failure does not evict everything at once',
  },
  { name: 'terminated-pod-gc-threshold', kind: 'int', default: '12500', help: 'how many terminated pods (Succeeded or Failed) may exist before the pod garbage collector deletes the oldest; 0 or less never deletes them' },
];

export interface LifecycleOptions {
  readonly nodeMonitorGracePeriodMs: number;
  readonly nodeStartupGracePeriodMs: number;
  readonly nodeMonitorPeriodMs: number;
  readonly nodeEvictionRate: number;
  readonly terminatedPodGcThreshold: number;
}

export const DEFAULT_LIFECYCLE_OPTIONS: LifecycleOptions = {
  nodeMonitorGracePeriodMs: 50_000,
  nodeStartupGracePeriodMs: 60_000,
  nodeMonitorPeriodMs: 5_000,
  nodeEvictionRate: 0.1,
  terminatedPodGcThreshold: 12_500,
};

/** The options from parsed flag values (durations in ms, rates as numbers); a flag left out keeps its default. */
export function lifecycleOptionsFrom(value: (flag: string) => number | undefined): LifecycleOptions {
  const d = DEFAULT_LIFECYCLE_OPTIONS;
  return {
    nodeMonitorGracePeriodMs: value('node-monitor-grace-period') ?? d.nodeMonitorGracePeriodMs,
    nodeStartupGracePeriodMs: value('node-startup-grace-period') ?? d.nodeStartupGracePeriodMs,
    nodeMonitorPeriodMs: value('node-monitor-period') ?? d.nodeMonitorPeriodMs,
    nodeEvictionRate: value('node-eviction-rate') ?? d.nodeEvictionRate,
    terminatedPodGcThreshold: value('terminated-pod-gc-threshold') ?? d.terminatedPodGcThreshold,
  };
}
