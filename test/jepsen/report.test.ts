// The HTML report renders in a real headless Chromium, offline: verdict, latency points coloured by
// outcome over shaded fault periods, throughput lines, per-client timeline, and the anomaly's witness.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRegister } from '../../jepsen-lite/src/checkers/register-checker.js';
import { History } from '../../jepsen-lite/src/history.js';
import { writeReport } from '../../jepsen-lite/src/report/html.js';
import type { Summary } from '../../jepsen-lite/src/runner.js';
import { phaseStats } from '../../jepsen-lite/src/stats.js';

const CHROMIUM = '/usr/bin/chromium';
const dirs: string[] = [];
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A small register history with a stale read planted during a fault. */
function syntheticRun(): { summary: Summary; history: History } {
  const h = new History();
  let v = 0;
  for (let i = 0; i < 300; i++) {
    const t = i * 20;
    const worker = i % 4;
    const outcome = i % 37 === 0 ? 'info' : i % 53 === 0 ? 'fail' : 'ok';
    if (i % 2 === 0) h.add({ id: h.newId(), process: worker, worker, node: worker % 3, f: 'write', key: 'k', input: ++v, output: true, outcome: outcome === 'fail' ? 'ok' : outcome, start: t, end: t + 3 + (i % 7) });
    else h.add({ id: h.newId(), process: worker, worker, node: worker % 3, f: 'read', key: 'k', output: v, outcome: outcome === 'info' ? 'ok' : outcome, start: t + 5, end: t + 9 });
  }
  h.add({ id: h.newId(), process: 9, worker: 1, node: 2, f: 'read', key: 'k', output: 2, outcome: 'ok', start: 3000, end: 3004 });
  h.faults.push({ kind: 'partition-one', detail: 'partition one: n3×n1 n3×n2', start: 1000, end: 2500 }, { kind: 'kill', detail: 'kill leader: n1', start: 4000, end: 5000 });
  const checks = [checkRegister(h.ops, { budgetMs: 5000, explain: 1 })];
  const summary: Summary = {
    run: 'synthetic',
    valid: checks[0]!.valid,
    options: { target: 'etcd', nodes: 3, workload: 'register', nemeses: ['partition', 'kill'], timeS: 6, rate: 50, seed: 1, resultsDir: '/tmp' },
    schedule: [],
    faults: h.faults,
    phases: phaseStats(h.ops, h.faults, 6000),
    checks,
    counts: { ok: 0, fail: 0, info: 0 },
    notes: [],
    durationMs: 6000,
    stages: {},
    peerBytes: { forwarded: 0, dropped: 0 },
  };
  return { summary, history: h };
}

describe('HTML report in headless Chromium', () => {
  it('renders every plot, the verdict and the witness, without touching the network', async () => {
    // Not skipped when it is missing: a check that cannot run must say so (.ci/run installs Chromium).
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Chromium (the Debian package chromium)`).toBe(true);
    const { summary, history } = syntheticRun();
    expect(summary.valid).toBe(false);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'jepsen-report-'));
    dirs.push(dir);
    writeReport(dir, summary, history);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const external: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) external.push(r.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`file://${path.join(dir, 'index.html')}`);
    expect(await page.textContent('#verdict')).toBe('INVALID');
    expect(await page.locator('#latency circle').count()).toBeGreaterThan(250);
    expect(await page.locator('#latency rect.fault').count()).toBe(2);
    const okColour = await page.locator('#latency circle').first().getAttribute('fill');
    expect(okColour).toMatch(/^#/);
    const points = await page.locator('#throughput polyline.series-ok').getAttribute('points');
    expect((points ?? '').split(' ').length).toBeGreaterThan(3);
    expect(await page.locator('#timeline rect[data-op]').count()).toBeGreaterThan(250);
    expect(await page.locator('svg.witness rect').count()).toBeGreaterThanOrEqual(2);
    expect(await page.textContent('body')).toContain('the read returned 2');
    // Laid out, not just present: the plots have real size on screen.
    const box = await page.locator('#latency').boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(500);
    await page.locator('#timeline rect[data-op]').nth(10).dispatchEvent('mouseover');
    expect((await page.textContent('#hover')) ?? '').toMatch(/#\d+ p\d+/);
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    if (process.env['JEPSEN_REPORT_SCREENSHOT']) await page.screenshot({ path: process.env['JEPSEN_REPORT_SCREENSHOT'], fullPage: true });
  });
});
