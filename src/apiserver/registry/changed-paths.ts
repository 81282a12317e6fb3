// Which fields a step changed, as dotted paths (`spec.containers[0].imagePullPolicy`): what defaulting and
// mutating admission records for `setpoint why`. Bounded, so a step that rewrites a huge object records a
// summary rather than thousands of paths.
const MAX_PATHS = 100;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function changedPaths(before: unknown, after: unknown): string[] {
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (out.length >= MAX_PATHS) return;
    if (isObj(a) && isObj(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], path === '' ? k : `${path}.${k}`);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((x, i) => walk(x, b[i], `${path}[${i}]`));
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(path);
  };
  walk(before, after, '');
  return out;
}
