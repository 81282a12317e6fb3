// The per-pod state file, <pod dir>/state.json: what an agent that restarts needs to adopt the pod — the
// pod as last synced, its address and start time, and per container the run that is going (pid and
// process start time, so a reused pid is never taken for it), the last two terminations and the back-off.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentError } from './agent-error.js';
import { replaceFile } from './atomic-file.js';
import type { BackoffEntry } from './backoff.js';
import type { ContainerRecord } from './container-process.js';
import type { ContainerStateTerminated, Pod } from './pod-types.js';

export interface ContainerSlotState {
  runs: number;
  current?: ContainerRecord;
  lastTerminated?: ContainerStateTerminated;
  prevTerminated?: ContainerStateTerminated;
  backoff?: BackoffEntry;
}

export interface PodStateFile {
  version: 1;
  pod: Pod;
  podIP: string;
  startTime: string;
  hostLinks: string[];
  containers: Record<string, ContainerSlotState>;
}

export function stateFilePath(podDir: string): string {
  return join(podDir, 'state.json');
}

/**
 * Not fsynced: the file must survive an agent that is killed (it does: write and rename), while a power cut
 * stops the pods' processes too, so what it would save is gone anyway (a torn or missing file is a pod that
 * is not adopted, and the API's pod is started again as its restart policy says).
 */
export function writePodState(podDir: string, s: PodStateFile): Promise<void> {
  return replaceFile(stateFilePath(podDir), JSON.stringify(s));
}

export function readPodState(podDir: string): PodStateFile | undefined {
  const path = stateFilePath(podDir);
  if (!existsSync(path)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new AgentError('AGENT_BAD_STATE_FILE', `cannot read ${path}: ${(err as Error).message}`);
  }
  const s = parsed as Partial<PodStateFile>;
  if (s.version !== 1 || typeof s.podIP !== 'string' || !s.pod || typeof s.pod !== 'object' || !s.containers) {
    throw new AgentError('AGENT_BAD_STATE_FILE', `${path} is not a version 1 pod state file`);
  }
  return s as PodStateFile;
}
