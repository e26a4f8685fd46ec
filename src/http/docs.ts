/** The reference page of the API: an OpenAPI document rendered as one self-contained HTML page (no script, no asset). */
import type { JsonSchema, OpenApiDocument } from './openapi.js';

const esc = (s: unknown): string =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** `code` spans for backquoted words, as the document's descriptions write them. */
const prose = (s: unknown): string => esc(s ?? '').replace(/`([^`]+)`/g, '<code>$1</code>');

const anchor = (name: string) => `schema-${name.replace(/[^A-Za-z0-9_.-]/g, '_')}`;

/** A schema in one line: `Well[]`, `string | null`, `1 | -1 | 0`, with links to named schemas. */
function shape(schema: JsonSchema | undefined): string {
  if (!schema || Object.keys(schema).filter((k) => k !== 'description').length === 0) return 'any';
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return `<a href="#${anchor(name)}">${esc(name)}</a>`;
  }
  if ('const' in schema) return `<code>${esc(JSON.stringify(schema.const))}</code>`;
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(' | ');
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (union) return union.map(shape).join(' | ');
  if (Array.isArray(schema.allOf)) return (schema.allOf as JsonSchema[]).filter((s) => s.$ref).map(shape).join(' & ') || 'object';
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  return types
    .map((t) => {
      if (t === 'array') {
        if (Array.isArray(schema.prefixItems)) return `[${(schema.prefixItems as JsonSchema[]).map(shape).join(', ')}]`;
        const item = shape(schema.items as JsonSchema | undefined);
        return item.includes(' ') ? `(${item})[]` : `${item}[]`;
      }
      const bounds = [schema.minimum !== undefined ? `≥ ${schema.minimum}` : '', schema.maximum !== undefined ? `≤ ${schema.maximum}` : ''].filter(Boolean).join(', ');
      const format = schema.format ? ` (${esc(schema.format)}${bounds ? `, ${bounds}` : ''})` : bounds ? ` (${bounds})` : '';
      const pattern = schema.pattern ? ` matching <code>${esc(schema.pattern)}</code>` : '';
      return `${esc(t ?? 'any')}${format}${pattern}`;
    })
    .join(' | ');
}

/** A table of an object schema's properties (and pattern properties). */
function properties(schema: JsonSchema): string {
  const props = Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>);
  const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, JsonSchema>).filter(([p]) => !props.some(([n]) => p === `^${n.replace(/[A-Za-z]/g, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`)}$`));
  if (!props.length && !patterns.length) return '';
  const required = new Set((schema.required ?? []) as string[]);
  const rows = [
    ...props.map(([name, s]) => `<tr><td><code>${esc(name)}</code>${required.has(name) ? ' <b>required</b>' : ''}</td><td>${shape(s)}</td><td>${prose(s.description)}</td></tr>`),
    ...patterns.map(([p, s]) => `<tr><td>keys matching <code>${esc(p)}</code></td><td>${shape(s)}</td><td>${prose(s.description)}</td></tr>`),
  ];
  return `<table><tr><th>key</th><th>value</th><th></th></tr>${rows.join('')}</table>`;
}

function schemaSection(name: string, schema: JsonSchema): string {
  const byType = Array.isArray(schema.allOf) && (schema.allOf as JsonSchema[]).some((s) => s.if) ? '<p>Its parts follow its <code>type</code>: the schemas of that type apply.</p>' : '';
  const table = properties(schema);
  const summary = table ? '' : `<p>${shape(schema)}</p>`;
  return `<section id="${anchor(name)}"><h3>${esc(name)}</h3><p>${prose(schema.description)}</p>${summary}${table}${byType}</section>`;
}

function operationSection(path: string, method: string, op: JsonSchema): string {
  const params = (op.parameters ?? []) as JsonSchema[];
  const paramTable = params.length
    ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>value</th><th></th></tr>${params
        .map((p) => `<tr><td><code>${esc(p.name)}</code>${p.required ? ' <b>required</b>' : ''}</td><td>${esc(p.in)}</td><td>${shape(p.schema as JsonSchema)}</td><td>${prose(p.description)}</td></tr>`)
        .join('')}</table>`
    : '';
  const body = (op.requestBody as { content: Record<string, { schema: JsonSchema }> } | undefined)?.content['application/json']?.schema;
  const bodyLine = body ? `<h4>Body</h4><p>application/json: ${shape(body)}</p>` : '';
  const responses = Object.entries(op.responses as Record<string, { description: string; content?: Record<string, { schema: JsonSchema }> }>)
    .map(([status, r]) => `<tr><td>${esc(status)}</td><td>${Object.entries(r.content ?? {}).map(([type, c]) => `${esc(type)}: ${shape(c.schema)}`).join('<br>')}</td><td>${prose(r.description)}</td></tr>`)
    .join('');
  return `<section id="op-${esc(op.operationId)}"><h3><span class="m">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code> — ${esc(op.summary)}</h3><p>${prose(op.description)}</p>${paramTable}${bodyLine}<h4>Responses</h4><table><tr><th>status</th><th>content</th><th></th></tr>${responses}</table></section>`;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2230}main{max-width:72rem;margin:auto;padding:1rem 2rem}
h1{margin-bottom:0}h2{border-bottom:2px solid #d7dbe5;margin-top:2.5rem}h3{margin:1.8rem 0 .3rem}h4{margin:.8rem 0 .2rem}
table{border-collapse:collapse;width:100%;font-size:14px}td,th{border-bottom:1px solid #e4e7ee;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{color:#5a6275;font-weight:600}code{background:#f2f4f8;padding:0 .2rem;border-radius:3px}.m{background:#1d4ed8;color:#fff;padding:0 .4rem;border-radius:3px;font-size:13px}
nav ul{columns:3;padding-left:1.2rem}a{color:#1d4ed8}`;

/**
 * The HTML reference page of an OpenAPI document: operations by tag, then every schema; `specLink` is the URL of
 * the JSON document, linked from the page.
 * @example renderReference(openApiDocument(catalogue, options), 'openapi.json')
 */
export function renderReference(doc: OpenApiDocument, specLink: string): string {
  const ops: { tag: string; path: string; method: string; op: JsonSchema }[] = [];
  for (const [path, item] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(item)) ops.push({ tag: (op.tags as string[])[0]!, path, method, op });
  const server = doc.servers[0]!.url;
  const auth = doc.components.securitySchemes
    ? `<p>Every route requires HTTP ${esc(Object.values(doc.components.securitySchemes).map((s) => s.scheme).join(', '))} authentication.</p>`
    : '';
  const tags = doc.tags
    .map((t) => {
      const list = ops.filter((o) => o.tag === t.name);
      return list.length ? `<h2 id="tag-${esc(t.name)}">${esc(t.name)}</h2><p>${prose(t.description)}</p>${list.map((o) => operationSection(o.path, o.method, o.op)).join('')}` : '';
    })
    .join('');
  const names = Object.keys(doc.components.schemas);
  const types = names.filter((n) => !n.includes('.'));
  const nav = `<nav><h2>Contents</h2><ul>${ops.map((o) => `<li><a href="#op-${esc(o.op.operationId)}">${esc(o.method.toUpperCase())} ${esc(o.path)}</a></li>`).join('')}</ul>
<h3>Document types</h3><ul>${types.map((n) => `<li><a href="#${anchor(n)}">${esc(n)}</a></li>`).join('')}</ul></nav>`;
  const schemas = names.map((n) => schemaSection(n, doc.components.schemas[n]!)).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(doc.info.title)}</title><style>${STYLE}</style></head><body><main>
<h1>${esc(doc.info.title)}</h1><p>Version ${esc(doc.info.version)} · OpenAPI ${esc(doc.openapi)} · <a href="${esc(specLink)}">openapi.json</a> · routes under <code>${esc(server)}</code></p>
<p>${prose(doc.info.description)}</p>${auth}${nav}${tags}<h2 id="schemas">Schemas</h2>${schemas}</main></body></html>`;
}
