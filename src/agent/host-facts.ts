// What the Node object says about this host, read from the OS: capacity and allocatable (cpu, memory,
// pods 110, ephemeral-storage), Kubernetes' well-known labels, addresses, the pressure conditions kubelet
// reports (by its default hard eviction thresholds: memory.available<100Mi, nodefs.available<10%,
// pids free <10%), and node info.
import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import { arch, cpus, freemem, hostname, platform, release, totalmem } from 'node:os';
import type { CgroupSupport } from './cgroups.js';

export interface NodeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

export interface HostFacts {
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  labels: Record<string, string>;
  addresses: { type: string; address: string }[];
  conditions: NodeCondition[];
  nodeInfo: Record<string, string>;
  /** An annotation for limits the node cannot enforce (empty when it can). */
  limitsNote: string;
}

const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' };

function pidsInUse(): { used: number; max: number } {
  let max = 32768;
  try {
    max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim()) || max;
  } catch {
    // not Linux
  }
  let used = 0;
  try {
    used = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).length;
  } catch {
    // not Linux
  }
  return { used, max };
}

export function hostFacts(nodeName: string, hostIP: string, root: string, cgroups: CgroupSupport, maxPods = 110): HostFacts {
  const cpu = String(cpus().length);
  const memKi = `${Math.floor(totalmem() / 1024)}Ki`;
  let diskTotal = 0;
  let diskFree = 0;
  try {
    const st = statfsSync(root);
    diskTotal = st.blocks * st.bsize;
    diskFree = st.bavail * st.bsize;
  } catch {
    // unknown: no disk pressure reported
  }
  const capacity: Record<string, string> = { cpu, memory: memKi, pods: String(maxPods), 'ephemeral-storage': `${Math.floor(diskTotal / 1024)}Ki` };
  // kubelet keeps the hard eviction threshold (100Mi) out of allocatable; no system reservations here.
  const allocatable: Record<string, string> = { ...capacity, memory: `${Math.max(0, Math.floor(totalmem() / 1024) - 100 * 1024)}Ki` };
  const memPressure = freemem() < 100 * 1024 * 1024;
  const diskPressure = diskTotal > 0 && diskFree / diskTotal < 0.1;
  const pids = pidsInUse();
  const pidPressure = pids.max > 0 && (pids.max - pids.used) / pids.max < 0.1;
  const conditions: NodeCondition[] = [
    memPressure
      ? { type: 'MemoryPressure', status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available' }
      : { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
    diskPressure
      ? { type: 'DiskPressure', status: 'True', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure' }
      : { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
    pidPressure
      ? { type: 'PIDPressure', status: 'True', reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available' }
      : { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
    { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
  ];
  const os = platform() === 'win32' ? 'windows' : platform();
  const goArch = GOARCH[arch()] ?? arch();
  return {
    capacity,
    allocatable,
    labels: {
      'kubernetes.io/hostname': nodeName,
      'kubernetes.io/os': os,
      'kubernetes.io/arch': goArch,
      'beta.kubernetes.io/os': os,
      'beta.kubernetes.io/arch': goArch,
    },
    addresses: [
      { type: 'InternalIP', address: hostIP },
      { type: 'Hostname', address: hostname() },
    ],
    conditions,
    nodeInfo: { operatingSystem: os, architecture: goArch, kernelVersion: release(), containerRuntimeVersion: 'setpoint://0.1.0', kubeletVersion: 'v1.32.0-setpoint' },
    limitsNote: cgroups.reason === '' ? '' : `resource limits are not enforced: ${cgroups.reason}`,
  };
}
