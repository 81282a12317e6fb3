// core/v1 volumes: a pod's Volume and every volume source, projections, and the persistent volume claim
// template an ephemeral volume is made from.
// Field names, types, list types, merge keys and defaults are Kubernetes' (k8s.io/api v0.32); the
// descriptions are short summaries of our own.

import { atomicList, bool, enumOf, field, granularMap, int32, int64, str, struct, typeTable } from './schema.js';
import type { TypeTable } from './schema.js';
import { core, meta, QUANTITY } from './type-refs.js';

export const coreV1VolumeTypes: TypeTable = typeTable(
  struct(
    'io.k8s.api.core.v1.HostPathVolumeSource',
    'A file or directory of the node mounted into the pod.',
    {
      path: field(str, 'The path of the directory on the host.', { required: true, emitted: true }),
      type: field(enumOf('', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'), 'What the path must be (a Directory, File, Socket, …); empty skips the check.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.EmptyDirVolumeSource',
    'A temporary directory that lives as long as the pod.',
    {
      medium: field(str, 'The storage medium: empty for the node\'s default, or Memory.'),
      sizeLimit: field(QUANTITY, 'The most local storage the directory may use.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.GCEPersistentDiskVolumeSource',
    'A GCE persistent disk (deprecated in-tree driver).',
    {
      pdName: field(str, 'The name of the disk in GCE.', { required: true, emitted: true }),
      fsType: field(str, 'The filesystem type to mount.'),
      partition: field(int32, 'The partition to mount; 0 for the whole disk.'),
      readOnly: field(bool, 'Mount read-only.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.AWSElasticBlockStoreVolumeSource',
    'An AWS EBS volume (deprecated in-tree driver).',
    {
      volumeID: field(str, 'The ID of the EBS volume.', { required: true, emitted: true }),
      fsType: field(str, 'The filesystem type to mount.'),
      partition: field(int32, 'The partition to mount; 0 for the whole volume.'),
      readOnly: field(bool, 'Mount read-only.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.GitRepoVolumeSource',
    'A git repository cloned into a directory (deprecated).',
    {
      repository: field(str, 'The repository URL.', { required: true, emitted: true }),
      revision: field(str, 'The commit to check out.'),
      directory: field(str, 'The target directory name inside the volume.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.KeyToPath',
    'Maps one key of a ConfigMap or Secret to a file path in the volume.',
    {
      key: field(str, 'The key to project.', { required: true, emitted: true }),
      path: field(str, 'The relative path of the file.', { required: true, emitted: true }),
      mode: field(int32, 'File mode bits for this file (0000 to 0777).'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.SecretVolumeSource',
    'A Secret\'s keys as files.',
    {
      secretName: field(str, 'The name of the Secret in the pod\'s namespace.'),
      items: field(atomicList(core('KeyToPath')), 'The keys to project and their paths; all keys when empty.'),
      defaultMode: field(int32, 'File mode bits for the files (default 0644).'),
      optional: field(bool, 'Whether the Secret or its keys may be missing.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NFSVolumeSource',
    'An NFS export.',
    {
      server: field(str, 'The host name or IP address of the NFS server.', { required: true, emitted: true }),
      path: field(str, 'The path exported by the server.', { required: true, emitted: true }),
      readOnly: field(bool, 'Mount read-only.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ISCSIVolumeSource',
    'An iSCSI disk.',
    {
      targetPortal: field(str, 'The target portal, IP or host:port.', { required: true, emitted: true }),
      iqn: field(str, 'The target\'s iSCSI qualified name.', { required: true, emitted: true }),
      lun: field(int32, 'The target\'s logical unit number.', { required: true, emitted: true }),
      iscsiInterface: field(str, 'The iSCSI interface name.', { default: 'default' }),
      fsType: field(str, 'The filesystem type to mount.'),
      readOnly: field(bool, 'Mount read-only.'),
      portals: field(atomicList(str), 'Extra target portals.'),
      chapAuthDiscovery: field(bool, 'Whether to use CHAP authentication for discovery.'),
      chapAuthSession: field(bool, 'Whether to use CHAP authentication for the session.'),
      secretRef: field(core('LocalObjectReference'), 'The Secret holding CHAP credentials.'),
      initiatorName: field(str, 'A custom initiator name.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.GlusterfsVolumeSource',
    'A Glusterfs mount (removed driver).',
    {
      endpoints: field(str, 'The Endpoints object naming the cluster.', { required: true, emitted: true }),
      path: field(str, 'The Glusterfs volume path.', { required: true, emitted: true }),
      readOnly: field(bool, 'Mount read-only.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PersistentVolumeClaimVolumeSource',
    'A PersistentVolumeClaim in the pod\'s namespace.',
    {
      claimName: field(str, 'The name of the claim.', { required: true, emitted: true }),
      readOnly: field(bool, 'Mount read-only.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.RBDVolumeSource',
    'A Rados block device (deprecated in-tree driver).',
    {
      monitors: field(atomicList(str), 'The Ceph monitors.', { required: true, emitted: true }),
      image: field(str, 'The RADOS image name.', { required: true, emitted: true }),
      fsType: field(str, 'The filesystem type to mount.'),
      pool: field(str, 'The RADOS pool.', { default: 'rbd' }),
      user: field(str, 'The RADOS user.', { default: 'admin' }),
      keyring: field(str, 'The keyring path.', { default: '/etc/ceph/keyring' }),
      secretRef: field(core('LocalObjectReference'), 'The Secret holding the authentication secret.'),
      readOnly: field(bool, 'Mount read-only.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.FlexVolumeSource',
    'A volume provisioned by a FlexVolume driver (deprecated).',
    {
      driver: field(str, 'The name of the driver.', { required: true, emitted: true }),
      fsType: field(str, 'The filesystem type to mount.'),
      secretRef: field(core('LocalObjectReference'), 'The Secret passed to the driver.'),
      readOnly: field(bool, 'Mount read-only.'),
      options: field(granularMap(str), 'Extra driver options.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.CinderVolumeSource',
    'An OpenStack Cinder volume (deprecated in-tree driver).',
    {
      volumeID: field(str, 'The ID of the volume.', { required: true, emitted: true }),
      fsType: field(str, 'The filesystem type to mount.'),
      readOnly: field(bool, 'Mount read-only.'),
      secretRef: field(core('LocalObjectReference'), 'The Secret with parameters for connecting to OpenStack.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.CephFSVolumeSource',
    'A Ceph filesystem mount (deprecated in-tree driver).',
    {
      monitors: field(atomicList(str), 'The Ceph monitors.', { required: true, emitted: true }),
      path: field(str, 'The root of the mount inside the filesystem.'),
      user: field(str, 'The RADOS user.'),
      secretFile: field(str, 'The path to the key ring.'),
      secretRef: field(core('LocalObjectReference'), 'The Secret holding the authentication secret.'),
      readOnly: field(bool, 'Mount read-only.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.FlockerVolumeSource',
    'A Flocker dataset (deprecated).',
    {
      datasetName: field(str, 'The dataset\'s name.'),
      datasetUUID: field(str, 'The dataset\'s UUID.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ObjectFieldSelector',
    'Selects a field of the pod, such as metadata.name.',
    {
      apiVersion: field(str, 'The schema version the field path is written in.'),
      fieldPath: field(str, 'The path of the field to select.', { required: true, emitted: true }),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.api.core.v1.ResourceFieldSelector',
    'Selects a container\'s resource limit or request, such as limits.cpu.',
    {
      containerName: field(str, 'The container, required for volumes.'),
      resource: field(str, 'The resource to select.', { required: true, emitted: true }),
      divisor: field(QUANTITY, 'The unit the value is expressed in (default 1).', { emitted: true }),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.api.core.v1.DownwardAPIVolumeFile',
    'One file of a downward API volume.',
    {
      path: field(str, 'The relative path of the file.', { required: true, emitted: true }),
      fieldRef: field(core('ObjectFieldSelector'), 'The pod field to write.'),
      resourceFieldRef: field(core('ResourceFieldSelector'), 'The container resource to write.'),
      mode: field(int32, 'File mode bits for this file.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.DownwardAPIVolumeSource',
    'Pod information as files.',
    {
      items: field(atomicList(core('DownwardAPIVolumeFile')), 'The files to create.'),
      defaultMode: field(int32, 'File mode bits for the files (default 0644).'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.FCVolumeSource',
    'A Fibre Channel volume.',
    {
      targetWWNs: field(atomicList(str), 'The target world wide names.'),
      lun: field(int32, 'The target\'s logical unit number.'),
      fsType: field(str, 'The filesystem type to mount.'),
      readOnly: field(bool, 'Mount read-only.'),
      wwids: field(atomicList(str), 'The volume\'s world wide identifiers, instead of WWNs and LUN.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.AzureFileVolumeSource',
    'An Azure File share (deprecated in-tree driver).',
    {
      secretName: field(str, 'The Secret holding the account name and key.', { required: true, emitted: true }),
      shareName: field(str, 'The share name.', { required: true, emitted: true }),
      readOnly: field(bool, 'Mount read-only.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ConfigMapVolumeSource',
    'A ConfigMap\'s keys as files.',
    {
      name: field(str, 'The name of the referenced object.', { default: '' }),
      items: field(atomicList(core('KeyToPath')), 'The keys to project and their paths; all keys when empty.'),
      defaultMode: field(int32, 'File mode bits for the files (default 0644).'),
      optional: field(bool, 'Whether the ConfigMap or its keys may be missing.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.VsphereVirtualDiskVolumeSource',
    'A vSphere virtual disk (deprecated in-tree driver).',
    {
      volumePath: field(str, 'The path of the disk.', { required: true, emitted: true }),
      fsType: field(str, 'The filesystem type to mount.'),
      storagePolicyName: field(str, 'The storage policy name.'),
      storagePolicyID: field(str, 'The storage policy ID.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.QuobyteVolumeSource',
    'A Quobyte mount (removed driver).',
    {
      registry: field(str, 'The Quobyte registries, host:port, comma separated.', { required: true, emitted: true }),
      volume: field(str, 'The volume name.', { required: true, emitted: true }),
      readOnly: field(bool, 'Mount read-only.'),
      user: field(str, 'The user to map access to.'),
      group: field(str, 'The group to map access to.'),
      tenant: field(str, 'The tenant owning the volume.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.AzureDiskVolumeSource',
    'An Azure data disk (deprecated in-tree driver).',
    {
      diskName: field(str, 'The disk\'s name.', { required: true, emitted: true }),
      diskURI: field(str, 'The disk\'s URI.', { required: true, emitted: true }),
      cachingMode: field(enumOf('None', 'ReadOnly', 'ReadWrite'), 'Host caching: None, ReadOnly or ReadWrite.', { default: 'ReadWrite' }),
      fsType: field(str, 'The filesystem type to mount.', { default: 'ext4' }),
      readOnly: field(bool, 'Mount read-only.', { default: false }),
      kind: field(enumOf('Dedicated', 'Managed', 'Shared'), 'The disk kind: Shared, Dedicated or Managed.', { default: 'Shared' }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PhotonPersistentDiskVolumeSource',
    'A Photon Controller disk (removed driver).',
    {
      pdID: field(str, 'The disk\'s ID.', { required: true, emitted: true }),
      fsType: field(str, 'The filesystem type to mount.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.SecretProjection',
    'A Secret\'s keys inside a projected volume.',
    {
      name: field(str, 'The name of the referenced object.', { default: '' }),
      items: field(atomicList(core('KeyToPath')), 'The keys to project and their paths.'),
      optional: field(bool, 'Whether the Secret or its keys may be missing.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.DownwardAPIProjection',
    'Pod information inside a projected volume.',
    {
      items: field(atomicList(core('DownwardAPIVolumeFile')), 'The files to create.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ConfigMapProjection',
    'A ConfigMap\'s keys inside a projected volume.',
    {
      name: field(str, 'The name of the referenced object.', { default: '' }),
      items: field(atomicList(core('KeyToPath')), 'The keys to project and their paths.'),
      optional: field(bool, 'Whether the ConfigMap or its keys may be missing.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ServiceAccountTokenProjection',
    'A service account token inside a projected volume.',
    {
      audience: field(str, 'The audience the token is for.'),
      expirationSeconds: field(int64, 'The requested lifetime of the token (default one hour, at least ten minutes).'),
      path: field(str, 'The relative path of the token file.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ClusterTrustBundleProjection',
    'ClusterTrustBundle certificates inside a projected volume.',
    {
      name: field(str, 'Select one bundle by name.'),
      signerName: field(str, 'Select bundles of this signer.'),
      labelSelector: field(meta('LabelSelector'), 'Select bundles by label.'),
      optional: field(bool, 'Whether a missing bundle is acceptable.'),
      path: field(str, 'The relative path of the file.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.VolumeProjection',
    'One source of a projected volume.',
    {
      secret: field(core('SecretProjection'), 'Project a Secret.'),
      downwardAPI: field(core('DownwardAPIProjection'), 'Project pod information.'),
      configMap: field(core('ConfigMapProjection'), 'Project a ConfigMap.'),
      serviceAccountToken: field(core('ServiceAccountTokenProjection'), 'Project a service account token.'),
      clusterTrustBundle: field(core('ClusterTrustBundleProjection'), 'Project ClusterTrustBundle certificates.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ProjectedVolumeSource',
    'Several sources projected into one directory.',
    {
      sources: field(atomicList(core('VolumeProjection')), 'The sources to project.', { emitted: true }),
      defaultMode: field(int32, 'File mode bits for the files.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PortworxVolumeSource',
    'A Portworx volume (deprecated in-tree driver).',
    {
      volumeID: field(str, 'The volume\'s ID.', { required: true, emitted: true }),
      fsType: field(str, 'The filesystem type to mount.'),
      readOnly: field(bool, 'Mount read-only.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ScaleIOVolumeSource',
    'A ScaleIO volume (removed driver).',
    {
      gateway: field(str, 'The gateway address.', { required: true, emitted: true }),
      system: field(str, 'The storage system name.', { required: true, emitted: true }),
      secretRef: field(core('LocalObjectReference'), 'The Secret holding the user\'s credentials.', { required: true, emitted: true, pointer: true }),
      sslEnabled: field(bool, 'Whether to use SSL with the gateway.'),
      protectionDomain: field(str, 'The protection domain.'),
      storagePool: field(str, 'The storage pool.'),
      storageMode: field(str, 'ThickProvisioned or ThinProvisioned.', { default: 'ThinProvisioned' }),
      volumeName: field(str, 'The volume\'s name.'),
      fsType: field(str, 'The filesystem type to mount.', { default: 'xfs' }),
      readOnly: field(bool, 'Mount read-only.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.StorageOSVolumeSource',
    'A StorageOS volume (removed driver).',
    {
      volumeName: field(str, 'The volume\'s name.'),
      volumeNamespace: field(str, 'The volume\'s namespace in StorageOS.'),
      fsType: field(str, 'The filesystem type to mount.'),
      readOnly: field(bool, 'Mount read-only.'),
      secretRef: field(core('LocalObjectReference'), 'The Secret holding the API credentials.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.CSIVolumeSource',
    'An ephemeral volume from a CSI driver.',
    {
      driver: field(str, 'The name of the CSI driver.', { required: true, emitted: true }),
      readOnly: field(bool, 'Mount read-only.'),
      fsType: field(str, 'The filesystem type to mount.'),
      volumeAttributes: field(granularMap(str), 'Driver-specific attributes.'),
      nodePublishSecretRef: field(core('LocalObjectReference'), 'The Secret passed to the driver\'s publish calls.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.VolumeResourceRequirements',
    'The storage a claim asks for.',
    {
      limits: field(granularMap(QUANTITY), 'The most resources allowed.'),
      requests: field(granularMap(QUANTITY), 'The least resources required.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.TypedLocalObjectReference',
    'A reference to an object of a given kind in the same namespace.',
    {
      apiGroup: field(str, 'The API group of the referenced object; empty for the core group.', { emitted: true, pointer: true }),
      kind: field(str, 'The kind of the referenced object.', { required: true, emitted: true }),
      name: field(str, 'The name of the referenced object.', { required: true, emitted: true }),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.api.core.v1.TypedObjectReference',
    'A reference to an object of a given kind, possibly in another namespace.',
    {
      apiGroup: field(str, 'The API group of the referenced object; empty for the core group.', { emitted: true, pointer: true }),
      kind: field(str, 'The kind of the referenced object.', { required: true, emitted: true }),
      name: field(str, 'The name of the referenced object.', { required: true, emitted: true }),
      namespace: field(str, 'The namespace of the referenced object.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PersistentVolumeClaimSpec',
    'What a persistent volume claim asks for.',
    {
      accessModes: field(atomicList(enumOf('ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod')), 'The access modes the volume must offer.'),
      selector: field(meta('LabelSelector'), 'A label query over volumes to bind to.'),
      resources: field(core('VolumeResourceRequirements'), 'The storage resources requested.', { emitted: true }),
      volumeName: field(str, 'Binds to this persistent volume.'),
      storageClassName: field(str, 'The storage class to use.'),
      volumeMode: field(enumOf('Block', 'Filesystem'), 'Filesystem or Block.'),
      dataSource: field(core('TypedLocalObjectReference'), 'An existing object to populate the volume from.'),
      dataSourceRef: field(core('TypedObjectReference'), 'An object, possibly of another namespace, to populate the volume from.'),
      volumeAttributesClassName: field(str, 'The VolumeAttributesClass to use.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.PersistentVolumeClaimTemplate',
    'The claim an ephemeral volume is made from.',
    {
      metadata: field(meta('ObjectMeta'), 'Labels and annotations copied to the claim.', { emitted: true }),
      spec: field(core('PersistentVolumeClaimSpec'), 'The claim\'s spec.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.EphemeralVolumeSource',
    'A volume backed by a claim that lives and dies with the pod.',
    {
      volumeClaimTemplate: field(core('PersistentVolumeClaimTemplate'), 'The claim to create for the pod.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ImageVolumeSource',
    'An OCI image or artifact mounted as a volume.',
    {
      reference: field(str, 'The image or artifact reference.'),
      pullPolicy: field(enumOf('Always', 'IfNotPresent', 'Never'), 'When to pull: Always, Never or IfNotPresent.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Volume',
    'A named volume that the pod\'s containers can mount.',
    {
      name: field(str, 'The volume\'s name, a DNS label unique within the pod.', { required: true, emitted: true }),
      hostPath: field(core('HostPathVolumeSource'), 'A file or directory of the node.'),
      emptyDir: field(core('EmptyDirVolumeSource'), 'A temporary directory that lives as long as the pod.'),
      gcePersistentDisk: field(core('GCEPersistentDiskVolumeSource'), 'A GCE persistent disk.'),
      awsElasticBlockStore: field(core('AWSElasticBlockStoreVolumeSource'), 'An AWS EBS volume.'),
      gitRepo: field(core('GitRepoVolumeSource'), 'A git repository (deprecated).'),
      secret: field(core('SecretVolumeSource'), 'A Secret\'s keys as files.'),
      nfs: field(core('NFSVolumeSource'), 'An NFS export.'),
      iscsi: field(core('ISCSIVolumeSource'), 'An iSCSI disk.'),
      glusterfs: field(core('GlusterfsVolumeSource'), 'A Glusterfs mount.'),
      persistentVolumeClaim: field(core('PersistentVolumeClaimVolumeSource'), 'A PersistentVolumeClaim in the pod\'s namespace.'),
      rbd: field(core('RBDVolumeSource'), 'A Rados block device.'),
      flexVolume: field(core('FlexVolumeSource'), 'A FlexVolume driver\'s volume.'),
      cinder: field(core('CinderVolumeSource'), 'An OpenStack Cinder volume.'),
      cephfs: field(core('CephFSVolumeSource'), 'A Ceph filesystem.'),
      flocker: field(core('FlockerVolumeSource'), 'A Flocker dataset.'),
      downwardAPI: field(core('DownwardAPIVolumeSource'), 'Pod information as files.'),
      fc: field(core('FCVolumeSource'), 'A Fibre Channel volume.'),
      azureFile: field(core('AzureFileVolumeSource'), 'An Azure File share.'),
      configMap: field(core('ConfigMapVolumeSource'), 'A ConfigMap\'s keys as files.'),
      vsphereVolume: field(core('VsphereVirtualDiskVolumeSource'), 'A vSphere virtual disk.'),
      quobyte: field(core('QuobyteVolumeSource'), 'A Quobyte mount.'),
      azureDisk: field(core('AzureDiskVolumeSource'), 'An Azure data disk.'),
      photonPersistentDisk: field(core('PhotonPersistentDiskVolumeSource'), 'A Photon Controller disk.'),
      projected: field(core('ProjectedVolumeSource'), 'Several sources projected into one directory.'),
      portworxVolume: field(core('PortworxVolumeSource'), 'A Portworx volume.'),
      scaleIO: field(core('ScaleIOVolumeSource'), 'A ScaleIO volume.'),
      storageos: field(core('StorageOSVolumeSource'), 'A StorageOS volume.'),
      csi: field(core('CSIVolumeSource'), 'An ephemeral volume from a CSI driver.'),
      ephemeral: field(core('EphemeralVolumeSource'), 'A volume from a claim that lives and dies with the pod.'),
      image: field(core('ImageVolumeSource'), 'An OCI image or artifact.'),
    },
  ),
);
