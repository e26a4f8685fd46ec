/**
 * What the compiler prints about the typed store: answers read `Envelope<Well>` on hover, and type errors name the
 * field and the shape they break, never the whole catalogue. Each snippet is typechecked against the sources with the
 * TypeScript compiler API.
 */
import { describe, expect, it } from 'vitest';
import { catalogue } from '../src/index.js';
import { printedTypes, typecheck } from './types.compile.js';

const header = "import { DataStore } from 'consolidata';\ndeclare const store: DataStore;\n";

/** The one error of a one-line mistake. */
function errorOf(line: string): string {
  const errors = typecheck(header + line);
  expect(errors).toHaveLength(1);
  return errors[0]!;
}

describe('types of answers, as hovers print them', () => {
  it("names every built-in type's interface: a query answers Envelope<Well>", () => {
    const names = Object.keys(catalogue);
    const code = header + names.map((name, i) => `const t${i} = await store.query('${name}');`).join('\n');
    const printed = printedTypes(code);
    expect(names.map((_, i) => printed[`t${i}`])).toEqual(names.map((name) => `Envelope<${name}>`));
  }, 60_000);

  it('prints the declared type for the lower-case name and the Folder alias, id as a string, and a projection as a Pick', () => {
    const printed = printedTypes(`${header}
const page = await store.query('well', { basinName: 'Permian' });
const folders = await store.query('Folder', {});
const id = page.data[0]!.id;
const versions = await store.history('Well', id);
const rows = await store.query('Well', {}, { fields: ['pwi', 'name'] });
`);
    expect(printed).toMatchObject({
      page: 'Envelope<Well>',
      folders: 'Envelope<Petron>',
      id: 'string',
      versions: 'Envelope<Version<Well>>',
    });
    // The compiler orders a union's members by when it met them, so the keys are compared as a set.
    const [, keys] = /^Envelope<Pick<Well, (.+)>>$/.exec(printed.rows!) ?? [];
    expect(keys?.split(' | ').sort()).toEqual(['"id"', '"name"', '"pwi"']);
  }, 60_000);
});

describe('type errors of the typed store', () => {
  it('a misspelled query field names the field, its near miss and the query type, not the catalogue', () => {
    const error = errorOf("store.query('Well', { basinNmae: 'Permian' });");
    expect(error).toContain("'basinNmae' does not exist in type 'Query<\"Well\", BuiltinCatalogue>'");
    expect(error).toContain("Did you mean to write 'basinName'?");
    expect(error).not.toContain('WorkspaceDefinition');
  }, 60_000);

  it('a misspelled update field names the field and the update body type', () => {
    const error = errorOf("store.update('Well', { pwi: 'W1' }, { statusCurent: 'Producing' });");
    expect(error).toContain("'statusCurent' does not exist in type 'UpdateBody<\"Well\", BuiltinCatalogue>'");
    expect(error).not.toContain('WorkspaceDefinition');
  }, 60_000);

  it('a bad sort path names the sort path type', () => {
    const error = errorOf("store.query('Well', {}, { sortBy: 'nope' });");
    expect(error).toContain("Type '\"nope\"' is not assignable to type 'SortPath<\"Well\", BuiltinCatalogue> | readonly SortPath<\"Well\", BuiltinCatalogue>[] | undefined'");
    expect(error).not.toContain('WorkspaceDefinition');
  }, 60_000);

  it('a bad operand names the operator and the kinds involved', () => {
    const error = errorOf("store.query('Well', { fracStages: { gt: 'abc' } });");
    expect(error).toContain("Types of property 'gt' are incompatible");
    expect(error).toContain("Type 'string' is not assignable to type 'number'");
  }, 60_000);
});
