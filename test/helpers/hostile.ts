/**
 * A corpus of hostile requests: each is invalid and must answer a 4xx-class error envelope, write nothing,
 * and leave every prototype alone. Shared by the library test and the HTTP tests.
 */
export interface HostileCase {
  name: string;
  op: 'query' | 'insert' | 'replace' | 'update' | 'delete' | 'schema';
  type: unknown;
  query?: unknown;
  options?: unknown;
  data?: unknown;
  body?: unknown;
}

function deep(depth: number, leaf: unknown = 1): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

function deepArray(depth: number): unknown {
  let v: unknown = [1];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

const WRONG_TYPES: [string, unknown][] = [
  ['number', 42],
  ['negative', -1],
  ['float', 1.5],
  ['huge', 1e308],
  ['bigger than int64', 2 ** 64],
  ['true', true],
  ['empty string', ''],
  ['"NaN"', 'NaN'],
  ['"Infinity"', 'Infinity'],
  ['"-Infinity"', '-Infinity'],
  ['array', [1, 2]],
  ['object', { x: 1 }],
  ['nested object', deep(5)],
];

const TYPED_FIELDS: [string, (v: unknown) => boolean][] = [
  ['fracStages', (v) => Number.isInteger(v) && Math.abs(v as number) < 2 ** 31],
  ['lateralLength', (v) => typeof v === 'number'],
  ['spudDate', () => false],
  ['isVirtual', (v) => typeof v === 'boolean'],
  ['pwi', (v) => typeof v === 'string'],
  ['groups', (v) => Array.isArray(v)],
  ['extra', (v) => typeof v === 'object' && v !== null && !Array.isArray(v)],
  ['surfaceLoc', () => false],
  ['modifiedTimestamp', (v) => Number.isSafeInteger(v)],
];

const BAD_NAMES = [
  "pwi'; DROP TABLE docs_Well; --",
  'pwi" OR 1=1 --',
  'a..b',
  '.pwi',
  'pwi.',
  '$where',
  '$.pwi',
  'extra.$gt',
  'extra["x"]',
  'extra.x[0]',
  'extra.a b',
  'extra.ünï',
  'extra.' + 'x.'.repeat(40) + 'x',
  '0',
  '',
  ' ',
  'extra.\u0000',
];

export function hostileCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  // Wrong value kinds on write, per typed field (only values the kind refuses).
  for (const [field, accepts] of TYPED_FIELDS) {
    for (const [label, value] of WRONG_TYPES) {
      if (accepts(value)) continue;
      if (field === 'spudDate' && typeof value === 'string' && value === '') continue;
      cases.push({ name: `insert ${field} = ${label}`, op: 'insert', type: 'Well', data: [{ pwi: 'H', [field]: value }] });
      cases.push({ name: `update ${field} = ${label}`, op: 'update', type: 'Well', query: { pwi: 'seed' }, body: { [field]: value } });
    }
  }
  // Wrong operand kinds in queries, per typed scalar field.
  for (const [field] of TYPED_FIELDS.slice(0, 5)) {
    for (const [label, value] of WRONG_TYPES) {
      if (field === 'pwi' && typeof value === 'string') continue;
      if ((field === 'fracStages' || field === 'lateralLength') && typeof value === 'number') continue;
      if (field === 'isVirtual' && typeof value === 'boolean') continue;
      if (Array.isArray(value)) continue;
      if (typeof value === 'object' && value !== null) continue;
      cases.push({ name: `query ${field} gt ${label}`, op: 'query', type: 'Well', query: { [field]: { gt: value } } });
    }
  }
  // Hostile field names in queries, updates, sort and documents.
  for (const name of BAD_NAMES) {
    cases.push({ name: `query field ${JSON.stringify(name)}`, op: 'query', type: 'Well', query: { [name]: 1 } });
    cases.push({ name: `sortBy ${JSON.stringify(name)}`, op: 'query', type: 'Well', query: {}, options: { sortBy: name || ' ' } });
    cases.push({ name: `update field ${JSON.stringify(name)}`, op: 'update', type: 'Well', query: { pwi: 'seed' }, body: { [name]: 1 } });
    cases.push({ name: `delete by field ${JSON.stringify(name)}`, op: 'delete', type: 'Well', query: { [name]: 1 } });
    if (!name.includes('.')) cases.push({ name: `insert field ${JSON.stringify(name)}`, op: 'insert', type: 'Well', data: [{ pwi: 'H', [name]: 1 }] });
  }
  // Prototype keys.
  for (const key of ['__proto__', 'constructor', 'prototype']) {
    const obj = JSON.parse(`{"${key}": {"polluted": true}}`);
    cases.push({ name: `query key ${key}`, op: 'query', type: 'Well', query: obj });
    cases.push({ name: `insert key ${key}`, op: 'insert', type: 'Well', data: [JSON.parse(`{"pwi":"H","${key}":{"polluted":true}}`)] });
    cases.push({ name: `update key ${key}`, op: 'update', type: 'Well', query: { pwi: 'seed' }, body: obj });
    cases.push({ name: `operator ${key}`, op: 'query', type: 'Well', query: { pwi: JSON.parse(`{"${key}": "x"}`) } });
    cases.push({ name: `options key ${key}`, op: 'query', type: 'Well', query: {}, options: obj });
    cases.push({ name: `type ${key}`, op: 'query', type: key, query: {} });
  }
  // Types.
  for (const [label, type] of [['number', 1], ['null', null], ['object', {}], ['array', ['Well']], ['SQL', 'Well; DROP TABLE docs_Well'], ['unknown', 'Wells'], ['empty', ''], ['quote', 'We"ll']] as const) {
    cases.push({ name: `query type ${label}`, op: 'query', type, query: {} });
    cases.push({ name: `insert type ${label}`, op: 'insert', type, data: [{}] });
    cases.push({ name: `schema type ${label}`, op: 'schema', type });
  }
  // Bodies of the wrong shape.
  for (const [label, data] of [['object', { pwi: 'H' }], ['string', 'x'], ['number', 1], ['null', null], ['array of arrays', [[1]]], ['array of strings', ['a']], ['array with null', [{ pwi: 'H' }, null]]] as const) {
    cases.push({ name: `insert data ${label}`, op: 'insert', type: 'Well', data });
    cases.push({ name: `replace data ${label}`, op: 'replace', type: 'Well', data });
  }
  for (const [label, body] of [['null', null], ['array', [1]], ['string', 's'], ['empty', {}], ['id change', { id: 'x' }]] as const) {
    cases.push({ name: `update body ${label}`, op: 'update', type: 'Well', query: { pwi: 'seed' }, body });
  }
  // Query shapes and operators.
  for (const [label, query] of [
    ['string', 'pwi = 1'],
    ['array', [{ pwi: 'x' }]],
    ['number', 1],
    ['unknown operator', { pwi: { $where: 'sleep(1)' } }],
    ['mongo $eq', { pwi: { $eq: 'x' } }],
    ['empty operator object', { pwi: {} }],
    ['in not array', { pwi: { in: 'x' } }],
    ['huge in', { pwi: { in: Array.from({ length: 100_001 }, (_, i) => `p${i}`) } }],
    ['undefined operand', { fracStages: { gt: undefined } }],
    ['mongo $or', { $or: [{ pwi: 'a' }] }],
    ['object gt', { 'extra.x': { gt: { a: 1 } } }],
    ['array lt', { 'extra.x': { lt: [1] } }],
    ['regex number', { pwi: { regex: 5 } }],
    ['regex backreference', { pwi: { regex: '(a)\\1' } }],
    ['regex lookahead', { pwi: { regex: '(?=a)a' } }],
    ['regex bad flag', { pwi: { regex: '/a/gx' } }],
    ['regex unclosed', { pwi: { regex: '([a-' } }],
    ['regex on number field', { fracStages: { regex: '1' } }],
    ['bounds 3', { surfaceLoc: { bounds: [1, 2, 3] } }],
    ['bounds strings', { surfaceLoc: { bounds: ['NaN', 0, 1, 1] } }],
    ['bounds out of range', { surfaceLoc: { bounds: [-181, 0, 0, 1] } }],
    ['bounds lat 91', { surfaceLoc: { bounds: [0, 0, 1, 91] } }],
    ['polygon open ring', { surfaceLoc: { polygon: [[[0, 0], [1, 0], [1, 1], [0, 1]]] } }],
    ['polygon short ring', { surfaceLoc: { polygon: [[[0, 0], [1, 0], [0, 0]]] } }],
    ['polygon empty', { surfaceLoc: { polygon: [] } }],
    ['polygon string', { surfaceLoc: { polygon: 'POLYGON((0 0))' } }],
    ['deep operand', { extra: { eq: deep(200) } }],
    ['deep array operand', { extra: { eq: deepArray(200) } }],
    ['date garbage', { spudDate: { gte: '1/1/2020; DROP TABLE' } }],
    ['date impossible', { spudDate: '2/31/2021' }],
  ] as const) {
    cases.push({ name: `query ${label}`, op: 'query', type: 'Well', query });
    cases.push({ name: `delete ${label}`, op: 'delete', type: 'Well', query });
  }
  // Options.
  for (const [label, options] of [
    ['limit -1', { limit: -1 }],
    ['limit 1.5', { limit: 1.5 }],
    ['limit huge', { limit: 2 ** 64 }],
    ['limit string', { limit: '10' }],
    ['limit NaN string', { limit: 'NaN' }],
    ['skip -5', { skip: -5 }],
    ['skip Infinity string', { skip: 'Infinity' }],
    ['sortOrder 2', { sortOrder: 2 }],
    ['sortOrder string', { sortOrder: 'desc' }],
    ['sortBy number', { sortBy: 5 }],
    ['sortBy unknown', { sortBy: 'nope' }],
    ['unknown option', { limt: 5 }],
    ['options string', 'limit=5'],
    ['options array', [1]],
  ] as const) {
    cases.push({ name: `options ${label}`, op: 'query', type: 'Well', query: {}, options });
  }
  // Deep documents.
  cases.push({ name: 'insert deep document', op: 'insert', type: 'Well', data: [{ pwi: 'H', extra: deep(500) as Record<string, unknown> }] });
  cases.push({ name: 'insert deep array', op: 'insert', type: 'Well', data: [{ pwi: 'H', groups: deepArray(500) as unknown[] }] });
  cases.push({ name: 'insert id number', op: 'insert', type: 'Well', data: [{ id: 5, pwi: 'H' }] });
  cases.push({ name: 'insert id empty', op: 'insert', type: 'Well', data: [{ id: '', pwi: 'H' }] });
  return cases;
}
