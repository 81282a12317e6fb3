// Go's durations, both ways: what kube-apiserver's flags and ?timeout= accept and how Go prints them,
// with Go's error texts (the API server quotes them back in 400s).
import { describe, expect, it } from 'vitest';
import { formatDurationNs, parseDurationMs, parseDurationNs } from '../../src/apiserver/duration.js';

describe('Go durations', () => {
  it.each([
    ['0', 0],
    ['5m', 300e9],
    ['1h0m0s', 3600e9],
    ['30s', 30e9],
    ['1.5h', 5400e9],
    ['2h45m', 9900e9],
    ['300ms', 300e6],
    ['-1.5s', -1.5e9],
    ['+2s', 2e9],
    ['1µs', 1e3],
    ['1μs', 1e3],
    ['1us', 1e3],
    ['7ns', 7],
    ['.5s', 0.5e9],
    ['1.s', 1e9],
    ['1m30.5s', 90.5e9],
  ])('parses %s', (text, ns) => {
    expect(parseDurationNs(text)).toBe(ns);
  });

  it.each([
    ['', 'time: invalid duration ""'],
    ['x', 'time: invalid duration "x"'],
    ['.', 'time: invalid duration "."'],
    ['-', 'time: invalid duration "-"'],
    ['5', 'time: missing unit in duration "5"'],
    ['5m3', 'time: missing unit in duration "5m3"'],
    ['5x', 'time: unknown unit "x" in duration "5x"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
  ])('refuses %j as Go does', (text, message) => {
    expect(() => parseDurationNs(text)).toThrow(message);
  });

  it.each([
    [0, '0s'],
    [1, '1ns'],
    [1500, '1.5µs'],
    [300e6, '300ms'],
    [1.5e6, '1.5ms'],
    [30e9, '30s'],
    [60e9, '1m0s'],
    [300e9, '5m0s'],
    [3600e9, '1h0m0s'],
    [90.5e9, '1m30.5s'],
    [-2e9, '-2s'],
    [1800e9, '30m0s'],
  ])('prints %d ns as %s', (ns, text) => {
    expect(formatDurationNs(ns)).toBe(text);
  });

  it('milliseconds for timers', () => {
    expect(parseDurationMs('1m0s')).toBe(60_000);
    expect(parseDurationMs('32s')).toBe(32_000);
  });
});
