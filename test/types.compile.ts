/** Typechecks TypeScript source text against the sources with the TypeScript compiler API (for the type tests). */
import { join, resolve } from 'node:path';
import ts from 'typescript';

/** The repository's root folder. */
export const root = resolve(import.meta.dirname, '..');

/** The project's compiler options (tsconfig.json), with `consolidata` resolved to the sources. */
function compilerOptions(): ts.CompilerOptions {
  const file = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(file, ts.sys.readFile);
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, file);
  return {
    ...options,
    noEmit: true,
    // Code is checked as an application with plain `strict` settings would check it (the README reads
    // `page.data[0]`); the project's own code also has noUncheckedIndexedAccess, which few applications turn on.
    noUncheckedIndexedAccess: false,
    paths: { consolidata: ['./src/index.ts'] },
    pathsBasePath: root,
  };
}

/** `code` compiled as a module of this package (ESM, top-level await), with its source file. */
function compile(code: string): { program: ts.Program; source: ts.SourceFile } {
  // A file inside the package, so that package.json's "type": "module" applies; it exists only in memory.
  const fileName = join(root, 'test', '__typecheck__.ts').replaceAll('\\', '/');
  const options = compilerOptions();
  const host = ts.createCompilerHost(options, true);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name.replaceAll('\\', '/') === fileName ? ts.createSourceFile(name, code, language, true) : getSourceFile(name, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name.replaceAll('\\', '/') === fileName || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => (name.replaceAll('\\', '/') === fileName ? code : readFile(name));
  const program = ts.createProgram({ rootNames: [fileName], options, host });
  return { program, source: program.getSourceFile(fileName)! };
}

/** Diagnostics of `code` compiled as a module of this package (ESM, top-level await), formatted one per line. */
export function typecheck(code: string): string[] {
  return diagnostics(compile(code));
}

/** The diagnostics of a compiled snippet, its own lines as `code line N`. */
function diagnostics({ program, source }: { program: ts.Program; source: ts.SourceFile }): string[] {
  const found = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSyntacticDiagnostics(source),
    ...program.getSemanticDiagnostics(source),
  ];
  return found.map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (!d.file || d.start === undefined) return text;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    return `${d.file === source ? 'code' : d.file.fileName} line ${line + 1}: ${text}`;
  });
}

/**
 * The types of the top-level `const`s of `code`, by name, as an editor's hover prints them (untruncated), after the
 * code was checked to compile.
 */
export function printedTypes(code: string): Record<string, string> {
  const compiled = compile(code);
  const errors = diagnostics(compiled);
  if (errors.length) throw new Error(`the code does not compile:\n${errors.join('\n')}`);
  const { program, source } = compiled;
  const checker = program.getTypeChecker();
  const out: Record<string, string> = {};
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const d of statement.declarationList.declarations) {
      if (!ts.isIdentifier(d.name)) continue;
      out[d.name.text] = checker.typeToString(checker.getTypeAtLocation(d.name), undefined, ts.TypeFormatFlags.NoTruncation);
    }
  }
  return out;
}
