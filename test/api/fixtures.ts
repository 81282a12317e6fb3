// Manifests the API machinery tests share: a Deployment that uses most of what real ones do (probes,
// resources, affinity, tolerations, topology spread, volumes, security contexts, env from ConfigMaps and
// Secrets, init containers), and a few small objects of the other kinds.
import YAML from 'yaml';

export const deploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web, tier: frontend}
  annotations:
    example.com/owner: team-a
spec:
  replicas: 3
  revisionHistoryLimit: 5
  progressDeadlineSeconds: 300
  minReadySeconds: 5
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}
  selector:
    matchLabels: {app: web}
    matchExpressions:
    - {key: tier, operator: In, values: [frontend]}
  template:
    metadata:
      labels: {app: web, tier: frontend}
      annotations: {prometheus.io/scrape: "true"}
    spec:
      serviceAccountName: web
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 45
      priorityClassName: high
      nodeSelector: {kubernetes.io/os: linux}
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        fsGroup: 2000
        seccompProfile: {type: RuntimeDefault}
        sysctls: [{name: net.core.somaxconn, value: "1024"}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge]}
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 50
            preference:
              matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [eu-1a]}]
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app: web}}
      tolerations:
      - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 60}
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
        labelSelector: {matchLabels: {app: web}}
      imagePullSecrets: [{name: registry-creds}]
      initContainers:
      - name: migrate
        image: example/web:1.2.3
        command: [/bin/migrate, --wait]
        resources:
          requests: {cpu: 100m, memory: 64Mi}
      containers:
      - name: web
        image: example/web:1.2.3
        imagePullPolicy: IfNotPresent
        args: [--port=8080]
        ports:
        - {name: http, containerPort: 8080, protocol: TCP}
        - {name: metrics, containerPort: 9090}
        env:
        - {name: LOG_LEVEL, value: info}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: DB_PASSWORD
          valueFrom: {secretKeyRef: {name: db, key: password}}
        - name: MEMORY_LIMIT
          valueFrom: {resourceFieldRef: {containerName: web, resource: limits.memory, divisor: 1Mi}}
        envFrom:
        - configMapRef: {name: web-config}
        - secretRef: {name: web-secrets, optional: true}
          prefix: SECRET_
        resources:
          requests: {cpu: "0.25", memory: 128Mi}
          limits: {cpu: 1, memory: 256Mi, ephemeral-storage: 1Gi}
        livenessProbe:
          httpGet: {path: /healthz, port: http, httpHeaders: [{name: X-Probe, value: live}]}
          initialDelaySeconds: 10
          periodSeconds: 20
          failureThreshold: 3
        readinessProbe:
          tcpSocket: {port: 8080}
          periodSeconds: 5
        startupProbe:
          exec: {command: [cat, /tmp/ready]}
          failureThreshold: 30
          periodSeconds: 2
        lifecycle:
          preStop:
            sleep: {seconds: 5}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}
        volumeMounts:
        - {name: config, mountPath: /etc/web, readOnly: true}
        - {name: cache, mountPath: /var/cache/web}
        - {name: data, mountPath: /data, subPath: web}
        - {name: tokens, mountPath: /var/run/tokens}
      volumes:
      - name: config
        configMap:
          name: web-config
          items: [{key: web.yaml, path: web.yaml, mode: 0444}]
      - name: cache
        emptyDir: {sizeLimit: 500Mi, medium: Memory}
      - name: data
        persistentVolumeClaim: {claimName: web-data}
      - name: tokens
        projected:
          sources:
          - serviceAccountToken: {audience: vault, expirationSeconds: 3600, path: vault-token}
          - downwardAPI:
              items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]
      - name: host-certs
        hostPath: {path: /etc/ssl/certs, type: Directory}
      - name: scratch
        ephemeral:
          volumeClaimTemplate:
            spec:
              accessModes: [ReadWriteOnce]
              resources: {requests: {storage: 1Gi}}
`;

export function deployment(): Record<string, unknown> {
  return YAML.parse(deploymentYAML) as Record<string, unknown>;
}

export const otherObjects: readonly Record<string, unknown>[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { team: 'a' } } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-config', namespace: 'default' }, data: { 'web.yaml': 'port: 8080\n' }, binaryData: { blob: 'AAEC' } },
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'default' }, type: 'Opaque', data: { password: 'c2VjcmV0' }, stringData: { user: 'admin' } },
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'web', namespace: 'default' }, imagePullSecrets: [{ name: 'registry-creds' }], automountServiceAccountToken: false },
  {
    apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } },
    spec: { podCIDR: '10.0.1.0/24', taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }] },
    status: {
      capacity: { cpu: '4', memory: '16Gi', pods: '110' }, allocatable: { cpu: '3800m', memory: '15Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2024-05-01T10:00:00Z', lastTransitionTime: '2024-05-01T09:00:00Z', reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
      addresses: [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'n1' }],
      nodeInfo: { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1', osImage: 'Debian', containerRuntimeVersion: 'setpoint://1', kubeletVersion: 'v1.32.0', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' },
    },
  },
  {
    apiVersion: 'v1', kind: 'Event', metadata: { name: 'web.17a', namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'u1', apiVersion: 'v1', fieldPath: 'spec.containers{web}' },
    reason: 'Pulled', message: 'Container image pulled', type: 'Normal', count: 2,
    firstTimestamp: '2024-05-01T10:00:00Z', lastTimestamp: '2024-05-01T10:05:00Z', source: { component: 'kubelet', host: 'n1' },
    reportingComponent: 'kubelet', reportingInstance: 'n1',
  },
  {
    apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'web.17b', namespace: 'default' },
    eventTime: '2024-05-01T10:00:00.123456Z', reportingController: 'setpoint.io/scheduler', reportingInstance: 's1', action: 'Scheduling', reason: 'FailedScheduling',
    regarding: { kind: 'Pod', namespace: 'default', name: 'web-1' }, note: '0/3 nodes are available: 3 Insufficient cpu.', type: 'Warning',
  },
  { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'n1', namespace: 'kube-node-lease' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2024-05-01T10:00:00.000001Z' } },
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000000, globalDefault: false, description: 'For the web tier.', preemptionPolicy: 'PreemptLowerPriority' },
  { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'web-1', namespace: 'default' }, target: { apiVersion: 'v1', kind: 'Node', name: 'n1' } },
  { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 3 }, status: { replicas: 2, selector: 'app=web' } },
  {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'policy' },
    webhooks: [{
      name: 'policy.example.com', admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Fail', timeoutSeconds: 5,
      clientConfig: { url: 'https://policy.example.com/validate', caBundle: 'LS0tLS1CRUdJTg==' },
      rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], scope: 'Namespaced' }],
      namespaceSelector: { matchExpressions: [{ key: 'policy', operator: 'NotIn', values: ['off'] }] },
      matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }],
    }],
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'inject' },
    webhooks: [{ name: 'inject.example.com', admissionReviewVersions: ['v1'], sideEffects: 'NoneOnDryRun', reinvocationPolicy: 'IfNeeded', clientConfig: { service: { namespace: 'inject', name: 'webhook', path: '/mutate', port: 8443 } }, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }],
  },
  {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-5d8', namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u2', controller: true, blockOwnerDeletion: true }] },
    spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, observedGeneration: 1 },
  },
];
