/** The `explorer` option of the HTTP adapter: the page's files under a path of the user's choice, beside the API. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStore } from '../../src/index.js';
import { basicAuth, createFetchHandler, createNodeHandler } from '../../src/http/index.js';
import { relativeApiPath } from '../../src/http/explorer.js';

let dir: string;
const store = DataStore.open();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'consolidata-explorer-files-'));
  mkdirSync(join(dir, 'built'));
  writeFileSync(join(dir, 'built/index.html'), '<meta name="consolidata-api" content="%API_PATH%">');
  writeFileSync(join(dir, 'built/app.js'), 'console.log(1)');
  writeFileSync(join(dir, 'secret.txt'), 'not served');
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  store.close();
});

const get = (handle: (r: Request) => Promise<Response>, path: string, init?: RequestInit) => handle(new Request(`http://localhost${path}`, init));

describe('explorer option', () => {
  it('serves the page under its path, telling it where the API is relative to itself', async () => {
    const handle = createFetchHandler(store, { explorer: { path: '/explore', dir: join(dir, 'built') } });
    const page = await get(handle, '/explore/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toBe('<meta name="consolidata-api" content="../api">');
    const script = await get(handle, '/explore/app.js');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toBe('console.log(1)');
    // Without the trailing slash the page's relative URLs would miss its folder.
    const bare = await get(handle, '/explore');
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('explore/');
    // The API is where it was.
    expect(((await (await get(handle, '/api/data/types')).json()) as { data: string[] }).data).toContain('Well');
  });

  it('answers only its own files: anything else under its path is 404 NOT_FOUND, a write 405', async () => {
    const handle = createFetchHandler(store, { explorer: { path: '/explore', dir: join(dir, 'built') } });
    for (const path of ['/explore/secret.txt', '/explore/../secret.txt', '/explore/%2e%2e/secret.txt', '/explore/nested/app.js']) {
      const res = await get(handle, path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe('NOT_FOUND');
    }
    const post = await get(handle, '/explore/app.js', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(((await post.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('at the root, leaves the paths under the API to the API', async () => {
    const handle = createFetchHandler(store, { explorer: { path: '/', dir: join(dir, 'built') } });
    const res = await get(handle, '/api/nope', { method: 'POST' });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { errors: { code: string; message: string }[] }).errors[0]).toMatchObject({ code: 'NOT_FOUND', message: 'no route POST /api/nope' });
    expect((await get(handle, '/app.js')).status).toBe(200);
  });

  it('says the explorer is not built when its folder lacks the page', async () => {
    const handle = createFetchHandler(store, { explorer: { path: '/', dir: join(dir, 'missing') } });
    const res = await get(handle, '/');
    expect(res.status).toBe(404);
    const body = (await res.json()) as { errors: { code: string; message: string }[] };
    expect(body.errors[0]?.code).toBe('NOT_FOUND');
    expect(body.errors[0]?.message).toMatch(/explorer is not built .*npm run build/);
  });

  it('asks for the same credentials as the API', async () => {
    const handle = createFetchHandler(store, { explorer: { path: '/', dir: join(dir, 'built') }, authenticate: basicAuth({ app: 'secret' }) });
    const refused = await get(handle, '/');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Basic /);
    const ok = await get(handle, '/', { headers: { authorization: `Basic ${Buffer.from('app:secret').toString('base64')}` } });
    expect(ok.status).toBe(200);
  });

  it('as node middleware, passes on the paths it does not serve', async () => {
    const handler = createNodeHandler(store, { explorer: { path: '/explore', dir: join(dir, 'built') } });
    let passed = 0;
    handler({ url: '/health', method: 'GET', headers: {} } as never, {} as never, () => passed++);
    expect(passed).toBe(1);
    // Mounted at the root it still serves only the page and its files: the host's other routes stay the host's.
    const atRoot = createNodeHandler(store, { explorer: { path: '/', dir: join(dir, 'built') } });
    for (const url of ['/health', '/users/7', '/secret.txt']) atRoot({ url, method: 'GET', headers: {} } as never, {} as never, () => passed++);
    expect(passed).toBe(4);
  });

  it('refuses an explorer option that is not a path', () => {
    expect(() => createFetchHandler(store, { explorer: 42 as never })).toThrow(/explorer must be a path/);
  });

  it('points the page at the API relative to its own folder', () => {
    expect(relativeApiPath('', '/api')).toBe('api');
    expect(relativeApiPath('/explore', '/api')).toBe('../api');
    expect(relativeApiPath('/tools/explore', '')).toBe('../..');
    expect(relativeApiPath('', '')).toBe('.');
  });
});
