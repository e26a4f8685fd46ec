/**
 * A client generated from GET /api/openapi.json by real generators (openapi-typescript for the types, openapi-fetch
 * for the calls) runs the HTTP case table against a served store and gets the case table's answers; every answer and
 * every accepted request also matches the document's schemas (Ajv, JSON Schema 2020-12).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataStore } from '../../src/index.js';
import { createNodeHandler, type NodeHandler } from '../../src/http/index.js';
import { normaliseBasePath } from '../../src/http/route.js';
import { CASES, checkReply, seededStore, type HttpCase, type Reply } from './cases.js';

type Json = Record<string, any>;

let server: Server;
let origin: string;
let current: NodeHandler | undefined;
let doc: Json;
let compile: ReturnType<typeof schemasOf>;
const open: DataStore[] = [];

beforeAll(async () => {
  server = createServer((req, res) => current!(req, res));
  // Compiling the schemas holds the event loop for seconds: an idle keep-alive socket must outlive that.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  current = createNodeHandler(await fresh());
  doc = await (await fetch(`${origin}/api/openapi.json`)).json();
  compile = schemasOf(doc);
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  for (const s of open) await s.close();
});

async function fresh(): Promise<DataStore> {
  await open.pop()?.close();
  const store = await seededStore();
  open.push(store);
  return store;
}

/** The document's schemas under Ajv, its `#/components/schemas/X` references resolved as `api#/$defs/X`. */
function schemasOf(document: Json) {
  const ajv = new Ajv2020({ strict: true, strictTypes: false, strictTuples: false, allowMatchingProperties: true, allErrors: true, validateFormats: false });
  const local = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', '"api#/$defs/'));
  ajv.addSchema({ $id: 'api', $defs: local(document.components.schemas) });
  // Compiled once each: compiling is slow enough to stall the event loop the server shares.
  const compiled = new Map<string, ValidateFunction>();
  return (schema: unknown) => {
    const key = JSON.stringify(schema);
    if (!compiled.has(key)) compiled.set(key, ajv.compile(local(schema)));
    return compiled.get(key)!;
  };
}

/** The case's path split at the base path its options serve: the client's base URL, the route and its query. */
function target(c: HttpCase) {
  const base = normaliseBasePath(c.options?.basePath ?? '/api');
  const url = new URL(c.path, 'http://localhost');
  const inside = url.pathname === base || url.pathname.startsWith(`${base}/`);
  return {
    baseUrl: origin + (inside ? base : ''),
    route: inside ? url.pathname.slice(base.length) : url.pathname,
    query: Object.fromEntries(url.searchParams),
  };
}

/** The case sent through the generated client: its body as the client serialises it, or its raw bytes as they are. */
async function viaClient(c: HttpCase): Promise<Reply> {
  const { baseUrl, route, query } = target(c);
  const client = createClient<any>({ baseUrl });
  const headers: Record<string, string | null> = { ...c.headers };
  if (c.contentType !== undefined) headers['content-type'] = c.contentType;
  const init: Json = { params: { query }, headers, parseAs: 'json' };
  if (c.raw !== undefined) Object.assign(init, { body: c.raw, bodySerializer: (raw: unknown) => raw });
  else if (c.body !== undefined) init.body = c.body;
  const method = c.method as 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  const { data, error, response } = await client[method](route, init);
  return { status: response.status, headers: response.headers, env: data ?? error };
}

describe('the generated client runs the HTTP case table', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const store = await fresh();
      current = createNodeHandler(store, c.options);
      const reply = await viaClient(c);
      checkReply(c, reply);
      await c.check?.(reply, store);
      const { route } = target(c);
      const operation = doc.paths[route.replace(/\/$/, '')]?.[c.method.toLowerCase()];
      // A route or method the API does not have answers a plain envelope.
      const response = operation?.responses[String(reply.status)] ?? { content: { 'application/json': { schema: { $ref: '#/components/schemas/api.Envelope' } } } };
      const answer = compile(response.content['application/json'].schema);
      expect(answer(reply.env), JSON.stringify(answer.errors)).toBe(true);
      // What the server accepted, the document accepts too.
      const request = operation?.requestBody?.content['application/json'].schema;
      if (reply.env.success && request && c.body !== undefined) {
        const accepts = compile(request);
        expect(accepts(c.body), JSON.stringify(accepts.errors)).toBe(true);
      }
    });
  }
});

describe('the document refuses what the server refuses, where JSON Schema can say it', () => {
  const refused: [string, string, unknown][] = [
    ['an int32 field given text', 'request.Insert', { type: 'Well', data: [{ fracStages: 'many' }] }],
    ['an unknown operator', 'request.Query', { type: 'well', query: { fracStages: { Between: 1 } } }],
    ['an empty operator object', 'request.Query', { type: 'Well', query: { fracStages: {} } }],
    ['a regex on a number field', 'request.Query', { type: 'Well', query: { fracStages: { regex: '^1' } } }],
    ['bounds of three numbers', 'request.Query', { type: 'Well', query: { surfaceLoc: { bounds: [1, 2, 3] } } }],
    ['a latitude past 90', 'request.Insert', { type: 'Well', data: [{ surfaceLoc: { type: 'Point', coordinates: [0, 91] } }] }],
    ['an unknown option', 'request.Query', { type: 'Well', options: { limt: 1 } }],
    ['a sortOrder of 2', 'request.Query', { type: 'Well', options: { sortOrder: 2 } }],
    ['an unknown body key', 'request.Insert', { type: 'Well', datas: [] }],
    ['an unknown v1 request', 'request.V1', { type: 'Well', request: 'upsert' }],
    ['a metric of two functions', 'request.Aggregate', { type: 'Well', options: { metrics: { x: { sum: 'fracStages', avg: 'fracStages' } } } }],
    ['an hourly bucket', 'request.Aggregate', { type: 'Well', options: { groupBy: [{ field: 'spudDate', interval: 'hour' }] } }],
    ['distinct without its field', 'request.Distinct', { type: 'Well' }],
  ];
  for (const [what, schema, body] of refused) {
    it(what, () => {
      const check = compile({ $ref: `#/components/schemas/${schema}` });
      expect(check(body)).toBe(false);
    });
  }
});

describe('openapi-typescript types a client from the document', () => {
  it('generates types under which typed calls compile and wrong ones do not', async () => {
    const dir = join(process.cwd(), 'node_modules', '.cache', 'consolidata-openapi');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(doc as never)));
    // Each @ts-expect-error must meet an error, so the wrong calls are proven refused, the right ones accepted.
    writeFileSync(
      join(dir, 'client.ts'),
      `import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:8080/api' });
export async function calls() {
  const { data } = await client.POST('/data/query', { body: { type: 'Well', query: { fracStages: { gte: 20 }, basinName: 'Permian' }, options: { sortBy: 'spudDate', sortOrder: -1, limit: 10 } } });
  const total: number | undefined = data?.total;
  await client.GET('/data/schema', { params: { query: { type: 'Well' } } });
  await client.PATCH('/data', { body: { type: 'Well', query: { pwi: 'W1' }, body: { statusCurrent: 'Producing' } } });
  await client.POST('/v1/data', { body: { request: 'get', type: 'Well', query: null } });
  // @ts-expect-error sortOrder is 1, -1 or 0
  await client.POST('/data/query', { body: { type: 'Well', options: { sortOrder: 2 } } });
  // @ts-expect-error insert needs data
  await client.POST('/data', { body: { type: 'Well' } });
  // @ts-expect-error no such route
  await client.GET('/data/nope');
  return total;
}
export const well: components['schemas']['Well'] = { pwi: 'W1', fracStages: 20, spudDate: '2021-03-14', surfaceLoc: { type: 'Point', coordinates: [-101.9, 31.8] }, basinName: null };
// @ts-expect-error fracStages is a number
export const bad: components['schemas']['Well'] = { fracStages: 'many' };
export const condition: components['schemas']['Well.query'] = { fracStages: { Gte: 20 }, spudDate: { gte: '1/1/2020' }, surfaceLoc: { bounds: [-102, 31, -101, 32] } };
`,
    );
    const program = ts.createProgram([join(dir, 'client.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  });
});
