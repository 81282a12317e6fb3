// The admission history as findings: who refused a write (the step, its message, when, whose request),
// and which defaulter or mutating plugin/webhook changed which fields — "spec mutated by the system", the
// attribution Kubernetes' managedFields cannot give.
import type { HistoryEntry, HistoryRecord } from './why-source.js';
import type { Finding } from './why-types.js';

/** How many mutating writes are shown (newest first); older ones are summarised by count. */
const MUTATIONS_SHOWN = 3;
const PATHS_SHOWN = 6;

function pathsText(paths: readonly string[]): string {
  const shown = paths.slice(0, PATHS_SHOWN).join(', ');
  return paths.length > PATHS_SHOWN ? `${shown} (+${paths.length - PATHS_SHOWN} more)` : shown;
}

function stepName(r: HistoryRecord): string {
  if (r.stage === 'defaulting') return `defaulting (${r.plugin})`;
  return `${r.stage} ${r.plugin.includes('.') ? 'webhook' : 'plugin'} ${r.plugin}`;
}

function what(e: HistoryEntry): string {
  return `${e.operation}${e.subresource !== '' ? ` of ${e.subresource}` : ''}`;
}

/**
 * `liveRefusal`: the severity of a refusal newer than the last accepted write — an error on the object asked
 * about (the user's change did not land), a warning below it (the object is unchanged, so it does not explain
 * its owner's gap by itself).
 */
export function historyFindings(entries: readonly HistoryEntry[], liveRefusal: 'error' | 'warning' = 'error'): Finding[] {
  const out: Finding[] = [];
  const lastAllowed = [...entries].reverse().find((e) => e.allowed);
  entries.forEach((e) => {
    if (e.allowed) return;
    const deniers = e.records.filter((r) => !r.allowed);
    const by = deniers.map(stepName).join(', ');
    // A refusal after the last write that went through is the live one; an older one is background.
    const live = lastAllowed === undefined || Date.parse(e.time) >= Date.parse(lastAllowed.time);
    out.push({
      severity: live ? liveRefusal : 'info',
      source: 'admission',
      summary: `${what(e)} refused${by !== '' ? ` by ${by}` : ''}: ${e.message ?? deniers[0]?.message ?? '(no message)'}`,
      evidence: { time: e.time, who: e.user, ...(e.message !== undefined ? { message: e.message } : {}), paths: deniers.flatMap((r) => r.changedPaths) },
    });
  });
  const mutated = entries.filter((e) => e.allowed && e.subresource === '' && e.records.some((r) => r.stage !== 'validating' && r.changedPaths.length > 0));
  for (const e of mutated.slice(-MUTATIONS_SHOWN).reverse()) {
    const steps = e.records.filter((r) => r.stage !== 'validating' && r.changedPaths.length > 0);
    const paths = steps.flatMap((r) => r.changedPaths);
    out.push({
      severity: 'info',
      source: 'admission',
      summary: `spec mutated by the system on ${what(e)} by ${e.user}: ${steps.map((r) => `${stepName(r)} set ${pathsText(r.changedPaths)}`).join('; ')}`,
      evidence: { time: e.time, who: steps.map((r) => r.plugin).join(', '), paths },
    });
  }
  if (mutated.length > MUTATIONS_SHOWN) {
    out.push({ severity: 'info', source: 'admission', summary: `${mutated.length - MUTATIONS_SHOWN} older writes were also changed by admission`, evidence: {} });
  }
  return out;
}

/** When the spec last changed (for "stale since"), from the newest allowed main-resource write. */
export function lastSpecWrite(entries: readonly HistoryEntry[]): string | undefined {
  return [...entries].reverse().find((e) => e.allowed && e.subresource === '' && e.operation !== 'DELETE')?.time;
}
