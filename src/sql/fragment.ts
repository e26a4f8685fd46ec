/**
 * SQL fragments: text and the values it binds, kept together until a dialect renders the whole statement, so no
 * value is ever re-bound by position by hand. Values enter only as `bound(…)`; interpolated strings are SQL text the
 * compiler built from checked names, never values.
 */

/** One bound value and, for engines that declare them, its SQL type. Used twice in a statement, it is one value. */
export class Param {
  constructor(
    readonly value: unknown,
    readonly cast: string,
  ) {}
}

/** A piece of SQL: text, bound values and nested fragments, in order. */
export class Sql {
  constructor(readonly parts: readonly (string | Param | Sql)[]) {}
}

/** A statement's text and its values in binding order. */
export interface Compiled {
  readonly sql: string;
  readonly params: unknown[];
}

/**
 * A value to bind (`cast`: its SQL type where the engine wants one).
 * @example sql`seq > ${bound(10, 'bigint')}`
 */
export function bound(value: unknown, cast = ''): Param {
  return new Param(value, cast);
}

/**
 * A fragment from a template: strings and numbers are SQL text, Params bind, Sql nests.
 * @example sql`${x} = ${bound('W1', 'text')}`
 */
export function sql(strings: TemplateStringsArray, ...values: readonly (string | number | Param | Sql)[]): Sql {
  const parts: (string | Param | Sql)[] = [strings[0]!];
  values.forEach((v, i) => parts.push(typeof v === 'number' ? String(v) : v, strings[i + 1]!));
  return new Sql(parts);
}

/**
 * Fragments joined by a separator (text).
 * @example join([a, b], ' AND ')
 */
export function join(items: readonly (string | Sql)[], separator: string): Sql {
  return new Sql(items.flatMap((x, i) => (i ? [separator, x] : [x])));
}

/**
 * How an engine writes bound values: `text(p, n)` is the placeholder of a value bound as the statement's n-th
 * (`?`, `$3::text`); with `reuse`, a value used again is written as the same placeholder and bound once.
 */
export interface Placeholders {
  text(p: Param, n: number): string;
  readonly reuse: boolean;
}

/**
 * The text and values of a fragment, as an engine writes them. `into` continues a statement that already binds values.
 * @example render(sql`id = ${bound('W1')}`, { text: () => '?', reuse: false }) // { sql: 'id = ?', params: ['W1'] }
 */
export function render(fragment: Sql | string, placeholders: Placeholders, into: unknown[] = []): Compiled {
  if (typeof fragment === 'string') return { sql: fragment, params: into };
  const written = new Map<Param, string>();
  const out: string[] = [];
  const walk = (s: Sql): void => {
    for (const part of s.parts) {
      if (typeof part === 'string') out.push(part);
      else if (part instanceof Sql) walk(part);
      else {
        let text = placeholders.reuse ? written.get(part) : undefined;
        if (text === undefined) {
          into.push(part.value);
          text = placeholders.text(part, into.length);
          if (placeholders.reuse) written.set(part, text);
        }
        out.push(text);
      }
    }
  };
  walk(fragment);
  return { sql: out.join(''), params: into };
}

/**
 * A text as an SQL string literal (a quote doubled), the same on both engines: for statements that bind nothing
 * (DDL, trigger bodies, a transaction's prelude).
 * @example literal("O'Brien") // 'O''Brien'
 */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
