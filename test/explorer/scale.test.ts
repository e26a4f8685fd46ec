/**
 * The explorer behind --basic-auth, and its map with 100k Wells: the frames per second while panning are
 * measured and printed, not asserted (timings depend on the machine).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore } from '../../src/store.js';
import { sampleData } from '../../src/sample.js';
import { removeBundles } from '../pool/helpers.js';
import { browserOnce, buildPage, openPage, serveWith } from './browser.js';

let dir: string;
let built: Awaited<ReturnType<typeof buildPage>>;
const browser = browserOnce();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'consolidata-explorer-scale-'));
  built = await buildPage();
}, 120_000);

afterAll(async () => {
  await browser.close();
  built?.remove();
  removeBundles();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the explorer', () => {
  it('sits behind --basic-auth: without credentials the page answers 401, with them the page and its API calls work', async () => {
    const apps = join(dir, 'apps.json');
    writeFileSync(apps, JSON.stringify({ viewer: 'secret' }));
    const server = await serveWith(join(dir, 'auth'), built.dir, { basicAuthFile: apps, db: join(dir, 'auth.db'), sample: true });
    try {
      // Headless Chromium gives up on a challenge it has no credentials for: ask as a plain client.
      for (const path of ['/', '/app.js', '/counties-10m.json']) {
        const refused = await fetch(`${server.origin}${path}`);
        expect(refused.status).toBe(401);
        expect(refused.headers.get('www-authenticate')).toMatch(/^Basic /);
        expect(((await refused.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe('UNAUTHORIZED');
      }
      const context = await (await browser.get()).newContext({ httpCredentials: { username: 'viewer', password: 'secret' } });
      const { page, errors } = await openPage(context);
      const answered = await page.goto(`${server.origin}/`);
      expect(answered?.status()).toBe(200);
      await page.waitForSelector('#rows tbody tr');
      expect(await page.textContent('#types a[data-type="Well"] .count')).toBe('240');
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await server.stop(100);
    }
  });

  it('maps 100k Wells and pans them (frames per second printed)', async () => {
    const db = join(dir, 'wells.db');
    const store = DynamicStore.open(db);
    const wells = sampleData(7, { wells: 100_000, days: 0 }).Well;
    expect((await store.insert('Well', wells)).count).toBe(100_000);
    await store.close();
    const server = await serveWith(dir, built.dir, { db });
    try {
      const context = await (await browser.get()).newContext({ viewport: { width: 1280, height: 800 } });
      const { page, errors } = await openPage(context);
      const started = Date.now();
      await page.goto(`${server.origin}/#/map`);
      await page.waitForSelector('#map[data-points="100000"]', { timeout: 120_000 });
      const loaded = Date.now() - started;
      // Drag across the map for two seconds, one mousemove per animation frame, counting the frames the map drew.
      const { frames, ms } = await page.evaluate(async () => {
        const canvas = document.querySelector<HTMLCanvasElement>('#map')!;
        const map = (window as unknown as { explorerMap: { frames: number } }).explorerMap;
        const r = canvas.getBoundingClientRect();
        const at = (dx: number) => ({ clientX: r.left + r.width / 2 + dx, clientY: r.top + r.height / 2 + dx / 3, bubbles: true });
        canvas.dispatchEvent(new MouseEvent('mousedown', at(0)));
        const before = map.frames;
        const t0 = performance.now();
        let i = 0;
        while (performance.now() - t0 < 2000) {
          await new Promise(requestAnimationFrame);
          canvas.dispatchEvent(new MouseEvent('mousemove', at(150 * Math.sin(i++ / 20))));
        }
        window.dispatchEvent(new MouseEvent('mouseup', at(0)));
        return { frames: map.frames - before, ms: performance.now() - t0 };
      });
      console.log(`map of 100,000 Wells: loaded in ${loaded} ms, panning at ${((frames * 1000) / ms).toFixed(1)} frames per second (${frames} frames in ${ms.toFixed(0)} ms)`);
      expect(frames).toBeGreaterThan(0);
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await server.stop(100);
    }
  }, 300_000);
});
