/** The message `f` throws, or 'ok'. */
export function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  return 'ok';
}
