// The events the agent reports about a pod, in kubelet's reasons and messages (Created, Started,
// Killing, BackOff, Unhealthy, Failed, FailedMount); the glue posts them as core/v1 Events.

export interface PodEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  readonly pod: { readonly uid: string; readonly name: string; readonly namespace: string };
  /** `spec.containers{name}` or `spec.initContainers{name}` when the event is about one container. */
  readonly fieldPath?: string;
}
