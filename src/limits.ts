/**
 * The bounds on the size of a request, in one place. Each is checked before any work that grows with it (the
 * "did you mean" hint, path resolution, SQL compilation), and a request past one is refused naming it.
 */
export const LIMITS = {
  /** Conditions in one query: field keys × their operators (an `in` list is one). */
  conditions: 256,
  /** Characters in a field path (`extra.source`), a type name or an option name. */
  nameLength: 256,
  /** Segments in a field path. */
  pathSegments: 32,
  /** Values in one `in` list. */
  inValues: 100_000,
  /** Positions in one `polygon` operand, all rings together. */
  polygonVertices: 10_000,
  /** Characters in a `regex` pattern. */
  regexLength: 4_096,
  /** Nesting depth of a document or a value (objects and arrays). */
  depth: 64,
  /** Field names in one `fields` projection (options.fields). */
  fields: 256,
  /** Group keys of one aggregate (options.groupBy). */
  groupKeys: 16,
  /** Metrics of one aggregate (options.metrics). */
  metrics: 64,
} as const;

/** A name as an error message shows it: long ones are cut, so an answer never echoes megabytes back. */
export function shown(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 61)}...` : name);
}
