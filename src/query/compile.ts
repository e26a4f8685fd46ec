/**
 * Checked conditions → one SQL WHERE clause over the JSONB `doc` column, with bound values.
 * JSON paths come only from checked path steps (see parse.ts) and are quoted here, in one place.
 */
import type { Condition, FieldPath, Sort, Step } from './ast.js';

export interface Compiled {
  readonly sql: string;
  readonly params: unknown[];
}

/** SQL string literal of a JSON path such as `$."surfaceLoc"."coordinates"[0]`. */
export function jsonPath(steps: readonly Step[]): string {
  return `'$${steps.map((s) => `."${s.name}"${s.indexes.map((i) => `[${i}]`).join('')}`).join('')}'`;
}

/** The canonical expression of a top-level field: indexes are declared on exactly this text. */
export function fieldExpr(field: string): string {
  return `json_extract(doc, ${jsonPath([{ name: field, indexes: [] }])})`;
}

/** Quotes an identifier built from catalogue names. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Value of an operand as SQLite sees JSON values: booleans become 1/0 (json_extract's form). */
function bind(v: string | number | boolean): string | number {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

/**
 * Rows (t, v) of every value a condition tests (see README "Values along a path"):
 * arrays on the way are fanned out, the leaf and, when it is an array, its elements.
 */
function candidates(steps: readonly Step[]): string {
  if (steps.length === 1) {
    const p = jsonPath(steps);
    return (
      `SELECT json_type(doc, ${p}) AS t, json_extract(doc, ${p}) AS v ` +
      `UNION ALL SELECT e.type, e.value FROM json_each(doc, ${p}) AS e WHERE json_type(doc, ${p}) = 'array'`
    );
  }
  // Intermediate steps: a JSON array of the nodes reached, each element followed in turn.
  const first = jsonPath(steps.slice(0, 1));
  let from = `json_each(CASE WHEN json_type(doc, ${first}) = 'array' THEN json_extract(doc, ${first}) ELSE json_array(doc -> ${first}) END) AS n1`;
  for (let i = 1; i < steps.length - 1; i++) {
    const p = jsonPath(steps.slice(i, i + 1));
    const n = `n${i}`;
    from +=
      `, json_each(CASE WHEN ${n}.type <> 'object' THEN '[null]' ` +
      `WHEN json_type(${n}.value, ${p}) = 'array' THEN json_extract(${n}.value, ${p}) ` +
      `ELSE json_array(${n}.value -> ${p}) END) AS n${i + 1}`;
  }
  const n = `n${steps.length - 1}`;
  const p = jsonPath(steps.slice(-1));
  return (
    `SELECT CASE WHEN ${n}.type = 'object' THEN json_type(${n}.value, ${p}) END AS t, ` +
    `CASE WHEN ${n}.type = 'object' THEN json_extract(${n}.value, ${p}) END AS v FROM ${from} ` +
    `UNION ALL SELECT e.type, e.value FROM ${from}, json_each(CASE WHEN ${n}.type = 'object' AND json_type(${n}.value, ${p}) = 'array' ` +
    `THEN json_extract(${n}.value, ${p}) ELSE '[]' END) AS e`
  );
}

/** A tested value c equals an operand o (both rows of json_type/value): MongoDB's type-bracketed equality. */
const MATCH =
  `CASE WHEN o.type = 'null' THEN (c.t IS NULL OR c.t = 'null') ` +
  `WHEN o.type IN ('true', 'false') THEN c.t = o.type ` +
  `WHEN o.type IN ('integer', 'real') THEN c.t IN ('integer', 'real') AND c.v = o.value ` +
  `ELSE c.t = o.type AND c.v = o.value END`;

function typeClass(v: string | number | boolean): string {
  if (typeof v === 'number') return `('integer', 'real')`;
  if (typeof v === 'boolean') return `('true', 'false')`;
  return `('text')`;
}

/**
 * Moves a prefilter bound outward past float32 rounding: the R*Tree rounds its own boxes outward, except for
 * values below float32's normal range, which it may round toward zero (1e-40 is stored as 9.99994e-41).
 */
function widen(v: number, dir: 1 | -1): number {
  return v + dir * (Math.abs(v) * 2 ** -20 + 1e-37);
}

const COMPARE = { lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

function equalityAny(path: FieldPath, values: readonly unknown[], params: unknown[]): string {
  params.push(JSON.stringify(values));
  return `EXISTS (SELECT 1 FROM (${candidates(path.steps)}) AS c, json_each(?) AS o WHERE ${MATCH})`;
}

/** One condition → SQL; scalar-typed fields compare their canonical expression directly so indexes apply. */
function compileCondition(c: Condition, type: string, params: unknown[]): string {
  const x = c.path.scalar ? fieldExpr(c.path.steps[0]!.name) : '';
  switch (c.op) {
    case 'eq':
    case 'ne': {
      if (c.path.scalar) {
        // IS / IS NOT are NULL-safe: `ne` keeps null and missing values, exactly `not eq`.
        if (c.value === null) return `${x} ${c.op === 'eq' ? 'IS NULL' : 'IS NOT NULL'}`;
        params.push(bind(c.value as string | number | boolean));
        return `${x} ${c.op === 'eq' ? '=' : 'IS NOT'} ?`;
      }
      const sql = equalityAny(c.path, [c.value], params);
      return c.op === 'eq' ? sql : `NOT (${sql})`;
    }
    case 'in': {
      if (c.values.length === 0) return '0';
      if (c.path.scalar) {
        const nonNull = c.values.filter((v) => v !== null) as (string | number | boolean)[];
        const parts: string[] = [];
        if (nonNull.length === 1) {
          params.push(bind(nonNull[0]!));
          parts.push(`${x} = ?`);
        } else if (nonNull.length > 1) {
          params.push(JSON.stringify(nonNull));
          parts.push(`${x} IN (SELECT value FROM json_each(?))`);
        }
        if (nonNull.length < c.values.length) parts.push(`${x} IS NULL`);
        return parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`;
      }
      return equalityAny(c.path, c.values, params);
    }
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      params.push(bind(c.value));
      if (c.path.scalar) return `${x} ${COMPARE[c.op]} ?`;
      return `EXISTS (SELECT 1 FROM (${candidates(c.path.steps)}) AS c WHERE c.t IN ${typeClass(c.value)} AND c.v ${COMPARE[c.op]} ?)`;
    }
    case 'regex': {
      params.push(c.source, c.flags);
      if (c.path.scalar) return `cd_regexp(?, ?, ${x})`;
      return `EXISTS (SELECT 1 FROM (${candidates(c.path.steps)}) AS c WHERE c.t = 'text' AND cd_regexp(?, ?, c.v))`;
    }
    case 'bounds':
    case 'polygon': {
      const field = c.path.steps[0]!.name;
      const [minX, minY, maxX, maxY] = c.box;
      const px = `json_extract(doc, ${jsonPath([{ name: field, indexes: [] }, { name: 'coordinates', indexes: [0] }])})`;
      const py = `json_extract(doc, ${jsonPath([{ name: field, indexes: [] }, { name: 'coordinates', indexes: [1] }])})`;
      // The R*Tree holds float32 boxes rounded outward: it only finds candidates; the exact test is on the stored doubles.
      params.push(widen(maxX, 1), widen(minX, -1), widen(maxY, 1), widen(minY, -1));
      const prefilter = `${ident(docsTable(type))}.rowid IN (SELECT id FROM ${ident(rtreeTable(type, field))} WHERE minX <= ? AND maxX >= ? AND minY <= ? AND maxY >= ?)`;
      if (c.op === 'bounds') {
        params.push(minX, maxX, minY, maxY);
        return `${prefilter} AND ${px} BETWEEN ? AND ? AND ${py} BETWEEN ? AND ?`;
      }
      params.push(minX, maxX, minY, maxY, JSON.stringify(c.rings));
      return `${prefilter} AND ${px} BETWEEN ? AND ? AND ${py} BETWEEN ? AND ? AND cd_in_polygon(?, ${px}, ${py})`;
    }
  }
}

/** Table of a type's documents. */
export function docsTable(type: string): string {
  return `docs_${type}`;
}

/** R*Tree of one GeoPoint field of a type. */
export function rtreeTable(type: string, field: string): string {
  return `rtree_${type}_${field}`;
}

export function compileWhere(conditions: readonly Condition[], type: string): Compiled {
  const params: unknown[] = [];
  const parts = conditions.map((c) => compileCondition(c, type, params));
  return { sql: parts.length ? parts.join(' AND ') : '1', params };
}

/**
 * ORDER BY for a sort, ties by insertion order. Scalar fields sort on their canonical expression
 * (SQLite's NULL < numbers < text matches MongoDB's order for them); other paths rank types first.
 */
export function compileOrder(sort: Sort | null): string {
  if (!sort) return 'ORDER BY rowid';
  const dir = sort.order === 1 ? 'ASC' : 'DESC';
  if (sort.path.scalar) return `ORDER BY ${fieldExpr(sort.path.steps[0]!.name)} ${dir}, rowid ASC`;
  const p = jsonPath(sort.path.steps);
  const rank =
    `CASE json_type(doc, ${p}) WHEN 'integer' THEN 1 WHEN 'real' THEN 1 WHEN 'text' THEN 2 ` +
    `WHEN 'object' THEN 3 WHEN 'array' THEN 4 WHEN 'false' THEN 5 WHEN 'true' THEN 5 ELSE 0 END`;
  return `ORDER BY ${rank} ${dir}, json_extract(doc, ${p}) ${dir}, rowid ASC`;
}
