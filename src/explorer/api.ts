/** The explorer's calls to the store's HTTP API, at the path the server wrote into the page. */

export interface EnvelopeError {
  code: string;
  message: string;
  field?: string;
}

/** The store's answer envelope, as far as the explorer reads it. */
export interface Envelope<T = Doc> {
  data: T[];
  cursor: string | null;
  count: number;
  total: number;
  success: boolean;
  message: string;
  errors: EnvelopeError[];
  issues: { message: string }[];
}

export type Doc = Record<string, unknown> & { id?: string };

export interface FieldSchema {
  name: string;
  type: string;
}

const base = document.querySelector<HTMLMetaElement>('meta[name="consolidata-api"]')?.content ?? 'api';

/** The absolute URL of an API route, e.g. `apiUrl('/data/types')`. */
export function apiUrl(path: string): string {
  return new URL(`${base}${path}`, location.href).href;
}

/** Calls a route; the browser sends the credentials it already holds for this origin (HTTP Basic included). */
export async function call<T = Doc>(path: string, body?: unknown): Promise<Envelope<T>> {
  const init: RequestInit = body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const res = await fetch(apiUrl(path), init);
  try {
    return (await res.json()) as Envelope<T>;
  } catch {
    return { data: [], cursor: null, count: 0, total: 0, success: false, message: `HTTP ${res.status}`, errors: [{ code: 'INVALID_REQUEST', message: `HTTP ${res.status}: not a JSON answer` }], issues: [] };
  }
}

/** One page of a query (`POST /data/query`). */
export function query<T = Doc>(type: string, q: unknown, options: Record<string, unknown> = {}): Promise<Envelope<T>> {
  return call<T>('/data/query', { type, query: q, options });
}

/** Every match of a query, page by page along the cursor; `onPage` sees each page as it arrives. */
export async function queryAll<T = Doc>(type: string, q: unknown, options: Record<string, unknown>, onPage?: (page: T[], total: number) => void): Promise<Envelope<T>> {
  const data: T[] = [];
  let page: Envelope<T>;
  let cursor: string | null = null;
  do {
    page = await query<T>(type, q, { limit: 10_000, ...options, ...(cursor ? { cursor } : {}) });
    if (!page.success) return page;
    data.push(...page.data);
    onPage?.(page.data, page.total);
    cursor = page.cursor;
  } while (cursor);
  return { ...page, data, count: data.length };
}

/** The envelope's errors as a list a user can act on: `field: message`. */
export function errorList(env: Envelope<unknown>): HTMLUListElement {
  const ul = h('ul', { class: 'errors', role: 'alert' });
  for (const e of env.errors.length ? env.errors : [{ code: '', message: env.message }]) {
    const li = h('li', { 'data-code': e.code, ...(e.field ? { 'data-field': e.field } : {}) }, e.field ? `${e.field}: ${e.message}` : e.message);
    ul.append(li);
  }
  return ul;
}

/** A DOM element with attributes and children: the page's only templating. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}
