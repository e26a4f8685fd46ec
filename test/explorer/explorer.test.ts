/**
 * The explorer in a real browser (Debian's Chromium through playwright-core) against `serve --sample` with the
 * change feed and Well history on: each test drives the page as a person would and asserts on what the page shows,
 * against the same request made over HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import booleanPointInPolygon from '@turf/boolean-point-in-polygon';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeBundles } from '../pool/helpers.js';
import { browserOnce, buildPage, openPage, serveWith } from './browser.js';

interface Envelope {
  success: boolean;
  data: { id: string; [k: string]: unknown }[];
  total: number;
  count: number;
  cursor: string | null;
  errors: { code: string; field?: string }[];
}

let dir: string;
let built: Awaited<ReturnType<typeof buildPage>>;
let server: Awaited<ReturnType<typeof serveWith>>;
const browser = browserOnce();
let context: BrowserContext | undefined;

/** A query over HTTP, as another client makes it; without `limit`, every match. */
async function httpQuery(type: string, query: unknown, options: Record<string, unknown> = {}): Promise<Envelope> {
  const res = await fetch(`${server.url}/data/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type, query, options }) });
  return (await res.json()) as Envelope;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'consolidata-explorer-'));
  built = await buildPage();
  server = await serveWith(dir, built.dir, { sample: true, journal: { changeFeed: true, history: ['Well'] } });
}, 120_000);

afterAll(async () => {
  await browser.close();
  await server?.stop(100);
  built?.remove();
  removeBundles();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function open(hash: string): Promise<{ page: Page; errors: string[] }> {
  context ??= await (await browser.get()).newContext({ viewport: { width: 1280, height: 800 } });
  const opened = await openPage(context);
  await opened.page.goto(`${server.origin}/${hash}`);
  return opened;
}

describe('the explorer at / of consolidata serve', () => {
  it('loads with no console error, listing every type with its count, and the first page of Wells', async () => {
    const { page, errors } = await open('');
    await page.waitForSelector('#rows tbody tr');
    const paint = await page.evaluate(() => ({
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
      rows: performance.now(),
    }));
    console.log(`explorer on the 87,840-document sample: first contentful paint ${paint.fcp.toFixed(0)} ms, first rows shown ${paint.rows.toFixed(0)} ms after navigation`);
    const counts = await page.$$eval('#types a', (as) => Object.fromEntries(as.map((a) => [a.getAttribute('data-type'), a.querySelector('.count')!.textContent])));
    expect(counts.Well).toBe((await httpQuery('Well', {}, { limit: 1 })).total.toLocaleString('en-US'));
    expect(counts.DailyProduction).toBe('87,600');
    expect(await page.locator('#rows tbody tr').count()).toBe(50);
    expect(await page.textContent('.schema')).toContain('surfaceLoc');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('runs a query with its options and pages it by cursor, as the same requests over HTTP answer', async () => {
    const { page, errors } = await open('#/query');
    await page.waitForSelector('#rows tbody tr');
    const query = { basinName: 'Permian' };
    await page.fill('#query', JSON.stringify(query));
    await page.selectOption('#sortBy', 'pwi');
    await page.selectOption('#sortOrder', '-1');
    await page.fill('#limit', '10');
    await page.fill('#fields', 'pwi, name');
    await page.click('#run');
    await page.waitForSelector('#page-info[data-count="10"]');
    const first = await httpQuery('Well', query, { sortBy: 'pwi', sortOrder: -1, limit: 10, fields: ['pwi', 'name'] });
    const ids = () => page.$$eval('#rows tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-id')));
    expect(await ids()).toEqual(first.data.map((d) => d.id));
    expect(await page.getAttribute('#page-info', 'data-total')).toBe(String(first.total));
    expect(await page.$$eval('#rows th', (ths) => ths.map((th) => th.textContent))).toEqual(['id', 'pwi', 'name']);
    await page.click('#next');
    await page.waitForFunction((id) => document.querySelector('#rows tbody tr')?.getAttribute('data-id') !== id, first.data[0]!.id);
    const second = await httpQuery('Well', query, { sortBy: 'pwi', sortOrder: -1, limit: 10, fields: ['pwi', 'name'], cursor: first.cursor });
    expect(await ids()).toEqual(second.data.map((d) => d.id));
    // One document as formatted JSON.
    await page.click(`#rows tbody tr[data-id="${second.data[0]!.id}"]`);
    expect(JSON.parse((await page.textContent('#document'))!.replace(/^Open this well\n/, ''))).toEqual(second.data[0]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows the store's validation errors, with their field, and no rows", async () => {
    const { page } = await open('#/query');
    await page.waitForSelector('#rows tbody tr');
    const bad = { spudDate: { gte: 'yesterday' } };
    await page.fill('#query', JSON.stringify(bad));
    await page.click('#run');
    await page.waitForSelector('#results .errors li');
    const expected = (await httpQuery('Well', bad, { limit: 50 })).errors[0]!;
    expect(expected.code).toBe('INVALID_QUERY');
    const shown = page.locator('#results .errors li').first();
    expect(await shown.getAttribute('data-code')).toBe('INVALID_QUERY');
    expect(await shown.getAttribute('data-field')).toBe(expected.field);
    expect(await shown.textContent()).toContain(`${expected.field}: `);
    expect(await page.locator('#rows').count()).toBe(0);
    await page.close();
  });

  it('maps Well.surfaceLoc, and a polygon drawn on it selects the ids the same polygon query answers over HTTP', async () => {
    const { page, errors } = await open('#/map');
    await page.waitForSelector('#map[data-points="240"]');
    // A triangle over part of the Permian sample (lon -103.6..-101.2, lat 31..32.6): some of its wells, not all.
    const corners: [number, number][] = [[-104, 30.8], [-101, 30.8], [-104, 33]];
    const box = (await page.locator('#map').boundingBox())!;
    const pixels = await page.evaluate((c) => c.map(([lon, lat]) => (window as unknown as { explorerMap: { project: (a: number, b: number) => [number, number] } }).explorerMap.project(lon, lat)), corners);
    await page.click('button[data-tool="polygon"]');
    await page.mouse.click(box.x + pixels[0]![0], box.y + pixels[0]![1]);
    await page.mouse.click(box.x + pixels[1]![0], box.y + pixels[1]![1]);
    await page.mouse.dblclick(box.x + pixels[2]![0], box.y + pixels[2]![1]);
    await page.waitForSelector('.selection[data-count]');
    const selection = JSON.parse((await page.textContent('#selection-query'))!) as { surfaceLoc: { polygon: [number, number][][] } };
    const ring = selection.surfaceLoc.polygon[0]!;
    expect(ring).toHaveLength(4);
    const shownIds = (await page.$$eval('#selected li', (lis) => lis.map((li) => li.getAttribute('data-id')!))).sort();
    const answer = await httpQuery('Well', selection, { fields: ['surfaceLoc'] });
    expect(shownIds).toEqual(answer.data.map((d) => d.id).sort());
    // The drawn shape is the one clicked: every selected well lies inside the triangle, and only some Permian wells do.
    const permian = await httpQuery('Well', { basinName: 'Permian' }, { fields: ['surfaceLoc'] });
    const triangle = { type: 'Polygon' as const, coordinates: [[...corners, corners[0]!]] };
    const inside = permian.data.filter((d) => booleanPointInPolygon((d.surfaceLoc as { coordinates: [number, number] }).coordinates, triangle)).length;
    expect(answer.count).toBeGreaterThan(0);
    expect(answer.count).toBeLessThan(permian.count);
    // Corners are unprojected from pixels: a well within a pixel of an edge may fall either side of it.
    expect(Math.abs(answer.count - inside)).toBeLessThanOrEqual(2);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a box drawn on the map selects the ids the same bounds query answers over HTTP', async () => {
    const { page } = await open('#/map');
    await page.waitForSelector('#map[data-points="240"]');
    const box = (await page.locator('#map').boundingBox())!;
    const [[x0, y0], [x1, y1]] = await page.evaluate(() => {
      const m = (window as unknown as { explorerMap: { project: (a: number, b: number) => [number, number] } }).explorerMap;
      return [m.project(-106, 41), m.project(-103.9, 39)];
    });
    await page.click('button[data-tool="box"]');
    await page.mouse.move(box.x + x0, box.y + y0);
    await page.mouse.down();
    await page.mouse.move(box.x + x1, box.y + y1, { steps: 5 });
    await page.mouse.up();
    await page.waitForSelector('.selection[data-count]');
    const selection = JSON.parse((await page.textContent('#selection-query'))!) as { surfaceLoc: { bounds: number[] } };
    expect(selection.surfaceLoc.bounds).toHaveLength(4);
    const shownIds = (await page.$$eval('#selected li', (lis) => lis.map((li) => li.getAttribute('data-id')!))).sort();
    const answer = await httpQuery('Well', selection, { fields: ['id'] });
    expect(shownIds).toEqual(answer.data.map((d) => d.id).sort());
    // The box covers part of the DJ basin's sample (lon -105..-103.8): some wells, every one of them DJ.
    expect(answer.count).toBeGreaterThan(0);
    const basins = await httpQuery('Well', { id: { in: shownIds } }, { fields: ['basinName'] });
    expect(new Set(basins.data.map((d) => d.basinName))).toEqual(new Set(['DJ']));
    await page.close();
  });

  it("a well's page charts its daily oil, gas and water, one point a day, and lists its history", async () => {
    const [well] = (await httpQuery('Well', { pwi: 'SMP-0007' })).data;
    // A change, so the history holds more than the insert.
    await fetch(`${server.url}/data`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Well', query: { id: well!.id }, body: { statusCurrent: 'Shut-In' } }) });
    const { page, errors } = await open(`#/well/${well!.id}`);
    await page.waitForSelector('#production[data-points] .uplot canvas');
    const days = (await httpQuery('DailyProduction', { pwi: 'SMP-0007' }, { limit: 1 })).total;
    expect(days).toBe(365);
    expect(await page.getAttribute('#production', 'data-points')).toBe(String(days));
    expect(await page.$$eval('#production .u-legend .u-label', (s) => s.map((e) => e.textContent))).toEqual(['Time', 'oil (bbl)', 'gas (Mcf)', 'water (bbl)']);
    await page.waitForSelector('#history[data-versions]');
    const versions = await httpQuery('VersionDocument', { type: 'Well', oid: well!.id });
    expect(versions.count).toBe(2);
    expect(await page.$$eval('#history tbody tr td:nth-child(2)', (tds) => tds.map((td) => td.textContent))).toEqual(['insert', 'update']);
    expect(JSON.parse((await page.textContent('#well-document'))!).pwi).toBe('SMP-0007');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a write made by another client in the live change feed', async () => {
    const { page, errors } = await open('#/feed');
    // An empty list is not visible: wait for the stream to be open, not shown.
    await page.waitForSelector('#feed[data-open]', { state: 'attached' });
    const res = await fetch(`${server.url}/data`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Well', data: [{ pwi: 'LIVE-1' }] }) });
    const id = ((await res.json()) as { insertedIds: string[] }).insertedIds[0]!;
    const item = page.locator(`#feed li[data-id="${id}"]`);
    await item.waitFor();
    expect(await item.getAttribute('data-op')).toBe('insert');
    expect(await item.getAttribute('data-type')).toBe('Well');
    expect(errors).toEqual([]);
    await page.close();
  });
});
