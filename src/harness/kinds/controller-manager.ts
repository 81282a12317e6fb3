// `setpoint controller-manager` as a process kind: this checkout's build on a kubeconfig, with its flags. It
// listens on no port; it counts as started once its caches have synced (its log says so).
import type { Command } from '../command.js';
import type { ProcessKind } from '../process-kind.js';
import { setpointMain } from '../setpoint-main.js';

export interface ControllerManagerSpec {
  readonly kubeconfig: string;
  /** More flags (`--controllers=replicaset`, `--log-level=debug`, …). */
  readonly flags?: readonly string[];
  /** Whether the process has logged that its caches synced (the caller reads its output). */
  readonly synced: () => boolean;
  readonly env?: Readonly<Record<string, string>>;
}

export const controllerManagerKind: ProcessKind<ControllerManagerSpec, never> = {
  name: 'setpoint controller-manager',
  ports: [],
  command: (spec): Command => ({
    bin: process.execPath,
    args: [setpointMain(), 'controller-manager', `--kubeconfig=${spec.kubeconfig}`, ...(spec.flags ?? [])],
    env: { SETPOINT_LOG_FORMAT: 'json', ...spec.env },
  }),
  ready: (spec) => Promise.resolve(spec.synced()),
};
