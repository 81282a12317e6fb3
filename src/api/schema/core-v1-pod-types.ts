// core/v1 Pod: its spec (scheduling, affinity, tolerations, topology spread, DNS, security), its status
// (conditions, container states) and the pod template controllers stamp pods from.
// Field names, types, list types, merge keys and defaults are Kubernetes' (k8s.io/api v0.32); the
// descriptions are short summaries of our own.

import { atomicList, atomicMap, bool, enumOf, field, granularMap, int32, int64, mapList, str, struct, typeTable } from './schema.js';
import type { TypeTable } from './schema.js';
import { typeMetaFields, core, meta, QUANTITY, TIME } from './type-refs.js';

export const coreV1PodTypes: TypeTable = typeTable(
  struct(
    'io.k8s.api.core.v1.Sysctl',
    'A kernel parameter to set for the pod.',
    {
      name: field(str, 'The parameter\'s name.', { required: true, emitted: true }),
      value: field(str, 'The parameter\'s value.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodSecurityContext',
    'Security settings that apply to all containers of a pod.',
    {
      seLinuxOptions: field(core('SELinuxOptions'), 'The SELinux context of all containers.'),
      windowsOptions: field(core('WindowsSecurityContextOptions'), 'Windows-specific settings of all containers.'),
      runAsUser: field(int64, 'The UID to run the entrypoints as.'),
      runAsGroup: field(int64, 'The GID to run the entrypoints as.'),
      runAsNonRoot: field(bool, 'Refuse to start containers as UID 0.'),
      supplementalGroups: field(atomicList(int64), 'Extra groups for the first process of each container.'),
      supplementalGroupsPolicy: field(enumOf('Merge', 'Strict'), 'How supplemental groups are computed: Merge or Strict.'),
      fsGroup: field(int64, 'A group that owns the pod\'s volumes and is added to every container.'),
      sysctls: field(atomicList(core('Sysctl')), 'Namespaced kernel parameters for the pod.'),
      fsGroupChangePolicy: field(enumOf('Always', 'OnRootMismatch'), 'When to change volume ownership: OnRootMismatch or Always.'),
      seccompProfile: field(core('SeccompProfile'), 'The seccomp profile of all containers.'),
      appArmorProfile: field(core('AppArmorProfile'), 'The AppArmor profile of all containers.'),
      seLinuxChangePolicy: field(str, 'How the SELinux label is applied to volumes: Recursive or MountOption.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeSelectorRequirement',
    'A requirement on a node\'s label or field.',
    {
      key: field(str, 'The label key or field name.', { required: true, emitted: true }),
      operator: field(enumOf('DoesNotExist', 'Exists', 'Gt', 'In', 'Lt', 'NotIn'), 'In, NotIn, Exists, DoesNotExist, Gt or Lt.', { required: true, emitted: true }),
      values: field(atomicList(str), 'The values to compare with; one integer for Gt and Lt, none for Exists and DoesNotExist.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeSelectorTerm',
    'Requirements that a node must all meet.',
    {
      matchExpressions: field(atomicList(core('NodeSelectorRequirement')), 'Requirements on node labels.'),
      matchFields: field(atomicList(core('NodeSelectorRequirement')), 'Requirements on node fields.'),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.api.core.v1.NodeSelector',
    'Node selector terms, any of which a node may match.',
    {
      nodeSelectorTerms: field(atomicList(core('NodeSelectorTerm')), 'The terms, ORed.', { required: true, emitted: true }),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.api.core.v1.PreferredSchedulingTerm',
    'A weighted preference for nodes.',
    {
      weight: field(int32, 'The weight of the preference, 1 to 100.', { required: true, emitted: true }),
      preference: field(core('NodeSelectorTerm'), 'The node selector term to prefer.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeAffinity',
    'Which nodes a pod may or prefers to run on.',
    {
      requiredDuringSchedulingIgnoredDuringExecution: field(core('NodeSelector'), 'Nodes the pod may be scheduled on.'),
      preferredDuringSchedulingIgnoredDuringExecution: field(atomicList(core('PreferredSchedulingTerm')), 'Nodes the scheduler prefers, by weight.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodAffinityTerm',
    'Pods to be near (or away from), within a topology domain.',
    {
      labelSelector: field(meta('LabelSelector'), 'The pods to consider.'),
      namespaces: field(atomicList(str), 'The namespaces to look in; the pod\'s own when empty.'),
      topologyKey: field(str, 'The node label that defines the topology domain, such as kubernetes.io/hostname.', { required: true, emitted: true }),
      namespaceSelector: field(meta('LabelSelector'), 'The namespaces to look in, by label.'),
      matchLabelKeys: field(atomicList(str), 'Label keys whose values are taken from the incoming pod and added to the selector.'),
      mismatchLabelKeys: field(atomicList(str), 'Label keys whose values must differ from the incoming pod\'s.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.WeightedPodAffinityTerm',
    'A weighted pod affinity term.',
    {
      weight: field(int32, 'The weight, 1 to 100.', { required: true, emitted: true }),
      podAffinityTerm: field(core('PodAffinityTerm'), 'The term.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodAffinity',
    'Pods this pod should be scheduled near.',
    {
      requiredDuringSchedulingIgnoredDuringExecution: field(atomicList(core('PodAffinityTerm')), 'Terms that must hold at scheduling time.'),
      preferredDuringSchedulingIgnoredDuringExecution: field(atomicList(core('WeightedPodAffinityTerm')), 'Terms the scheduler prefers, by weight.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodAntiAffinity',
    'Pods this pod should be kept away from.',
    {
      requiredDuringSchedulingIgnoredDuringExecution: field(atomicList(core('PodAffinityTerm')), 'Terms that must hold at scheduling time.'),
      preferredDuringSchedulingIgnoredDuringExecution: field(atomicList(core('WeightedPodAffinityTerm')), 'Terms the scheduler prefers, by weight.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Affinity',
    'Scheduling constraints relative to nodes and to other pods.',
    {
      nodeAffinity: field(core('NodeAffinity'), 'Constraints on nodes.'),
      podAffinity: field(core('PodAffinity'), 'Pods to be scheduled near.'),
      podAntiAffinity: field(core('PodAntiAffinity'), 'Pods to be kept away from.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Toleration',
    'Lets a pod be scheduled on (or stay on) nodes with a matching taint.',
    {
      key: field(str, 'The taint key to match; empty with Exists matches every taint.'),
      operator: field(enumOf('Equal', 'Exists'), 'Exists or Equal. Defaults to Equal.'),
      value: field(str, 'The taint value to match, with Equal.'),
      effect: field(enumOf('NoExecute', 'NoSchedule', 'PreferNoSchedule'), 'The effect to match: NoSchedule, PreferNoSchedule or NoExecute; empty matches all.'),
      tolerationSeconds: field(int64, 'How long a NoExecute taint is tolerated before eviction.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.HostAlias',
    'An entry for the pod\'s hosts file.',
    {
      ip: field(str, 'The IP address.', { required: true, emitted: true }),
      hostnames: field(atomicList(str), 'The host names for the address.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodDNSConfigOption',
    'A resolver option.',
    {
      name: field(str, 'The option\'s name.'),
      value: field(str, 'The option\'s value.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodDNSConfig',
    'DNS settings merged with those of the DNS policy.',
    {
      nameservers: field(atomicList(str), 'Extra name servers.'),
      searches: field(atomicList(str), 'Extra search domains.'),
      options: field(atomicList(core('PodDNSConfigOption')), 'Resolver options.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodReadinessGate',
    'An extra condition the pod\'s readiness depends on.',
    {
      conditionType: field(str, 'The type of a condition in the pod\'s status.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.TopologySpreadConstraint',
    'How matching pods are spread among topology domains.',
    {
      maxSkew: field(int32, 'The most the number of matching pods may differ between domains.', { required: true, emitted: true }),
      topologyKey: field(str, 'The node label that defines the domains.', { required: true, emitted: true }),
      whenUnsatisfiable: field(enumOf('DoNotSchedule', 'ScheduleAnyway'), 'DoNotSchedule or ScheduleAnyway.', { required: true, emitted: true }),
      labelSelector: field(meta('LabelSelector'), 'The pods that are counted.'),
      minDomains: field(int32, 'The least number of eligible domains.'),
      nodeAffinityPolicy: field(enumOf('Honor', 'Ignore'), 'Whether node affinity counts when computing skew: Honor or Ignore.'),
      nodeTaintsPolicy: field(enumOf('Honor', 'Ignore'), 'Whether node taints count when computing skew: Honor or Ignore.'),
      matchLabelKeys: field(atomicList(str), 'Label keys whose values are taken from the incoming pod and added to the selector.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodOS',
    'The operating system of a pod\'s containers.',
    {
      name: field(str, 'linux or windows.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodSchedulingGate',
    'A gate that holds a pod back from scheduling while it is present.',
    {
      name: field(str, 'The gate\'s name.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodResourceClaim',
    'A resource claim the pod uses, by name.',
    {
      name: field(str, 'The name of the claim inside the pod.', { required: true, emitted: true }),
      resourceClaimName: field(str, 'An existing ResourceClaim to use.'),
      resourceClaimTemplateName: field(str, 'A template from which a claim is made for this pod.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodSpec',
    'The desired state of a pod: its containers, volumes and scheduling.',
    {
      volumes: field(mapList(core('Volume'), 'name'), 'Volumes the containers can mount.', { patch: 'merge,retainKeys', mergeKey: 'name' }),
      initContainers: field(mapList(core('Container'), 'name'), 'Containers that run to completion, in order, before the app containers start.', { patch: 'merge', mergeKey: 'name' }),
      containers: field(mapList(core('Container'), 'name'), 'The pod\'s containers; at least one. Cannot be added or removed.', { required: true, patch: 'merge', mergeKey: 'name', emitted: true }),
      ephemeralContainers: field(mapList(core('EphemeralContainer'), 'name'), 'Debugging containers added to the running pod.', { patch: 'merge', mergeKey: 'name' }),
      restartPolicy: field(enumOf('Always', 'Never', 'OnFailure'), 'Always, OnFailure or Never. Defaults to Always.'),
      terminationGracePeriodSeconds: field(int64, 'Seconds the pod gets to stop gracefully. Defaults to 30.'),
      activeDeadlineSeconds: field(int64, 'Seconds the pod may be active before the kubelet fails it.'),
      dnsPolicy: field(enumOf('ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'), 'ClusterFirst, ClusterFirstWithHostNet, Default or None. Defaults to ClusterFirst.'),
      nodeSelector: field(atomicMap(str), 'Labels a node must have for the pod to be scheduled there.'),
      serviceAccountName: field(str, 'The service account the pod runs as.'),
      serviceAccount: field(str, 'Deprecated alias of serviceAccountName.'),
      automountServiceAccountToken: field(bool, 'Whether to mount the service account\'s token.'),
      nodeName: field(str, 'The node the pod is bound to; set by the scheduler, or by hand to skip it.'),
      hostNetwork: field(bool, 'Use the host\'s network namespace.'),
      hostPID: field(bool, 'Use the host\'s process namespace.'),
      hostIPC: field(bool, 'Use the host\'s IPC namespace.'),
      shareProcessNamespace: field(bool, 'Share one process namespace between the pod\'s containers.'),
      securityContext: field(core('PodSecurityContext'), 'Security settings for the whole pod.'),
      imagePullSecrets: field(mapList(core('LocalObjectReference'), 'name'), 'Secrets for pulling the images.', { patch: 'merge', mergeKey: 'name' }),
      hostname: field(str, 'The pod\'s hostname; the pod name when empty.'),
      subdomain: field(str, 'A subdomain, giving the pod the FQDN hostname.subdomain.namespace.svc.'),
      affinity: field(core('Affinity'), 'Scheduling constraints.'),
      schedulerName: field(str, 'The scheduler to use. Defaults to default-scheduler.'),
      tolerations: field(atomicList(core('Toleration')), 'The taints the pod tolerates.'),
      hostAliases: field(mapList(core('HostAlias'), 'ip'), 'Extra entries for the pod\'s hosts file.', { patch: 'merge', mergeKey: 'ip' }),
      priorityClassName: field(str, 'The PriorityClass that sets the pod\'s priority.'),
      priority: field(int32, 'The pod\'s priority, resolved from its PriorityClass by admission.'),
      dnsConfig: field(core('PodDNSConfig'), 'Extra DNS settings.'),
      readinessGates: field(atomicList(core('PodReadinessGate')), 'Extra conditions the pod\'s readiness depends on.'),
      runtimeClassName: field(str, 'The RuntimeClass to run the pod with.'),
      enableServiceLinks: field(bool, 'Whether service information is injected as environment variables. Defaults to true.'),
      preemptionPolicy: field(enumOf('Never', 'PreemptLowerPriority'), 'PreemptLowerPriority or Never. Defaults to PreemptLowerPriority.'),
      overhead: field(granularMap(QUANTITY), 'Resources the pod\'s sandbox uses, set by admission from its RuntimeClass.'),
      topologySpreadConstraints: field(mapList(core('TopologySpreadConstraint'), 'topologyKey', 'whenUnsatisfiable'), 'How the pod\'s replicas are spread among topology domains.', { patch: 'merge', mergeKey: 'topologyKey' }),
      setHostnameAsFQDN: field(bool, 'Set the pod\'s hostname to its FQDN.'),
      os: field(core('PodOS'), 'The operating system of the pod\'s containers.'),
      hostUsers: field(bool, 'Whether to use the host\'s user namespace. Defaults to true.'),
      schedulingGates: field(mapList(core('PodSchedulingGate'), 'name'), 'Gates that hold the pod back from scheduling while present.', { patch: 'merge', mergeKey: 'name' }),
      resourceClaims: field(mapList(core('PodResourceClaim'), 'name'), 'Resource claims the pod\'s containers can use.', { patch: 'merge,retainKeys', mergeKey: 'name' }),
      resources: field(core('ResourceRequirements'), 'Resources for the whole pod (pod-level requests and limits).'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodCondition',
    'One condition of a pod, such as Ready or PodScheduled.',
    {
      type: field(str, 'The condition\'s type.', { required: true, emitted: true }),
      status: field(str, 'True, False or Unknown.', { required: true, emitted: true }),
      lastProbeTime: field(TIME, 'When the condition was last probed.', { emitted: true }),
      lastTransitionTime: field(TIME, 'When the condition last changed status.', { emitted: true }),
      reason: field(str, 'A CamelCase reason for the last transition.'),
      message: field(str, 'A human-readable explanation.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.HostIP',
    'An IP address of the pod\'s host.',
    {
      ip: field(str, 'The address.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodIP',
    'An IP address of the pod.',
    {
      ip: field(str, 'The address.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ContainerStateWaiting',
    'The container has not started yet.',
    {
      reason: field(str, 'Why the container is waiting, such as ContainerCreating or CrashLoopBackOff.'),
      message: field(str, 'Details of why the container is waiting.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ContainerStateRunning',
    'The container is running.',
    {
      startedAt: field(TIME, 'When the container last started.', { emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ContainerStateTerminated',
    'The container ran and stopped.',
    {
      exitCode: field(int32, 'The exit status of its last run.', { required: true, emitted: true }),
      signal: field(int32, 'The signal that stopped it, if any.'),
      reason: field(str, 'A short reason for the termination.'),
      message: field(str, 'Details of the termination.'),
      startedAt: field(TIME, 'When the container started.', { emitted: true }),
      finishedAt: field(TIME, 'When the container stopped.', { emitted: true }),
      containerID: field(str, 'The container\'s ID, as runtime://id.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ContainerState',
    'A container\'s state; exactly one is set.',
    {
      waiting: field(core('ContainerStateWaiting'), 'The container is waiting to start.'),
      running: field(core('ContainerStateRunning'), 'The container is running.'),
      terminated: field(core('ContainerStateTerminated'), 'The container has stopped.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.VolumeMountStatus',
    'The state of a volume mount.',
    {
      name: field(str, 'The volume mount\'s name.', { required: true, emitted: true }),
      mountPath: field(str, 'Where the volume is mounted.', { required: true, emitted: true }),
      readOnly: field(bool, 'Whether the mount is read-only.'),
      recursiveReadOnly: field(str, 'Whether the read-only mount is recursive.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.LinuxContainerUser',
    'The Linux identity of a container\'s first process.',
    {
      uid: field(int64, 'The primary UID.', { required: true, emitted: true }),
      gid: field(int64, 'The primary GID.', { required: true, emitted: true }),
      supplementalGroups: field(atomicList(int64), 'The supplemental groups.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ContainerUser',
    'The identity of a container\'s first process.',
    {
      linux: field(core('LinuxContainerUser'), 'The Linux identity.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ResourceHealth',
    'The health of one device or resource.',
    {
      resourceID: field(str, 'The resource\'s ID.', { required: true, emitted: true }),
      health: field(str, 'Healthy, Unhealthy or Unknown.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ResourceStatus',
    'The health of the resources assigned for one resource name.',
    {
      name: field(str, 'The resource name or claim.', { required: true, emitted: true }),
      resources: field(mapList(core('ResourceHealth'), 'resourceID'), 'The health of each resource.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ContainerStatus',
    'The observed state of one container.',
    {
      name: field(str, 'The container\'s name.', { required: true, emitted: true }),
      state: field(core('ContainerState'), 'Its current state.', { emitted: true }),
      lastState: field(core('ContainerState'), 'Its state before the last restart.', { emitted: true }),
      ready: field(bool, 'Whether its readiness probe passes.', { required: true, emitted: true }),
      restartCount: field(int32, 'How many times it has been restarted.', { required: true, emitted: true }),
      image: field(str, 'The image it runs.', { required: true, emitted: true }),
      imageID: field(str, 'The image\'s ID.', { required: true, emitted: true }),
      containerID: field(str, 'The container\'s ID, as runtime://id.'),
      started: field(bool, 'Whether its startup probe has passed.'),
      allocatedResources: field(granularMap(QUANTITY), 'The resources allocated to it.'),
      resources: field(core('ResourceRequirements'), 'The resources it runs with.'),
      volumeMounts: field(mapList(core('VolumeMountStatus'), 'mountPath'), 'The state of its volume mounts.', { patch: 'merge', mergeKey: 'mountPath' }),
      user: field(core('ContainerUser'), 'The identity of its first process.'),
      allocatedResourcesStatus: field(mapList(core('ResourceStatus'), 'name'), 'The health of the resources allocated to it.', { patch: 'merge', mergeKey: 'name' }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodResourceClaimStatus',
    'The resource claim made for one of the pod\'s claims.',
    {
      name: field(str, 'The name of the pod\'s claim.', { required: true, emitted: true }),
      resourceClaimName: field(str, 'The name of the ResourceClaim made for it.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PodStatus',
    'The observed state of a pod, as reported by its node.',
    {
      phase: field(enumOf('Failed', 'Pending', 'Running', 'Succeeded', 'Unknown'), 'Pending, Running, Succeeded, Failed or Unknown.'),
      conditions: field(mapList(core('PodCondition'), 'type'), 'The pod\'s current conditions.', { patch: 'merge', mergeKey: 'type' }),
      message: field(str, 'A human-readable reason for the pod\'s state.'),
      reason: field(str, 'A short CamelCase reason for the pod\'s state.'),
      nominatedNodeName: field(str, 'The node preemption made room on for this pod.'),
      hostIP: field(str, 'The IP address of the pod\'s node.'),
      hostIPs: field(atomicList(core('HostIP')), 'The IP addresses of the pod\'s node.', { patch: 'merge', mergeKey: 'ip' }),
      podIP: field(str, 'The pod\'s IP address.'),
      podIPs: field(mapList(core('PodIP'), 'ip'), 'The pod\'s IP addresses, one per family.', { patch: 'merge', mergeKey: 'ip' }),
      startTime: field(TIME, 'When the kubelet acknowledged the pod.'),
      initContainerStatuses: field(atomicList(core('ContainerStatus')), 'The state of each init container.'),
      containerStatuses: field(atomicList(core('ContainerStatus')), 'The state of each container.'),
      qosClass: field(enumOf('BestEffort', 'Burstable', 'Guaranteed'), 'Guaranteed, Burstable or BestEffort, from the resource requirements.'),
      ephemeralContainerStatuses: field(atomicList(core('ContainerStatus')), 'The state of each ephemeral container.'),
      resize: field(str, 'The state of a pending resize.'),
      resourceClaimStatuses: field(mapList(core('PodResourceClaimStatus'), 'name'), 'The resource claims made for the pod.', { patch: 'merge,retainKeys', mergeKey: 'name' }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Pod',
    'A set of containers that run together on a node.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      spec: field(core('PodSpec'), 'The desired state of the pod.', { emitted: true }),
      status: field(core('PodStatus'), 'The observed state of the pod.', { emitted: true }),
    },
    { gvk: [{ group: '', version: 'v1', kind: 'Pod' }] },
  ),
  struct(
    'io.k8s.api.core.v1.PodTemplateSpec',
    'A pod template: the metadata and spec of the pods a controller creates.',
    {
      metadata: field(meta('ObjectMeta'), 'Labels and annotations of the pods.', { emitted: true }),
      spec: field(core('PodSpec'), 'The spec of the pods.', { emitted: true }),
    },
  ),
);
