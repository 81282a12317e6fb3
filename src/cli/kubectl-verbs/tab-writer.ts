// Go's text/tabwriter, which kubectl prints tables and describe output through: tab-terminated cells are
// aligned in column blocks (consecutive lines that have that column), each as wide as its widest cell plus
// the padding (at least minWidth); text after a line's last tab is not padded; a line without tabs ends
// every block, as Go's writer flushes there. With `remembered` (kubectl's fork of the writer, RememberWidths),
// a column is never narrower than it was in an earlier call: `get -w` rows stay under the header.
export interface TabOptions {
  readonly minWidth: number;
  readonly padding: number;
}

/** kubectl get's printer. */
export const TABLE_TABS: TabOptions = { minWidth: 6, padding: 3 };
/** kubectl describe's. */
export const DESCRIBE_TABS: TabOptions = { minWidth: 0, padding: 2 };

function formatBlock(lines: readonly string[][], o: TabOptions, outLines: string[], remembered?: number[]): void {
  const widths: number[] = [];
  const write = (from: number, to: number): void => {
    for (let i = from; i < to; i++) {
      const cells = lines[i] ?? [];
      outLines.push(cells.map((c, j) => (j < widths.length && j < cells.length - 1 ? c.padEnd(widths[j] ?? 0) : c)).join(''));
    }
  };
  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    for (let i = line0; i < line1; i++) {
      if (column >= (lines[i]?.length ?? 0) - 1) continue;
      write(line0, i);
      line0 = i;
      let width = o.minWidth;
      for (; i < line1; i++) {
        const cells = lines[i] ?? [];
        if (column >= cells.length - 1) break;
        width = Math.max(width, (cells[column]?.length ?? 0) + o.padding);
      }
      if (remembered) {
        width = Math.max(width, remembered[column] ?? 0);
        remembered[column] = width;
      }
      widths.push(width);
      format(line0, i);
      widths.pop();
      line0 = i;
      i--;
    }
    write(line0, line1);
  };
  format(0, lines.length);
}

/** Aligns text whose lines hold tab-separated cells. Returns the lines (no trailing newline). */
export function tabulate(text: string, o: TabOptions, remembered?: number[]): string[] {
  const out: string[] = [];
  let block: string[][] = [];
  const raw = text.endsWith('\n') ? text.slice(0, -1) : text;
  for (const line of raw.split('\n')) {
    const cells = line.split('\t');
    block.push(cells);
    if (cells.length === 1) {
      formatBlock(block, o, out, remembered);
      block = [];
    }
  }
  if (block.length > 0) formatBlock(block, o, out, remembered);
  return out;
}
