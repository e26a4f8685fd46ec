/**
 * The OpenAPI 3.1 description of the HTTP API, generated from a catalogue: pure data in, a JSON document out. Every
 * document type gets a JSON Schema (and one for its queries), every route of the routing core (route.ts ROUTES) an
 * operation with the statuses its error codes map to (route.ts STATUS).
 */
import type { Catalogue, FieldInfo, TypeInfo } from '../catalogue/index.js';
import type { Category } from '../catalogue/kinds.js';
import { ERROR_CODES, type ErrorCode } from '../envelope.js';
import { LIMITS } from '../limits.js';
import { VERSION } from '../version.js';
import type { RouteMethods } from './route.js';
import { V1_REQUESTS } from './types.js';

/** A JSON Schema (2020-12, as OpenAPI 3.1 has it), as plain data. */
export type JsonSchema = { [key: string]: unknown };

/** An OpenAPI 3.1 document, as plain data. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes?: Record<string, JsonSchema> };
  security?: Record<string, string[]>[];
  tags: { name: string; description: string }[];
}

export interface OpenApiOptions {
  /** The adapter's `basePath` (default `/api`): the document's server URL. */
  basePath?: string;
  /** The store keeps a change feed: `GET /data/changes` is described (else it answers 404, and is left out). */
  changeFeed?: boolean;
  /** The HTTP authentication scheme every route requires (`basic`, `bearer`); none: the API is open. */
  authScheme?: string;
  /** The adapter answers 200 whatever happened (`alwaysOk`): every response is a 200 envelope. */
  alwaysOk?: boolean;
  /** HTTP status of each error code (route.ts STATUS). */
  statusOf: (code: ErrorCode) => number;
}

/** An object of any keys (bare `type: object` reads to generators as an object of no keys). */
const OBJECT: JsonSchema = { type: 'object', additionalProperties: true };

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });

/** `get` → `[gG][eE][tT]`: names the API reads in any case, as a pattern (JSON Schema patterns have no `i` flag). */
export function anyCase(name: string): string {
  return name.replace(/[A-Za-z]/g, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`);
}

// ---- values of each field category ----------------------------------------------------------------------------

const INT32 = { type: 'integer', format: 'int32', minimum: -2147483648, maximum: 2147483647 };
// The store takes safe integers (JSON numbers exact in a double), not the whole int64 range.
const INT64 = { type: 'integer', format: 'int64', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };

/** A longitude and a latitude in degrees, as every position and box has them. */
const LONGITUDE: JsonSchema = { type: 'number', minimum: -180, maximum: 180 };
const LATITUDE: JsonSchema = { type: 'number', minimum: -90, maximum: 90 };

/** The shared schemas every document and query refers to. */
const SHARED: Record<string, JsonSchema> = {
  'api.DateTime': {
    type: 'string',
    format: 'date-time',
    description:
      'Stored and answered as ISO 8601 UTC with milliseconds (2024-05-01T00:00:00.000Z). Written and queried as ISO 8601 (a time without zone is UTC), YYYY-MM-DD or M/D/YYYY (UTC midnight); a date that does not exist is refused.',
    examples: ['2024-05-01T00:00:00.000Z', '2024-05-01', '5/1/2024'],
  },
  'api.Duration': {
    description: 'Seconds, or a "d.hh:mm:ss" string; stored as given.',
    anyOf: [{ type: 'number' }, { type: 'string', pattern: '^-?(\\d+\\.)?\\d{1,2}:\\d{2}:\\d{2}(\\.\\d{1,7})?$' }],
  },
  'api.Enumeration': { description: 'An enumeration: its name or its integer value.', anyOf: [{ type: 'string' }, { type: 'integer' }] },
  'api.Position': {
    type: 'array',
    description: '[longitude, latitude] in degrees (a third number, an altitude, is kept).',
    prefixItems: [LONGITUDE, LATITUDE],
    items: { type: 'number' },
    minItems: 2,
    maxItems: 3,
  },
  'api.Ring': {
    type: 'array',
    description: 'A closed ring: at least 4 positions, the last equal to the first.',
    items: ref('api.Position'),
    minItems: 4,
  },
  'api.GeoPoint': {
    type: 'object',
    description: 'A GeoJSON Point. Every GeoPoint field has a spatial index: queries take `bounds`, `polygon` and `near` on it.',
    required: ['type', 'coordinates'],
    properties: { type: { const: 'Point' }, coordinates: ref('api.Position') },
  },
  'api.GeoMultiPolygon': {
    type: 'object',
    description: 'A GeoJSON MultiPolygon.',
    required: ['type', 'coordinates'],
    properties: { type: { const: 'MultiPolygon' }, coordinates: { type: 'array', items: { type: 'array', items: ref('api.Ring'), minItems: 1 } } },
  },
  'api.Bounds': {
    type: 'array',
    description: 'The box spanned by two corners [x1, y1, x2, y2] (lon, lat), in either order, edges inclusive.',
    prefixItems: [LONGITUDE, LATITUDE, LONGITUDE, LATITUDE],
    minItems: 4,
    maxItems: 4,
  },
  'api.Polygon': {
    description: `GeoJSON rings (exterior first, then holes) or a GeoJSON Polygon; boundary inclusive, points in a hole excluded; at most ${LIMITS.polygonVertices} positions.`,
    anyOf: [
      { type: 'array', items: ref('api.Ring'), minItems: 1 },
      { type: 'object', required: ['type', 'coordinates'], properties: { type: { const: 'Polygon' }, coordinates: { type: 'array', items: ref('api.Ring'), minItems: 1 } } },
    ],
  },
  'api.Near': {
    type: 'object',
    description:
      'Points within maxDistance metres (and at least minDistance) of point along the sphere (haversine, radius 6,371,008.8 m), both inclusive. ' +
      'With sortBy naming the field, answers come nearest first (an extension of the service\'s API).',
    required: ['point', 'maxDistance'],
    properties: {
      point: { anyOf: [ref('api.Position'), { type: 'object', required: ['type', 'coordinates'], properties: { type: { const: 'Point' }, coordinates: ref('api.Position') } }] },
      maxDistance: { type: 'number', minimum: 0, description: 'Metres.' },
      minDistance: { type: 'number', minimum: 0, description: 'Metres (default 0).' },
    },
    additionalProperties: false,
  },
  'api.Regex': {
    type: 'string',
    maxLength: LIMITS.regexLength,
    description: 'An RE2 pattern, or "/pattern/flags" with flags from i m s; tests string values (and string elements of arrays). No backreferences or lookaround.',
    examples: ['^Smith', '/permian/i'],
  },
};

/** A field's value as the store takes and answers it, by category (README "Types"). */
const VALUES: Record<Category, JsonSchema> = {
  string: { type: 'string' },
  boolean: { type: 'boolean' },
  int32: INT32,
  int64: INT64,
  number: { type: 'number' },
  date: ref('api.DateTime'),
  duration: ref('api.Duration'),
  any: {},
  dict: OBJECT,
  nested: OBJECT,
  array: { type: 'array' },
  set: { type: 'array', uniqueItems: true, description: 'A set: duplicates are dropped on write, the first occurrence kept.' },
  geopoint: ref('api.GeoPoint'),
  geomultipolygon: ref('api.GeoMultiPolygon'),
  enum: ref('api.Enumeration'),
};

// ---- the query language -------------------------------------------------------------------------------------

const ANY_SCALAR: JsonSchema = { type: ['string', 'number', 'boolean'] };

/** Operand of eq / ne / in by category (src/query/types.ts EqualityOperands): untyped values take any JSON. */
const EQUALITY: Record<Category, JsonSchema> = {
  string: { type: 'string' },
  boolean: { type: 'boolean' },
  int32: { type: 'number' },
  int64: { type: 'number' },
  number: { type: 'number' },
  date: ref('api.DateTime'),
  enum: ref('api.Enumeration'),
  duration: ref('api.Duration'),
  any: {},
  dict: {},
  array: {},
  set: {},
  geopoint: {},
  geomultipolygon: {},
  nested: {},
};

/** Categories whose lt/lte/gt/gte compare as their own type; the others take any scalar. */
const TYPED_COMPARISON: ReadonlySet<Category> = new Set(['string', 'boolean', 'int32', 'int64', 'number', 'date', 'enum']);
/** Categories `regex` refuses: it tests strings. */
const NO_REGEX: ReadonlySet<Category> = new Set(['boolean', 'int32', 'int64', 'number', 'geopoint', 'geomultipolygon']);
const OBJECT_LIKE: ReadonlySet<Category> = new Set(['any', 'dict', 'array', 'set', 'geopoint', 'geomultipolygon', 'nested']);

/** The condition on a field of one category: a value (eq), an array (in), or an object of operators. */
function condition(cat: Category): JsonSchema {
  const eq = EQUALITY[cat];
  const compare = TYPED_COMPARISON.has(cat) ? eq : ANY_SCALAR;
  const ops: Record<string, JsonSchema> = {
    eq: { ...nullable(eq), description: 'equal to (null: null or missing)' },
    ne: { ...nullable(eq), description: 'not eq' },
    in: { type: 'array', items: nullable(eq), maxItems: LIMITS.inValues, description: 'eq one of the values ([] matches nothing)' },
    lt: nullable(compare),
    lte: nullable(compare),
    gt: nullable(compare),
    gte: nullable(compare),
  };
  if (!NO_REGEX.has(cat)) ops.regex = ref('api.Regex');
  if (cat === 'geopoint') Object.assign(ops, { bounds: ref('api.Bounds'), polygon: ref('api.Polygon'), near: ref('api.Near') });
  const operators: JsonSchema = {
    type: 'object',
    description: 'Operators, all applied together; names in any case (`gte`, `Gte`). An empty object or an unknown operator is INVALID_QUERY.',
    properties: ops,
    patternProperties: Object.fromEntries(Object.entries(ops).map(([name, schema]) => [`^${anyCase(name)}$`, schema])),
    additionalProperties: false,
    minProperties: 1,
  };
  // A plain object is read as operators, so an untyped field compares with an object through { eq: {...} }.
  const plain = OBJECT_LIKE.has(cat) ? ANY_SCALAR : eq;
  return { anyOf: [plain, { type: 'null' }, { type: 'array', items: nullable(eq), description: 'in' }, operators] };
}

const CATEGORIES = Object.keys(VALUES) as Category[];

/** Condition schemas, one per category. */
function conditions(): Record<string, JsonSchema> {
  return Object.fromEntries(CATEGORIES.map((cat) => [`condition.${cat}`, condition(cat)]));
}

const QUERY_DESCRIPTION =
  'Keys are field paths: a top-level field, or a dotted path into an object-valued field (`extra.source`, `tags.0`); ' +
  'conditions on several fields are ANDed. A plain value is eq, an array is in, an object holds operators. ' +
  'Operands are checked against the field kind (INVALID_QUERY naming the path); `bounds`/`polygon` on a field that is not a GeoPoint is ignored with an `issues` entry. ' +
  'Arrays on a path are traversed as MongoDB does; a missing value counts as null. There is no OR: run two queries (or use in). ' +
  `At most ${LIMITS.conditions} conditions; paths of at most ${LIMITS.nameLength} characters and ${LIMITS.pathSegments} segments. ` +
  'In strict mode (the default) a field the type does not have is UNKNOWN_FIELD.';

/** A document type's document: every field optional and nullable, as the store allows. */
function documentSchema(info: TypeInfo): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const f of info.fields.values()) properties[f.name] = { ...nullable(VALUES[f.category]), description: fieldDescription(f) };
  return {
    type: 'object',
    title: info.name,
    description: `A ${info.name} document. Every field is optional and may be null. In strict mode (the default) a field not listed here is UNKNOWN_FIELD; otherwise it is stored as untyped JSON.`,
    properties,
  };
}

function fieldDescription(f: FieldInfo): string {
  return f.category === 'nested' ? `${f.kind} (an object)` : f.kind;
}

/** A document type's query: a condition per field, and dotted paths into its object-valued fields. */
function querySchema(info: TypeInfo): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const deep: string[] = [];
  for (const f of info.fields.values()) {
    properties[f.name] = ref(`condition.${f.category}`);
    if (OBJECT_LIKE.has(f.category)) deep.push(f.name);
  }
  const schema: JsonSchema = { type: 'object', title: `${info.name} query`, description: QUERY_DESCRIPTION, properties };
  if (deep.length) schema.patternProperties = { [`^(?:${deep.join('|')})\\.`]: ref('condition.any') };
  return schema;
}

// ---- requests ---------------------------------------------------------------------------------------------------

const TYPE_NAME: JsonSchema = {
  type: 'string',
  description: 'A document type of the catalogue, in any case (`Well`, `well`); `Folder` is `Petron`. An unknown type is UNKNOWN_TYPE.',
};

const QUERY_OPTIONS: JsonSchema = {
  type: 'object',
  description: 'An unknown option is INVALID_REQUEST.',
  properties: {
    limit: { type: 'integer', minimum: 0, description: 'Documents per answer; 0 or absent: no limit.' },
    skip: { type: 'integer', minimum: 0 },
    sortBy: {
      anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 8, uniqueItems: true }],
      description:
        'A field path, or several (most significant first; an extension of the service\'s API). A GeoPoint field with a `near` condition sorts by distance. Ties break by insertion order; without sortBy, insertion order.',
    },
    sortOrder: {
      anyOf: [{ enum: [1, -1, 0] }, { type: 'array', items: { enum: [1, -1] }, minItems: 1, maxItems: 8 }],
      description: '1 ascending (the default with sortBy), -1 descending, 0 none; with several sortBy keys, one order for all or one per key.',
    },
    distance: { type: 'string', description: 'With one `near` condition: each document gets its distance in metres under this name (an extension of the service\'s API).' },
    cursor: { type: ['string', 'null'], description: 'The `cursor` of the previous page, with the same query and sort.' },
    fields: {
      type: 'array',
      items: { type: 'string' },
      minItems: 1,
      maxItems: LIMITS.fields,
      uniqueItems: true,
      description: 'Top-level fields to answer (besides `id`, always first).',
    },
    includeDeleted: { type: 'boolean', description: 'Include soft-deleted documents.' },
  },
  additionalProperties: false,
};

const WRITE_OPTIONS: JsonSchema = {
  type: 'object',
  properties: {
    atomic: { type: 'boolean', description: 'insert only: roll the whole request back when any document collides (default: insert the others).' },
    activityId: { type: 'string', description: 'The activity id of the write (also the `x-activity-id` header).' },
    keepStamps: { type: 'boolean', description: 'Keep the stamps a document carries (createdAt, updatedAt…) instead of setting them.' },
  },
};

/** `{ if: { type matches T }, then: { …T's schemas } }` for every type: a request's parts follow its `type`. */
function byType(catalogue: Catalogue, then: (name: string) => JsonSchema): JsonSchema[] {
  return catalogue.names.map((name) => ({
    if: { required: ['type'], properties: { type: { type: 'string', pattern: `^${anyCase(name)}$` } } },
    then: then(name),
  }));
}

const documents = (name: string): JsonSchema => ({ type: 'array', items: ref(name) });

function body(catalogue: Catalogue, properties: Record<string, JsonSchema>, required: string[], then?: (name: string) => JsonSchema): JsonSchema {
  const schema: JsonSchema = { type: 'object', required, properties, additionalProperties: false };
  if (then) schema.allOf = byType(catalogue, then);
  return schema;
}


function bodies(catalogue: Catalogue): Record<string, JsonSchema> {
  // Open here: the `<Type>.query` schema applies by `type`, and a type spelt otherwise (an alias) is not constrained.
  const query = { ...OBJECT, description: `A query: see the \`<Type>.query\` schemas. ${QUERY_DESCRIPTION}` };
  const docs = { type: 'array', items: OBJECT, description: 'Documents of `type` (see its schema).' };
  const fields = { ...OBJECT, description: 'The fields to set: top-level names or dotted paths; null sets null. MongoDB operators ($set) are refused.' };
  return {
    'request.Query': body(catalogue, { type: TYPE_NAME, query, options: QUERY_OPTIONS }, ['type'], (n) => ({ properties: { query: ref(`${n}.query`) } })),
    'request.Insert': body(catalogue, { type: TYPE_NAME, data: docs, options: WRITE_OPTIONS }, ['type', 'data'], (n) => ({ properties: { data: documents(n) } })),
    'request.Replace': body(catalogue, { type: TYPE_NAME, data: docs }, ['type', 'data'], (n) => ({ properties: { data: documents(n) } })),
    'request.Update': body(catalogue, { type: TYPE_NAME, query, body: fields }, ['type', 'body'], (n) => ({ properties: { query: ref(`${n}.query`), body: ref(n) } })),
    'request.Delete': body(catalogue, { type: TYPE_NAME, query }, ['type'], (n) => ({ properties: { query: ref(`${n}.query`) } })),
    'request.Schema': body(catalogue, { type: TYPE_NAME }, ['type']),
    'request.V1': body(
      catalogue,
      {
        request: { type: 'string', pattern: `^(?:${V1_REQUESTS.map(anyCase).join('|')})$`, description: `The operation, in any case: ${V1_REQUESTS.join(', ')}.` },
        type: { ...TYPE_NAME, description: `${TYPE_NAME.description} Not needed by \`types\`.` },
        query: { ...nullable(query), description: 'get, update, delete: the query (null or absent: `{}`). `objectId` stands for `id`.' },
        options: { description: 'get: the query options; insert: the write options; update: the fields to set when `body` is absent (the older form).' },
        body: { description: 'insert, replace: the documents (`objectId` stands for `id`); update: the fields to set.', anyOf: [docs, fields] },
      },
      ['request'],
      (n) => ({ properties: { query: nullable(ref(`${n}.query`)), body: { anyOf: [documents(n), ref(n)] } } }),
    ),
  };
}

// ---- answers ----------------------------------------------------------------------------------------------------

const ENVELOPE: Record<string, JsonSchema> = {
  'api.ErrorCode': { enum: [...ERROR_CODES] },
  'api.Error': {
    type: 'object',
    required: ['message', 'code'],
    properties: {
      message: { type: 'string' },
      code: ref('api.ErrorCode'),
      index: { type: 'integer', description: 'Position of the offending document in the request.' },
      field: { type: 'string', description: 'Field path of the offending value.' },
      key: { ...OBJECT, description: 'The colliding unique key (DUPLICATE_KEY).' },
      requestId: { type: 'string', description: "INTERNAL: the id under which the server logged the cause." },
    },
  },
  'api.Envelope': {
    type: 'object',
    description: 'Every answer, errors included, carries every key. No answer carries an engine message or a stack.',
    required: [
      'data', 'cursor', 'hasCursor', 'empty', 'count', 'total', 'activityId', 'success', 'message', 'errors', 'issues', 'hasErrors',
      'insertedIds', 'idsNotFound', 'updatedIds', 'deletedIds', 'referencesRemoved', 'referencesUpdated', 'referencesInserted',
    ],
    properties: {
      data: { type: 'array', items: {} },
      cursor: { type: ['string', 'null'], description: 'Pass back as options.cursor for the next page; null when nothing follows.' },
      hasCursor: { type: 'boolean' },
      empty: { type: 'boolean' },
      count: { type: 'integer', description: "The answer's documents (a write: those written)." },
      total: { type: 'integer', description: 'Every match of a query.' },
      activityId: { type: ['string', 'null'], description: "A write's activity id; null for reads." },
      success: { type: 'boolean' },
      message: { type: 'string' },
      errors: { type: 'array', items: ref('api.Error') },
      issues: { type: 'array', items: { type: 'string' }, description: 'Warnings that did not fail the request.' },
      hasErrors: { type: 'boolean' },
      insertedIds: { type: 'array', items: { type: 'string' } },
      idsNotFound: { type: 'array', items: { type: 'string' } },
      updatedIds: { type: 'array', items: { type: 'string' }, description: 'Always empty (deprecated in the service).' },
      deletedIds: { type: 'array', items: { type: 'string' }, description: 'Always empty (deprecated in the service).' },
      referencesRemoved: { type: 'array', items: { type: 'string' } },
      referencesUpdated: { type: 'array', items: { type: 'string' } },
      referencesInserted: { type: 'array', items: { type: 'string' } },
    },
  },
  'api.Field': { type: 'object', required: ['name', 'type'], properties: { name: { type: 'string' }, type: { type: 'string', description: 'The wire kind.' } } },
  'api.ChangeEvent': {
    type: 'object',
    required: ['seq', 'type', 'op', 'id', 'doc', 'activityId', 'at'],
    properties: {
      seq: { type: 'integer', description: 'Strictly increasing, in commit order: resume after it with `since`.' },
      type: { type: 'string' },
      op: { enum: ['insert', 'replace', 'update', 'delete', 'purge'] },
      id: { type: 'string' },
      doc: { ...OBJECT, description: 'The document after the change; for a delete, as it was.' },
      activityId: { type: ['string', 'null'] },
      at: { type: 'string', format: 'date-time' },
    },
  },
};

/** The envelope with `data` of the given items. */
const envelopeOf = (items: JsonSchema): JsonSchema => ({ allOf: [ref('api.Envelope'), { properties: { data: { type: 'array', items } } }] });

// ---- operations -------------------------------------------------------------------------------------------------

interface Operation {
  tag: 'data' | 'v1' | 'api';
  summary: string;
  description: string;
  /** The request body's schema name; absent: no body. */
  body?: string;
  parameters?: JsonSchema[];
  /** Items of the answer's `data`. */
  data: JsonSchema;
  /** A write: takes the `x-activity-id` header. */
  write?: true;
  /** Error codes the store may answer (the route's own, JSON body, auth and INTERNAL are added). */
  errors: ErrorCode[];
  /** Answers with something other than an envelope (the document, the page). */
  content?: Record<string, JsonSchema>;
}

const READ: ErrorCode[] = ['INVALID_REQUEST', 'UNKNOWN_TYPE', 'UNKNOWN_FIELD', 'INVALID_QUERY', 'INVALID_CURSOR', 'TIMEOUT', 'UNAVAILABLE'];
const WRITE: ErrorCode[] = [...READ.filter((c) => c !== 'INVALID_CURSOR'), 'VALIDATION', 'DUPLICATE_KEY', 'ILLEGAL_OPERATION', 'STORE_FULL'];
const anyDoc = { ...OBJECT, description: 'A document of `type`.' };

/** One entry per route and method of the routing core: a route the table lacks does not compile. */
const OPERATIONS: { [P in keyof RouteMethods]: { [M in RouteMethods[P]]: Operation } } = {
  '/data/query': {
    POST: { tag: 'data', summary: 'Query documents', description: 'The documents of `type` matching `query`, with `total` every match.', body: 'request.Query', data: anyDoc, errors: READ },
  },
  '/data': {
    POST: {
      tag: 'data',
      summary: 'Insert documents',
      description: 'Inserts `data`. A colliding document is reported (409, `insertedIds` and `count` list what went in) and the others go in, unless `options.atomic` rolls the whole request back.',
      body: 'request.Insert',
      data: anyDoc,
      write: true,
      errors: WRITE,
    },
    PUT: { tag: 'data', summary: 'Replace documents', description: 'Replaces documents by `id`; documents without an `id`, or with an unknown one, are inserted.', body: 'request.Replace', data: anyDoc, write: true, errors: WRITE },
    PATCH: { tag: 'data', summary: 'Update documents', description: 'Sets `body`\'s fields on every document matching `query`.', body: 'request.Update', data: anyDoc, write: true, errors: WRITE },
    DELETE: {
      tag: 'data',
      summary: 'Delete documents',
      description: 'Deletes every document matching `query`. An empty query is refused with 200, `success: true`, `count: 0` and a message saying it is illegal.',
      body: 'request.Delete',
      data: anyDoc,
      write: true,
      errors: WRITE,
    },
  },
  '/data/types': {
    GET: { tag: 'data', summary: 'List the types', description: 'The name of every document type of the catalogue.', data: { type: 'string' }, errors: [] },
  },
  '/data/schema': {
    GET: {
      tag: 'data',
      summary: "A type's fields",
      description: 'Every top-level field of `type` with its wire kind, the base fields first.',
      parameters: [{ name: 'type', in: 'query', required: true, schema: TYPE_NAME }],
      data: ref('api.Field'),
      errors: ['INVALID_REQUEST', 'UNKNOWN_TYPE'],
    },
    POST: { tag: 'data', summary: "A type's fields", description: 'As GET, the type in the body.', body: 'request.Schema', data: ref('api.Field'), errors: ['INVALID_REQUEST', 'UNKNOWN_TYPE'] },
  },
  '/data/changes': {
    GET: {
      tag: 'data',
      summary: 'The change feed',
      description:
        'With `Accept: text/event-stream`: Server-Sent Events (`id: <seq>`, `event: change`, `data: <event JSON>`, a heartbeat comment every 15 s; a reconnecting EventSource resumes from its Last-Event-ID). Otherwise a long poll: one envelope of the events after `since`, waiting up to `wait` ms for the first.',
      parameters: [
        { name: 'type', in: 'query', schema: TYPE_NAME, description: 'Only the events of this type.' },
        { name: 'since', in: 'query', schema: { type: 'integer', minimum: 0 }, description: 'Events after this seq (default: from now). Older than the oldest kept: 410 CHANGES_PRUNED.' },
        { name: 'query', in: 'query', schema: { type: 'string' }, description: 'A JSON query the event document must match (needs `type`).' },
        { name: 'wait', in: 'query', schema: { type: 'integer', minimum: 0, maximum: 300000, default: 25000 }, description: 'Long poll: ms to wait for the first event.' },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 10000, default: 1000 }, description: 'Long poll: at most this many events.' },
        { name: 'last-event-id', in: 'header', schema: { type: 'integer', minimum: 0 }, description: 'As `since` (sent by a reconnecting EventSource).' },
      ],
      data: ref('api.ChangeEvent'),
      errors: ['INVALID_REQUEST', 'UNKNOWN_TYPE', 'UNKNOWN_FIELD', 'INVALID_QUERY', 'CHANGES_PRUNED', 'CHANGES_OVERFLOW', 'UNAVAILABLE'],
      content: { 'text/event-stream': { type: 'string', description: 'Server-Sent Events of api.ChangeEvent.' } },
    },
  },
  '/v1/data': {
    POST: {
      tag: 'v1',
      summary: 'Any operation (versioned family)',
      description:
        'One POST, the operation in `request` (any case): get, insert, replace, update, delete, types, schema. `objectId` stands for `id` in documents and queries. An unknown `request` is INVALID_REQUEST on `request`.',
      body: 'request.V1',
      data: {},
      write: true,
      errors: WRITE,
    },
  },
  '/openapi.json': {
    GET: { tag: 'api', summary: 'This document', description: 'The OpenAPI 3.1 description of this API, generated from the catalogue of the store served.', data: {}, errors: [], content: { 'application/json': OBJECT } },
  },
  '/docs': {
    GET: { tag: 'api', summary: 'The reference page', description: 'This document as an HTML page, self-contained (no asset fetched from elsewhere).', data: {}, errors: [], content: { 'text/html': { type: 'string' } } },
  },
};

/** What each status means here, for the responses' descriptions. */
const STATUS_TEXT: Record<number, string> = {
  200: 'Success (an envelope).',
  400: 'Bad request: malformed JSON, invalid UTF-8, a body that is not a JSON object, an unknown body key, a bad query or document.',
  401: 'Authentication required; carries WWW-Authenticate.',
  409: 'A unique key collision; a partial insert lists what went in (`insertedIds`, `count`).',
  410: '`since` is older than the oldest kept change event: read the documents afresh.',
  413: 'The body is larger than the adapter accepts; the connection is closed.',
  415: 'The body is not application/json (utf-8).',
  500: 'Unexpected: the message says only `internal error` and carries a `requestId`.',
  503: 'Retry later: a pooled store stopped the request (ran past its time bound, or too many waiting; a stopped write wrote nothing), the connection to PostgreSQL was lost, or a feed subscriber fell too far behind (resume from its last seq).',
  507: 'The database is full (no room left on its disk, or at its size limit); nothing was written.',
};

function responses(op: Operation, options: OpenApiOptions): Record<string, JsonSchema> {
  const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
  // The API's own routes answer their document or page; a data route answers an envelope (the feed: or a stream).
  const own = Object.fromEntries(Object.entries(op.content ?? {}).map(([t, schema]) => [t, { schema }]));
  const ok: JsonSchema = { description: STATUS_TEXT[200], content: op.tag === 'api' ? own : { ...json(envelopeOf(op.data)), ...own } };
  const codes = new Set<ErrorCode>(op.errors);
  if (op.body) for (const c of ['INVALID_REQUEST', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const) codes.add(c);
  if (options.authScheme) codes.add('UNAUTHORIZED');
  codes.add('INTERNAL');
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of ERROR_CODES) {
    if (!codes.has(code) || code === 'ILLEGAL_OPERATION') continue;
    const status = options.statusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, JsonSchema> = { 200: ok };
  if (codes.has('ILLEGAL_OPERATION')) ok.description = `${STATUS_TEXT[200]} Also the refused empty delete (success true, message says illegal).`;
  if (options.alwaysOk) {
    ok.description = `${ok.description} With alwaysOk every failure is a 200 too; the envelope's success and errors tell.`;
    return out;
  }
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[status] = { description: `${STATUS_TEXT[status] ?? 'Refused.'} errors[0].code: ${list.join(', ')}.`, content: json(envelopeOf({})) };
  }
  return out;
}

/**
 * The OpenAPI 3.1 document of the HTTP API over a catalogue: every route of both families (and the change feed when
 * the store keeps one), one JSON Schema per document type and per type's query, the envelope and its error codes.
 * @example const doc = openApiDocument(catalogueOf(), { basePath: '/api', statusOf: (code) => STATUS[code] });
 */
export function openApiDocument(catalogue: Catalogue, options: OpenApiOptions): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = { ...SHARED, ...ENVELOPE, ...conditions(), ...bodies(catalogue) };
  for (const name of catalogue.names) {
    const info = catalogue.resolve(name)!;
    schemas[name] = documentSchema(info);
    schemas[`${name}.query`] = querySchema(info);
  }
  const paths: OpenApiDocument['paths'] = {};
  for (const [path, methods] of Object.entries(OPERATIONS) as [string, Record<string, Operation>][]) {
    if (path === '/data/changes' && !options.changeFeed) continue;
    const item: Record<string, JsonSchema> = {};
    for (const [method, op] of Object.entries(methods)) {
      const operation: JsonSchema = {
        operationId: `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
        tags: [op.tag],
        summary: op.summary,
        description: op.description,
        responses: responses(op, options),
      };
      const headers = op.write ? [{ name: 'x-activity-id', in: 'header', schema: { type: 'string' }, description: "The write's activity id, shared by the requests of one business operation." }] : [];
      if (op.parameters || headers.length) operation.parameters = [...(op.parameters ?? []), ...headers];
      if (op.body) operation.requestBody = { required: true, content: { 'application/json': { schema: ref(op.body) } } };
      item[method.toLowerCase()] = operation;
    }
    paths[path] = item;
  }
  const basePath = options.basePath ?? '/api';
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: {
      title: 'Consolidated Data Service API (consolidata)',
      version: VERSION,
      description:
        'Typed documents of the catalogue below: query, insert, replace, update, delete, in two route families (`/data…`: the HTTP method selects the operation; `/v1/data`: one POST, the operation in `request`). ' +
        'Every answer is an envelope; its `errors[0].code` decides the HTTP status. Type names and operator names are read in any case.',
    },
    servers: [{ url: basePath || '/', description: 'This server' }],
    tags: [
      { name: 'data', description: 'Unversioned family: the HTTP method selects the operation.' },
      { name: 'v1', description: 'Versioned family: one POST, the operation in `request`.' },
      { name: 'api', description: 'This description.' },
    ],
    paths,
    components: { schemas },
  };
  if (options.authScheme) {
    doc.components.securitySchemes = { auth: { type: 'http', scheme: options.authScheme } };
    doc.security = [{ auth: [] }];
  }
  return doc;
}
