/** The routes describing the API: the OpenAPI document of the store served, and its reference page. */
import { Catalogue } from '../catalogue/index.js';
import { envelope, type Envelope } from '../envelope.js';
import { renderReference } from './docs.js';
import { openApiDocument } from './openapi.js';
import { STATUS, type Described, type Site, type Streamed } from './route.js';
import type { StoreLike } from '../core/store-like.js';
import { listed, type CoreRequest } from './types.js';

/** The catalogue a store serves, read through its own `types` and `schema` answers (so a pool's too). */
async function catalogueOf(store: StoreLike): Promise<Catalogue | Envelope<unknown>> {
  const types = await store.types();
  if (!types.success) return types;
  const shape: Record<string, Record<string, string>> = {};
  for (const name of types.data as string[]) {
    const schema = await store.schema(name);
    if (!schema.success) return schema;
    shape[name] = Object.fromEntries((schema.data as { name: string; type: string }[]).map((f) => [f.name, f.type]));
  }
  return new Catalogue(shape);
}

/** Whether the store keeps a change feed: a feed that is on answers a read of nothing at once. */
async function hasFeed(store: StoreLike): Promise<boolean> {
  if (!store.changes || !store.watch) return false;
  return (await store.changes(undefined, { limit: 1 })).success;
}

/** The document (its JSON text, and its pages by link as they are rendered), generated once per feed state. */
async function described(store: StoreLike, site: Site): Promise<Described | Envelope<unknown>> {
  const asked = (site.feed ??= hasFeed(store));
  // A check that failed (the store busy, a lost connection) is asked again next time.
  asked.catch(() => {
    if (site.feed === asked) site.feed = undefined;
  });
  const feed = await asked;
  const known = site.described.get(feed);
  if (known) return known;
  const catalogue = await catalogueOf(store);
  if (!(catalogue instanceof Catalogue)) return catalogue;
  const doc = openApiDocument(catalogue, { basePath: site.basePath, changeFeed: feed, authScheme: site.authScheme, alwaysOk: site.alwaysOk, statusOf: (code) => STATUS[code] });
  const entry: Described = { json: JSON.stringify(doc), pages: new Map() };
  site.described.set(feed, entry);
  return entry;
}

/** One text as an answer the bridges write whole. */
function text(body: string, contentType: string, extra: Record<string, string> = {}): Streamed {
  return {
    head: envelope(),
    body: listed([body]),
    headers: { 'content-type': contentType, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...extra },
  };
}

/** `GET /openapi.json`: the OpenAPI 3.1 document of the store served. */
export async function describeApi(store: StoreLike, site: Site): Promise<Envelope<unknown> | Streamed> {
  const doc = await described(store, site);
  return 'json' in doc ? text(doc.json, 'application/json; charset=utf-8') : doc;
}

/** `GET /docs`: the document as a self-contained HTML page; it loads nothing, so it runs no script at all. */
export async function referencePage(store: StoreLike, site: Site, req: CoreRequest): Promise<Envelope<unknown> | Streamed> {
  const doc = await described(store, site);
  if (!('json' in doc)) return doc;
  // Relative, so the link holds wherever the adapter is mounted (Express strips its mount path from the URL).
  const link = req.path.endsWith('/') ? '../openapi.json' : 'openapi.json';
  // Rendering takes tens of milliseconds on the thread that serves every request: once per link.
  let page = doc.pages.get(link);
  if (page === undefined) doc.pages.set(link, (page = renderReference(JSON.parse(doc.json), link)));
  const csp = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  return text(page, 'text/html; charset=utf-8', { 'content-security-policy': csp });
}
