// GET /version: a Kubernetes version.Info. The minor matters beyond display: the kubectl on this machine
// is a dispatcher that runs the kubectl build matching the server's minor, and 1.32 is what our API
// behaves as (kubectl-wire.md §0).
import { arch, platform } from 'node:process';

export const KUBERNETES_MAJOR = '1';
export const KUBERNETES_MINOR = '32';
export const KUBERNETES_GIT_VERSION = 'v1.32.0';

export interface VersionInfo {
  readonly major: string;
  readonly minor: string;
  readonly gitVersion: string;
  readonly gitCommit: string;
  readonly gitTreeState: string;
  readonly buildDate: string;
  readonly goVersion: string;
  readonly compiler: string;
  readonly platform: string;
}

const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };

/** Kubernetes' fields; the build facts are this process's (Node, not Go: `compiler` says so). */
export function versionInfo(build: { commit?: string; date?: string } = {}): VersionInfo {
  return {
    major: KUBERNETES_MAJOR,
    minor: KUBERNETES_MINOR,
    gitVersion: KUBERNETES_GIT_VERSION,
    gitCommit: build.commit ?? '',
    gitTreeState: build.commit !== undefined ? 'clean' : '',
    buildDate: build.date ?? '',
    goVersion: process.version,
    compiler: 'node',
    platform: `${platform}/${GO_ARCH[arch] ?? arch}`,
  };
}
