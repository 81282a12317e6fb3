// core/v1 containers: ports, environment, resources, mounts, probes, lifecycle hooks and security
// context, and ephemeral containers.
// Field names, types, list types, merge keys and defaults are Kubernetes' (k8s.io/api v0.32); the
// descriptions are short summaries of our own.

import { atomicList, bool, enumOf, field, granularMap, int32, int64, mapList, str, struct, typeTable } from './schema.js';
import type { TypeTable } from './schema.js';
import { core, INT_OR_STRING, QUANTITY } from './type-refs.js';

export const coreV1ContainerTypes: TypeTable = typeTable(
  struct(
    'io.k8s.api.core.v1.ContainerPort',
    'A network port of a container.',
    {
      name: field(str, 'A name for the port, an IANA_SVC_NAME unique within the pod, that services can refer to.'),
      hostPort: field(int32, 'The port to expose on the host, if any.'),
      containerPort: field(int32, 'The port number on the pod\'s IP address (1 to 65535).', { required: true, emitted: true }),
      protocol: field(enumOf('SCTP', 'TCP', 'UDP'), 'TCP, UDP or SCTP. Defaults to TCP.', { default: 'TCP' }),
      hostIP: field(str, 'The host IP to bind the host port to.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ConfigMapEnvSource',
    'A ConfigMap whose keys become environment variables.',
    {
      name: field(str, 'The name of the referenced object.', { default: '' }),
      optional: field(bool, 'Whether the ConfigMap may be missing.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.SecretEnvSource',
    'A Secret whose keys become environment variables.',
    {
      name: field(str, 'The name of the referenced object.', { default: '' }),
      optional: field(bool, 'Whether the Secret may be missing.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.EnvFromSource',
    'A source of environment variables: every key of a ConfigMap or Secret.',
    {
      prefix: field(str, 'A prefix added to every variable name.'),
      configMapRef: field(core('ConfigMapEnvSource'), 'The ConfigMap to read.'),
      secretRef: field(core('SecretEnvSource'), 'The Secret to read.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ConfigMapKeySelector',
    'One key of a ConfigMap.',
    {
      name: field(str, 'The name of the referenced object.', { default: '' }),
      key: field(str, 'The key to select.', { required: true, emitted: true }),
      optional: field(bool, 'Whether the ConfigMap or its key may be missing.'),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.api.core.v1.SecretKeySelector',
    'One key of a Secret.',
    {
      name: field(str, 'The name of the referenced object.', { default: '' }),
      key: field(str, 'The key to select.', { required: true, emitted: true }),
      optional: field(bool, 'Whether the Secret or its key may be missing.'),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.api.core.v1.EnvVarSource',
    'Where an environment variable\'s value comes from.',
    {
      fieldRef: field(core('ObjectFieldSelector'), 'A field of the pod, such as metadata.name or status.podIP.'),
      resourceFieldRef: field(core('ResourceFieldSelector'), 'A resource limit or request of the container.'),
      configMapKeyRef: field(core('ConfigMapKeySelector'), 'A key of a ConfigMap.'),
      secretKeyRef: field(core('SecretKeySelector'), 'A key of a Secret.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.EnvVar',
    'An environment variable of a container.',
    {
      name: field(str, 'The variable\'s name.', { required: true, emitted: true }),
      value: field(str, 'The value; $(VAR) references to earlier variables are expanded, $$ escapes.'),
      valueFrom: field(core('EnvVarSource'), 'A source for the value, instead of value.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ResourceClaim',
    'A pod resource claim used by a container.',
    {
      name: field(str, 'The name of an entry in the pod\'s resourceClaims.', { required: true, emitted: true }),
      request: field(str, 'The name of a request in that claim, if only one request is used.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ResourceRequirements',
    'Compute resources a container requires and may use.',
    {
      limits: field(granularMap(QUANTITY), 'The most of each resource the container may use.'),
      requests: field(granularMap(QUANTITY), 'The least of each resource the container needs; defaults to the limits where those are set.'),
      claims: field(mapList(core('ResourceClaim'), 'name'), 'The pod resource claims this container uses.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ContainerResizePolicy',
    'What resizing a resource of a running container does.',
    {
      resourceName: field(str, 'The resource this policy applies to (cpu or memory).', { required: true, emitted: true }),
      restartPolicy: field(str, 'NotRequired or RestartContainer.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.VolumeMount',
    'Where a volume is mounted in a container.',
    {
      name: field(str, 'The name of the pod volume to mount.', { required: true, emitted: true }),
      readOnly: field(bool, 'Mount read-only.'),
      recursiveReadOnly: field(str, 'Whether a read-only mount is read-only recursively: Disabled, IfPossible or Enabled.'),
      mountPath: field(str, 'The path in the container at which to mount the volume; must not contain \':\'.', { required: true, emitted: true }),
      subPath: field(str, 'A path inside the volume to mount instead of its root.'),
      mountPropagation: field(enumOf('Bidirectional', 'HostToContainer', 'None'), 'How mounts propagate between host and container: None, HostToContainer or Bidirectional.'),
      subPathExpr: field(str, 'Like subPath, with $(VAR) references to the container\'s environment expanded.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.VolumeDevice',
    'A raw block volume mapped into a container.',
    {
      name: field(str, 'The name of the pod\'s persistent volume claim.', { required: true, emitted: true }),
      devicePath: field(str, 'The path in the container to map the device to.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ExecAction',
    'A command run inside the container.',
    {
      command: field(atomicList(str), 'The command line; it is not run in a shell. Exit status 0 means healthy.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.HTTPHeader',
    'A custom HTTP header.',
    {
      name: field(str, 'The header\'s name.', { required: true, emitted: true }),
      value: field(str, 'The header\'s value.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.HTTPGetAction',
    'An HTTP GET request.',
    {
      path: field(str, 'The path to request.'),
      port: field(INT_OR_STRING, 'The port number or name to connect to.', { required: true, emitted: true }),
      host: field(str, 'The host to connect to; defaults to the pod IP.'),
      scheme: field(enumOf('HTTP', 'HTTPS'), 'HTTP or HTTPS. Defaults to HTTP.'),
      httpHeaders: field(atomicList(core('HTTPHeader')), 'Custom headers to send.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.TCPSocketAction',
    'A TCP connection attempt.',
    {
      port: field(INT_OR_STRING, 'The port number or name to connect to.', { required: true, emitted: true }),
      host: field(str, 'The host to connect to; defaults to the pod IP.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.GRPCAction',
    'A gRPC health check.',
    {
      port: field(int32, 'The port of the gRPC service.', { required: true, emitted: true }),
      service: field(str, 'The service name sent in the health check request.', { default: '', emitted: true, pointer: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Probe',
    'A health check of a container, run by the kubelet.',
    {
      exec: field(core('ExecAction'), 'Run a command.'),
      httpGet: field(core('HTTPGetAction'), 'Send an HTTP GET request.'),
      tcpSocket: field(core('TCPSocketAction'), 'Open a TCP connection.'),
      grpc: field(core('GRPCAction'), 'Call the gRPC health checking protocol.'),
      initialDelaySeconds: field(int32, 'Seconds after the container starts before the first probe.'),
      timeoutSeconds: field(int32, 'Seconds after which the probe times out. Defaults to 1.'),
      periodSeconds: field(int32, 'How often to probe, in seconds. Defaults to 10.'),
      successThreshold: field(int32, 'Consecutive successes needed after a failure. Defaults to 1; must be 1 for liveness and startup.'),
      failureThreshold: field(int32, 'Consecutive failures before giving up. Defaults to 3.'),
      terminationGracePeriodSeconds: field(int64, 'Overrides the pod\'s grace period when this probe fails.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.SleepAction',
    'A pause for a number of seconds.',
    {
      seconds: field(int64, 'How long to sleep.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.LifecycleHandler',
    'An action run at a point in a container\'s lifecycle; exactly one is set.',
    {
      exec: field(core('ExecAction'), 'Run a command.'),
      httpGet: field(core('HTTPGetAction'), 'Send an HTTP GET request.'),
      tcpSocket: field(core('TCPSocketAction'), 'Deprecated; kept for compatibility.'),
      sleep: field(core('SleepAction'), 'Sleep for a while.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Lifecycle',
    'Actions the kubelet runs when a container starts and before it stops.',
    {
      postStart: field(core('LifecycleHandler'), 'Run right after the container is created; on failure the container is restarted.'),
      preStop: field(core('LifecycleHandler'), 'Run before the container is terminated; the grace period keeps counting.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Capabilities',
    'POSIX capabilities to add to or drop from a container.',
    {
      add: field(atomicList(str), 'Capabilities to add.'),
      drop: field(atomicList(str), 'Capabilities to drop.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.SELinuxOptions',
    'SELinux labels for a container.',
    {
      user: field(str, 'The SELinux user label.'),
      role: field(str, 'The SELinux role label.'),
      type: field(str, 'The SELinux type label.'),
      level: field(str, 'The SELinux level label.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.WindowsSecurityContextOptions',
    'Windows-specific security options.',
    {
      gmsaCredentialSpecName: field(str, 'The GMSA credential spec to use.'),
      gmsaCredentialSpec: field(str, 'The content of the GMSA credential spec.'),
      runAsUserName: field(str, 'The user name to run the entrypoint as.'),
      hostProcess: field(bool, 'Run as a Windows HostProcess container.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.SeccompProfile',
    'A seccomp profile.',
    {
      type: field(enumOf('Localhost', 'RuntimeDefault', 'Unconfined'), 'Localhost, RuntimeDefault or Unconfined.', { required: true, emitted: true }),
      localhostProfile: field(str, 'The profile file on the node, for type Localhost.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.AppArmorProfile',
    'An AppArmor profile.',
    {
      type: field(enumOf('Localhost', 'RuntimeDefault', 'Unconfined'), 'Localhost, RuntimeDefault or Unconfined.', { required: true, emitted: true }),
      localhostProfile: field(str, 'The profile loaded on the node, for type Localhost.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.SecurityContext',
    'Security settings of a container; they override the pod\'s.',
    {
      capabilities: field(core('Capabilities'), 'Capabilities to add or drop.'),
      privileged: field(bool, 'Run in privileged mode, like root on the host.'),
      seLinuxOptions: field(core('SELinuxOptions'), 'The SELinux context of the container.'),
      windowsOptions: field(core('WindowsSecurityContextOptions'), 'Windows-specific settings.'),
      runAsUser: field(int64, 'The UID to run the entrypoint as.'),
      runAsGroup: field(int64, 'The GID to run the entrypoint as.'),
      runAsNonRoot: field(bool, 'Refuse to start the container as UID 0.'),
      readOnlyRootFilesystem: field(bool, 'Mount the root filesystem read-only.'),
      allowPrivilegeEscalation: field(bool, 'Whether a process may gain more privileges than its parent.'),
      procMount: field(enumOf('Default', 'Unmasked'), 'The proc mount type: Default or Unmasked.'),
      seccompProfile: field(core('SeccompProfile'), 'The seccomp profile of the container.'),
      appArmorProfile: field(core('AppArmorProfile'), 'The AppArmor profile of the container.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Container',
    'A single application container to run within a pod.',
    {
      name: field(str, 'The container\'s name, a DNS label unique within the pod. Cannot be updated.', { required: true, emitted: true }),
      image: field(str, 'The container image to run.'),
      command: field(atomicList(str), 'The entrypoint; the image\'s ENTRYPOINT when empty. Not run in a shell.'),
      args: field(atomicList(str), 'Arguments to the entrypoint; the image\'s CMD when empty.'),
      workingDir: field(str, 'The working directory; the runtime\'s default when empty.'),
      ports: field(mapList(core('ContainerPort'), 'containerPort', 'protocol'), 'The ports the container exposes, for information; any port the process listens on is reachable.', { patch: 'merge', mergeKey: 'containerPort' }),
      envFrom: field(atomicList(core('EnvFromSource')), 'Sources of environment variables; env takes precedence on duplicate names.'),
      env: field(mapList(core('EnvVar'), 'name'), 'Environment variables to set.', { patch: 'merge', mergeKey: 'name' }),
      resources: field(core('ResourceRequirements'), 'Compute resources required and allowed.', { emitted: true }),
      resizePolicy: field(atomicList(core('ContainerResizePolicy')), 'What resizing each resource does.'),
      restartPolicy: field(str, 'Always makes an init container a sidecar; only valid for init containers.'),
      volumeMounts: field(mapList(core('VolumeMount'), 'mountPath'), 'Volumes to mount into the container\'s filesystem.', { patch: 'merge', mergeKey: 'mountPath' }),
      volumeDevices: field(mapList(core('VolumeDevice'), 'devicePath'), 'Block devices to use.', { patch: 'merge', mergeKey: 'devicePath' }),
      livenessProbe: field(core('Probe'), 'Restart the container when this probe fails.'),
      readinessProbe: field(core('Probe'), 'Take the pod out of service endpoints when this probe fails.'),
      startupProbe: field(core('Probe'), 'Hold off the other probes until this one succeeds once.'),
      lifecycle: field(core('Lifecycle'), 'Actions to run when the container starts and before it stops.'),
      terminationMessagePath: field(str, 'The file the container\'s termination message is read from. Defaults to /dev/termination-log.'),
      terminationMessagePolicy: field(enumOf('FallbackToLogsOnError', 'File'), 'File, or FallbackToLogsOnError to use the log tail when the file is empty.'),
      imagePullPolicy: field(enumOf('Always', 'IfNotPresent', 'Never'), 'Always, Never or IfNotPresent. Defaults to Always for :latest images, otherwise IfNotPresent.'),
      securityContext: field(core('SecurityContext'), 'Security settings of the container.'),
      stdin: field(bool, 'Allocate a buffer for stdin.'),
      stdinOnce: field(bool, 'Close stdin after the first attach session ends.'),
      tty: field(bool, 'Allocate a TTY.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.EphemeralContainer',
    'A temporary container added to a running pod for debugging.',
    {
      name: field(str, 'The container\'s name, unique among all containers of the pod.', { required: true, emitted: true }),
      image: field(str, 'The container image to run.'),
      command: field(atomicList(str), 'The entrypoint; the image\'s ENTRYPOINT when empty.'),
      args: field(atomicList(str), 'Arguments to the entrypoint; the image\'s CMD when empty.'),
      workingDir: field(str, 'The working directory.'),
      ports: field(mapList(core('ContainerPort'), 'containerPort', 'protocol'), 'Not allowed for ephemeral containers.', { patch: 'merge', mergeKey: 'containerPort' }),
      envFrom: field(atomicList(core('EnvFromSource')), 'Sources of environment variables.'),
      env: field(mapList(core('EnvVar'), 'name'), 'Environment variables to set.', { patch: 'merge', mergeKey: 'name' }),
      resources: field(core('ResourceRequirements'), 'Not allowed for ephemeral containers.', { emitted: true }),
      resizePolicy: field(atomicList(core('ContainerResizePolicy')), 'Not allowed for ephemeral containers.'),
      restartPolicy: field(str, 'Not allowed for ephemeral containers.'),
      volumeMounts: field(mapList(core('VolumeMount'), 'mountPath'), 'Volumes to mount; subPath mounts are not allowed.', { patch: 'merge', mergeKey: 'mountPath' }),
      volumeDevices: field(mapList(core('VolumeDevice'), 'devicePath'), 'Block devices to use.', { patch: 'merge', mergeKey: 'devicePath' }),
      livenessProbe: field(core('Probe'), 'Not allowed for ephemeral containers.'),
      readinessProbe: field(core('Probe'), 'Not allowed for ephemeral containers.'),
      startupProbe: field(core('Probe'), 'Not allowed for ephemeral containers.'),
      lifecycle: field(core('Lifecycle'), 'Not allowed for ephemeral containers.'),
      terminationMessagePath: field(str, 'The file the termination message is read from.'),
      terminationMessagePolicy: field(enumOf('FallbackToLogsOnError', 'File'), 'File or FallbackToLogsOnError.'),
      imagePullPolicy: field(enumOf('Always', 'IfNotPresent', 'Never'), 'Always, Never or IfNotPresent.'),
      securityContext: field(core('SecurityContext'), 'Security settings of the container.'),
      stdin: field(bool, 'Allocate a buffer for stdin.'),
      stdinOnce: field(bool, 'Close stdin after the first attach session ends.'),
      tty: field(bool, 'Allocate a TTY.'),
      targetContainerName: field(str, 'The container whose namespaces this one joins.'),
    },
  ),
);
