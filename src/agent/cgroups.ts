// Resource limits through cgroup v2, where the agent may write it: a cgroup per container under the
// agent's own (<agent cgroup>/setpoint/<pod uid>/<container>) with memory.max and cpu.max from the
// container's limits. The container's wrapper moves itself in before it runs the command, so nothing runs
// unlimited. When the host cannot (cgroup v1, no delegation, controllers missing), detectCgroups says
// why, and the node reports it; pods then run without limits.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Quantity } from '../api/quantity.js';
import type { ResourceRequirements } from './pod-types.js';

export interface CgroupSupport {
  readonly memory: boolean;
  readonly cpu: boolean;
  /** The directory pods' cgroups go under, when either controller is usable. */
  readonly base?: string;
  /** Why limits are not (all) enforced; empty when they are. */
  readonly reason: string;
}

function mountPoint(): string | undefined {
  for (const p of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
    if (existsSync(join(p, 'cgroup.controllers'))) return p;
  }
  return undefined;
}

export function detectCgroups(): CgroupSupport {
  const mp = mountPoint();
  if (!mp) return { memory: false, cpu: false, reason: 'cgroup v2 is not mounted' };
  let own: string;
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'));
    own = line?.slice(3) ?? '';
  } catch {
    return { memory: false, cpu: false, reason: 'cannot read /proc/self/cgroup' };
  }
  const dir = join(mp, own);
  let controllers: string[];
  try {
    controllers = readFileSync(join(dir, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  } catch {
    return { memory: false, cpu: false, reason: `cannot read ${dir}/cgroup.controllers` };
  }
  const memory = controllers.includes('memory');
  const cpu = controllers.includes('cpu');
  if (!memory && !cpu) {
    return { memory, cpu, reason: `the memory and cpu controllers are not available in cgroup v2 at ${dir} (controllers: ${controllers.join(' ') || 'none'})` };
  }
  // A process may not sit in a cgroup whose controllers are enabled for children ("no internal
  // processes"), so pods go into a subtree of their own.
  const base = join(dir, 'setpoint');
  try {
    mkdirSync(base, { recursive: true });
    const enable = [memory ? '+memory' : '', cpu ? '+cpu' : ''].filter(Boolean).join(' ');
    writeFileSync(join(base, 'cgroup.subtree_control'), enable);
  } catch (err) {
    return { memory: false, cpu: false, reason: `cannot write cgroups under ${dir}: ${(err as Error).message}` };
  }
  const missing = [memory ? '' : 'memory', cpu ? '' : 'cpu'].filter(Boolean);
  return { memory, cpu, base, reason: missing.length ? `the ${missing.join(' and ')} controller is not available` : '' };
}

/** Creates the container's cgroup with its limits; undefined when there is nothing to limit or no support. */
export function containerCgroup(support: CgroupSupport, podUid: string, container: string, res: ResourceRequirements | undefined): string | undefined {
  if (!support.base) return undefined;
  const mem = res?.limits?.memory;
  const cpu = res?.limits?.cpu;
  if (!(mem && support.memory) && !(cpu && support.cpu)) return undefined;
  const podDir = join(support.base, podUid);
  const dir = join(podDir, container);
  try {
    mkdirSync(podDir, { recursive: true });
    writeFileSync(join(podDir, 'cgroup.subtree_control'), [support.memory ? '+memory' : '', support.cpu ? '+cpu' : ''].filter(Boolean).join(' '));
    mkdirSync(dir, { recursive: true });
    if (mem && support.memory) {
      writeFileSync(join(dir, 'memory.max'), Quantity.parse(mem).value().toString());
      writeFileSync(join(dir, 'memory.swap.max'), '0');
    }
    if (cpu && support.cpu) {
      // cpu.max is "<quota> <period>" in microseconds; kubelet uses a 100 ms period.
      const quota = (Quantity.parse(cpu).milliValue() * 100_000n) / 1000n;
      writeFileSync(join(dir, 'cpu.max'), `${quota < 1000n ? 1000n : quota} 100000`);
    }
  } catch {
    return undefined;
  }
  return dir;
}

/** How many times the kernel's OOM killer struck in the cgroup (memory.events oom_kill). */
export function oomKills(cgroup: string | undefined): number {
  if (!cgroup) return 0;
  try {
    const m = /^oom_kill (\d+)$/m.exec(readFileSync(join(cgroup, 'memory.events'), 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

export function removePodCgroups(support: CgroupSupport, podUid: string): void {
  if (!support.base) return;
  const podDir = join(support.base, podUid);
  if (!existsSync(podDir)) return;
  try {
    for (const d of readdirSync(podDir, { withFileTypes: true })) if (d.isDirectory()) rmdirSync(join(podDir, d.name));
    rmdirSync(podDir);
  } catch {
    // still has processes: it goes with the next cleanup
  }
}
