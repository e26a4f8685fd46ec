
/**
 * True when running a limited first page as one statement (CompiledSelect.onePass) is faster than the page and then
 * the count: when the page evaluates every match anyway (a sort no index walks, `always` for the rowid-list form)
 * and the count must read documents too (not answered by an index alone). A page that walks an index in its order
 * stops at the limit, and a count from an index alone is cheap: then the two statements stay.
 * `page` and `count` are SQLite's EXPLAIN QUERY PLAN details of the two statements; `table` the documents table.
 */
export function onePassPays(page: readonly string[], count: readonly string[], table: string, always: boolean): boolean {
  const everyMatch = always || page.includes('USE TEMP B-TREE FOR ORDER BY');
  if (!everyMatch) return false;
  const name = new RegExp(`^(SCAN|SEARCH) ${table.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( |$)`);
  return count.some((d) => name.test(d) && !d.includes('COVERING INDEX'));
}
