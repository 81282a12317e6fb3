// Go's text/tabwriter as kubectl uses it, on the cases that decide what users see: column blocks end at a
// line without the column, a line without tabs ends every block, the last cell is never padded, and
// remembered widths keep `get -w` rows under their header.
import { describe, expect, it } from 'vitest';
import { DESCRIBE_TABS, TABLE_TABS, tabulate } from '../../../src/cli/kubectl-verbs/tab-writer.js';

describe('tabulate', () => {
  it('pads every column but the last to its widest cell plus the padding, at least the minimum', () => {
    expect(tabulate('NAME\tREADY\tAGE\nweb\t0/3\t5s\nlonger-name\t1/1\t2m', TABLE_TABS)).toEqual(['NAME          READY   AGE', 'web           0/3     5s', 'longer-name   1/1     2m']);
  });

  it('aligns describe sections per block: a line without tabs starts afresh', () => {
    const text = 'Name:\tweb\nNamespace:\tdefault\nPod Template:\n  Labels:\tapp=web\n  Containers:\n   nginx:\n    Image:\tnginx\n    Host Port:\t<none>\n  Volumes:\t<none>\nEvents:\t<none>\n';
    expect(tabulate(text, DESCRIBE_TABS)).toEqual([
      'Name:       web',
      'Namespace:  default',
      'Pod Template:',
      '  Labels:  app=web',
      '  Containers:',
      '   nginx:',
      '    Image:      nginx',
      '    Host Port:  <none>',
      '  Volumes:      <none>',
      'Events:         <none>',
    ]);
  });

  it('ends a column block where a line has fewer cells, keeping the outer column', () => {
    expect(tabulate('a\tb\tc\naa\tb\nx\tyyyy\tz', { minWidth: 0, padding: 1 })).toEqual(['a  b c', 'aa b', 'x  yyyy z']);
  });

  it('remembers widths across calls when asked', () => {
    const widths: number[] = [];
    expect(tabulate('NAME\tAGE\nlong-name-here\t1s', TABLE_TABS, widths)).toEqual(['NAME             AGE', 'long-name-here   1s']);
    expect(tabulate('x\t2s', TABLE_TABS, widths)).toEqual(['x                2s']);
  });
});
