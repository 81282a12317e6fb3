// What a live process has cost so far, read from /proc: CPU seconds (user + system), resident memory now
// and at its peak (VmHWM). The benchmarks print these per component.
import { readFileSync } from 'node:fs';

export interface ProcessCost {
  readonly cpuS: number;
  readonly rssMiB: number;
  readonly peakMiB: number;
}

export function processCost(pid: number | undefined): ProcessCost {
  if (pid === undefined) return { cpuS: 0, rssMiB: 0, peakMiB: 0 };
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { cpuS: (Number(f[11]) + Number(f[12])) / 100, rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}
