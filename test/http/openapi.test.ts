import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterEach, describe, expect, it } from 'vitest';
import { serve } from '../../src/cli/serve.js';
import { removeBundles, workerScript } from '../pool/helpers.js';
import { DataStore, type CatalogueShape, type OpenOptions } from '../../src/index.js';
import { basicAuth, createFetchHandler } from '../../src/http/index.js';
import { ERROR_CODES } from '../../src/envelope.js';
import type { HttpOptions } from '../../src/http/types.js';

const stores: DataStore<CatalogueShape>[] = [];

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/** A Fetch handler over a fresh in-memory store opened with `open`. */
function served(open: OpenOptions<CatalogueShape> = {}, http: HttpOptions = {}) {
  const store = DataStore.open<CatalogueShape>(':memory:', open);
  stores.push(store);
  const handle = createFetchHandler(store, http);
  return (path: string, init?: RequestInit) => handle(new Request(`http://localhost${path}`, init));
}

type Doc = Record<string, any>;

async function documentOf(open: OpenOptions<CatalogueShape> = {}, http: HttpOptions = {}, path = '/api/openapi.json'): Promise<Doc> {
  const res = await served(open, http)(path);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  return res.json();
}

const CUSTOM = { Sensor: { tag: 'String', reading: 'Double', count: 'Int32', ticks: 'Int64', at: 'DateTime', where: 'GeoPoint', state: 'JobStatus', labels: 'HashSet', meta: 'Dictionary' } };

describe('GET /api/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document (swagger-parser), for the built-in catalogue', async () => {
    const doc = await documentOf();
    expect(doc.openapi).toBe('3.1.0');
    // validate() dereferences in place: give it a copy, the assertions below read the original.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('is valid with a custom catalogue, a change feed, basic auth and another base path', async () => {
    const get = served({ types: CUSTOM, changeFeed: true }, { basePath: '/v5', authenticate: basicAuth({ app: 'pw' }) });
    // Unauthenticated, the document is refused like every route.
    const refused = await get('/v5/openapi.json');
    expect(refused.status).toBe(401);
    expect((await refused.json()).errors[0].code).toBe('UNAUTHORIZED');
    const res = await get('/v5/openapi.json', { headers: { authorization: `Basic ${Buffer.from('app:pw').toString('base64')}` } });
    expect(res.status).toBe(200);
    const authed = (await res.json()) as Doc;
    await expect(SwaggerParser.validate(structuredClone(authed) as never)).resolves.toBeDefined();
    expect(authed.servers[0].url).toBe('/v5');
    expect(authed.components.securitySchemes).toEqual({ auth: { type: 'http', scheme: 'basic' } });
    expect(authed.security).toEqual([{ auth: [] }]);
    expect(authed.paths['/data/changes'].get.responses['410']).toBeDefined();
    expect(authed.paths['/data/query'].post.responses['401']).toBeDefined();
  });

  it('has one schema per document type, its fields by kind: int32/int64 bounds, dates, GeoJSON, sets, enumerations, all nullable', async () => {
    const doc = await documentOf({ types: CUSTOM });
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas).filter((n) => !n.includes('.'))).toEqual(['Sensor']);
    const p = schemas.Sensor.properties;
    const inner = (f: string) => p[f].anyOf[0];
    for (const f of Object.keys(p)) expect(p[f].anyOf[1], f).toEqual({ type: 'null' });
    expect(inner('tag')).toEqual({ type: 'string' });
    expect(inner('reading')).toEqual({ type: 'number' });
    expect(inner('count')).toEqual({ type: 'integer', format: 'int32', minimum: -2147483648, maximum: 2147483647 });
    expect(inner('ticks')).toMatchObject({ type: 'integer', format: 'int64', maximum: Number.MAX_SAFE_INTEGER });
    expect(inner('at')).toEqual({ $ref: '#/components/schemas/api.DateTime' });
    expect(inner('where')).toEqual({ $ref: '#/components/schemas/api.GeoPoint' });
    expect(inner('state')).toEqual({ $ref: '#/components/schemas/api.Enumeration' });
    expect(inner('labels')).toMatchObject({ type: 'array', uniqueItems: true });
    expect(inner('meta')).toEqual({ type: 'object', additionalProperties: true });
    // The base fields every type has.
    expect(p.id.anyOf[0]).toEqual({ type: 'string' });
    expect(p.modifiedTimestamp.anyOf[0]).toMatchObject({ format: 'int64' });
  });

  it("describes each type's query: a condition per field by category, operators in any case, dotted paths into objects", async () => {
    const doc = await documentOf({ types: CUSTOM });
    const schemas = doc.components.schemas;
    const q = schemas['Sensor.query'];
    expect(q.properties.where).toEqual({ $ref: '#/components/schemas/condition.geopoint' });
    expect(q.properties.count).toEqual({ $ref: '#/components/schemas/condition.int32' });
    // The object-valued fields: the base fields' extra and ExtraElements, then the type's own.
    expect(Object.keys(q.patternProperties)).toEqual(['^(?:extra|ExtraElements|where|labels|meta)\\.']);
    const geoOps = schemas['condition.geopoint'].anyOf[3];
    expect(Object.keys(geoOps.properties)).toEqual(['eq', 'ne', 'in', 'lt', 'lte', 'gt', 'gte', 'bounds', 'polygon', 'near']);
    expect(geoOps.patternProperties['^[gG][tT][eE]$']).toBeDefined();
    expect(geoOps.additionalProperties).toBe(false);
    // regex tests strings: a number field has none.
    expect(schemas['condition.int32'].anyOf[3].properties.regex).toBeUndefined();
    expect(schemas['condition.string'].anyOf[3].properties.regex).toEqual({ $ref: '#/components/schemas/api.Regex' });
    expect(schemas['condition.date'].anyOf[3].properties.gte.anyOf[0]).toEqual({ $ref: '#/components/schemas/api.DateTime' });
    // A request's query follows its type.
    const query = schemas['request.Query'];
    expect(query.allOf[0]).toEqual({
      if: { required: ['type'], properties: { type: { type: 'string', pattern: '^[sS][eE][nN][sS][oO][rR]$' } } },
      then: { properties: { query: { $ref: '#/components/schemas/Sensor.query' } } },
    });
  });

  it('lists both route families and the statuses each answers, from the error codes', async () => {
    const doc = await documentOf();
    expect(Object.keys(doc.paths).sort()).toEqual(['/data', '/data/query', '/data/schema', '/data/types', '/docs', '/openapi.json', '/v1/data']);
    expect(Object.keys(doc.paths['/data'])).toEqual(['post', 'put', 'patch', 'delete']);
    expect(Object.keys(doc.paths['/data/schema'])).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/data'].post.responses)).toEqual(['200', '400', '409', '413', '415', '500', '503', '507']);
    expect(Object.keys(doc.paths['/data/types'].get.responses)).toEqual(['200', '500']);
    expect(doc.paths['/data'].post.responses['409'].description).toContain('DUPLICATE_KEY');
    expect(doc.components.schemas['api.ErrorCode'].enum).toEqual([...ERROR_CODES]);
    // No feed, no auth: neither is described.
    expect(doc.paths['/data/changes']).toBeUndefined();
    expect(doc.components.securitySchemes).toBeUndefined();
  });

  it('with alwaysOk every response is a 200 envelope', async () => {
    const doc = await documentOf({}, { alwaysOk: true });
    for (const item of Object.values(doc.paths) as Doc[]) for (const op of Object.values(item)) expect(Object.keys(op.responses)).toEqual(['200']);
  });
});

describe('GET /api/docs', () => {
  it('is an HTML page of every operation and type, loading nothing from anywhere', async () => {
    const res = await served()('/api/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    for (const op of ['POST</span> <code>/data/query', 'PATCH</span> <code>/data', 'POST</span> <code>/v1/data', 'GET</span> <code>/openapi.json']) expect(html).toContain(op);
    for (const type of ['Well', 'DailyProduction', 'Petron']) expect(html).toContain(`id="schema-${type}"`);
    expect(html).toContain('<a href="openapi.json">');
    expect(html).not.toMatch(/<script|<link|src=|url\(|@import|https?:\/\//);
  });

  it('requires credentials like every route when auth is on', async () => {
    const get = served({}, { authenticate: basicAuth({ app: 'pw' }) });
    const refused = await get('/api/docs');
    expect(refused.status).toBe(401);
    expect((await refused.json()).errors[0].code).toBe('UNAUTHORIZED');
    expect(refused.headers.get('www-authenticate')).toMatch(/^Basic/);
    const ok = await get('/api/docs', { headers: { authorization: `Basic ${Buffer.from('app:pw').toString('base64')}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Every route requires HTTP basic authentication.');
  });
});

describe('consolidata serve', () => {
  it('serves the document of its pooled store: the change feed when on, HTTP Basic when --basic-auth is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'consolidata-openapi-'));
    writeFileSync(join(dir, 'apps.json'), '{"etl-app":"secret"}');
    const running = await serve({
      db: join(dir, 'feed.db'),
      port: 0,
      host: '127.0.0.1',
      log: () => undefined,
      journal: { changeFeed: true },
      basicAuthFile: join(dir, 'apps.json'),
      workerScript: await workerScript(),
    });
    try {
      const refused = await fetch(`${running.url}/openapi.json`);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as Doc).errors[0].code).toBe('UNAUTHORIZED');
      const authorization = `Basic ${Buffer.from('etl-app:secret').toString('base64')}`;
      const doc = (await (await fetch(`${running.url}/openapi.json`, { headers: { authorization } })).json()) as Doc;
      expect(doc.servers[0].url).toBe('/api');
      expect(doc.components.securitySchemes.auth).toEqual({ type: 'http', scheme: 'basic' });
      expect(Object.keys(doc.paths['/data/changes'].get.responses['200'].content)).toEqual(['application/json', 'text/event-stream']);
      expect(doc.components.schemas.Well.properties.surfaceLoc.anyOf[0]).toEqual({ $ref: '#/components/schemas/api.GeoPoint' });
      const page = await fetch(`${running.url}/docs`, { headers: { authorization } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('GET</span> <code>/data/changes');
    } finally {
      await running.stop(100);
      rmSync(dir, { recursive: true, force: true });
      removeBundles();
    }
  });
});
