/** The query view: types with their counts and schemas, a query editor, options, results paged by cursor, one document. */
import { call, errorList, h, query, type Doc, type Envelope, type FieldSchema } from './api.js';

interface State {
  type: string;
  text: string;
  sortBy: string;
  sortOrder: string;
  limit: string;
  fields: string;
  /** Cursors of the pages before the current one, so "Previous" goes back without counting again. */
  cursors: (string | null)[];
  cursor: string | null;
}

const state: State = { type: 'Well', text: '{}', sortBy: '', sortOrder: '1', limit: '50', fields: '', cursors: [], cursor: null };
let types: { name: string; total: number }[] | undefined;

/** Types with their counts: one `{limit: 1}` query each, read for its `total`. */
async function loadTypes(): Promise<{ name: string; total: number }[]> {
  const names = (await call<string>('/data/types')).data;
  const counts = await Promise.all(names.map((name) => query(name, {}, { limit: 1, fields: ['id'] })));
  return names.map((name, i) => ({ name, total: counts[i]!.total })).sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
}

/** Renders the view into `root`. */
export async function showQuery(root: HTMLElement): Promise<void> {
  types ??= await loadTypes();
  const list = h('ul', { class: 'types', id: 'types' });
  for (const t of types) {
    const a = h('a', { href: '#/query', 'data-type': t.name, ...(t.name === state.type ? { class: 'active' } : {}) }, t.name, h('span', { class: 'count' }, t.total.toLocaleString('en-US')));
    a.addEventListener('click', (e) => {
      e.preventDefault();
      Object.assign(state, { type: t.name, sortBy: '', fields: '', cursors: [], cursor: null });
      void showQuery(root);
    });
    list.append(h('li', {}, a));
  }
  const schema = (await call<FieldSchema>(`/data/schema?type=${encodeURIComponent(state.type)}`)).data;
  const editor = h('textarea', { id: 'query', spellcheck: 'false', rows: '6' });
  editor.value = state.text;
  const sortBy = h('select', { id: 'sortBy' }, h('option', { value: '' }, '(insertion order)'), ...schema.map((f) => h('option', { value: f.name }, f.name)));
  sortBy.value = state.sortBy;
  const sortOrder = h('select', { id: 'sortOrder' }, h('option', { value: '1' }, 'ascending'), h('option', { value: '-1' }, 'descending'));
  sortOrder.value = state.sortOrder;
  const limit = h('input', { id: 'limit', type: 'number', min: '1', value: state.limit });
  const fields = h('input', { id: 'fields', placeholder: 'pwi, name (all when empty)', value: state.fields });
  const run = h('button', { id: 'run', type: 'submit' }, 'Run');
  const results = h('section', { id: 'results' });
  const form = h(
    'form',
    { class: 'editor' },
    h('label', {}, `Query on ${state.type}`, editor),
    h('div', { class: 'options' }, h('label', {}, 'sortBy ', sortBy), h('label', {}, 'sortOrder ', sortOrder), h('label', {}, 'limit ', limit), h('label', {}, 'fields ', fields), run),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    Object.assign(state, { text: editor.value, sortBy: sortBy.value, sortOrder: sortOrder.value, limit: limit.value, fields: fields.value, cursors: [], cursor: null });
    void runQuery(results);
  });
  const schemaTable = h('table', { class: 'schema' }, h('tbody', {}, ...schema.map((f) => h('tr', {}, h('td', {}, f.name), h('td', {}, f.type)))));
  root.replaceChildren(
    h('div', { class: 'query-view' }, h('aside', {}, h('h2', {}, 'Types'), list), h('div', { class: 'main' }, form, results), h('aside', { class: 'schema-pane' }, h('h2', {}, `${state.type} schema`), schemaTable)),
  );
  await runQuery(results);
}

function options(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (state.sortBy) out.sortBy = state.sortBy;
  if (state.sortBy) out.sortOrder = Number(state.sortOrder);
  if (state.limit) out.limit = Number(state.limit);
  const fields = state.fields.split(',').map((f) => f.trim()).filter(Boolean);
  if (fields.length) out.fields = fields;
  if (state.cursor) out.cursor = state.cursor;
  return out;
}

async function runQuery(out: HTMLElement): Promise<void> {
  let q: unknown;
  try {
    q = JSON.parse(state.text);
  } catch (e) {
    out.replaceChildren(h('ul', { class: 'errors', role: 'alert' }, h('li', { 'data-code': 'INVALID_JSON' }, `query: not JSON (${(e as Error).message})`)));
    return;
  }
  out.setAttribute('aria-busy', 'true');
  const env = await query(state.type, q, options());
  out.removeAttribute('aria-busy');
  if (!env.success) {
    out.replaceChildren(errorList(env));
    return;
  }
  out.replaceChildren(pager(env, out), table(env.data, out), h('pre', { id: 'document', class: 'document' }));
}

function pager(env: Envelope, out: HTMLElement): HTMLElement {
  const first = state.cursors.length * Number(state.limit || 0);
  const prev = h('button', { id: 'prev', type: 'button' }, 'Previous');
  const next = h('button', { id: 'next', type: 'button' }, 'Next');
  prev.disabled = state.cursors.length === 0;
  next.disabled = !env.cursor;
  prev.addEventListener('click', () => {
    state.cursor = state.cursors.pop() ?? null;
    void runQuery(out);
  });
  next.addEventListener('click', () => {
    state.cursors.push(state.cursor);
    state.cursor = env.cursor;
    void runQuery(out);
  });
  const shown = env.count ? `${(first + 1).toLocaleString('en-US')}–${(first + env.count).toLocaleString('en-US')}` : '0';
  return h('div', { class: 'pager' }, prev, h('span', { id: 'page-info', 'data-total': String(env.total), 'data-count': String(env.count) }, `${shown} of ${env.total.toLocaleString('en-US')}`), next);
}

/** A cell's short text: objects as compact JSON, cut to a readable length. */
function cell(v: unknown): string {
  if (v === undefined || v === null) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

function table(docs: Doc[], out: HTMLElement): HTMLTableElement {
  const columns = [...new Set(docs.slice(0, 50).flatMap((d) => Object.keys(d)))].slice(0, 14);
  const body = h('tbody');
  for (const d of docs) {
    const tr = h('tr', { 'data-id': String(d.id) }, ...columns.map((c) => h('td', {}, cell(d[c]))));
    tr.addEventListener('click', () => {
      const pre = out.querySelector<HTMLPreElement>('#document')!;
      pre.textContent = JSON.stringify(d, null, 2);
      const link = state.type === 'Well' && d.id ? h('a', { href: `#/well/${encodeURIComponent(String(d.id))}`, id: 'open-well' }, 'Open this well') : '';
      pre.prepend(link, link ? '\n' : '');
    });
    body.append(tr);
  }
  return h('table', { class: 'rows', id: 'rows' }, h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', {}, c)))), body);
}
