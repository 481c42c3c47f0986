/** Reads `src/` as the architecture tests see it: files, their relative imports and their string literals. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SRC = path.join(ROOT, 'src');

/** Every `.ts` file under `dir`, repo-relative with `/` separators, sorted. */
export function sourceFiles(dir = SRC): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) out.push(path.relative(ROOT, full).split(path.sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/** One module specifier of a file. */
export interface ImportEdge {
  specifier: string;
  /** `import type`, `export type`, or every named binding marked `type`: erased at compile time. */
  typeOnly: boolean;
  /** `import('...')`: evaluated on demand, after the importing module finished evaluating. */
  dynamic: boolean;
}

/** A parsed file: its module specifiers and string literals (with line numbers). */
export interface ParsedFile {
  file: string;
  imports: ImportEdge[];
  literals: Array<{ text: string; line: number }>;
}

export function parseFile(file: string): ParsedFile {
  return parseSource(file, readFileSync(path.join(ROOT, file), 'utf8'));
}

/** `parseFile` on given text (for planting mistakes in tests). */
export function parseSource(file: string, text: string): ParsedFile {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const imports: ImportEdge[] = [];
  const literals: ParsedFile['literals'] = [];
  const specifierNodes = new Set<ts.Node>();
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const allTypes = named !== undefined && ts.isNamedImports(named) && clause?.name === undefined && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
      imports.push({ specifier: node.moduleSpecifier.text, typeOnly: clause?.isTypeOnly === true || allTypes, dynamic: false });
      specifierNodes.add(node.moduleSpecifier);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause;
      const allTypes = named !== undefined && ts.isNamedExports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
      imports.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly || allTypes, dynamic: false });
      specifierNodes.add(node.moduleSpecifier);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] !== undefined && ts.isStringLiteralLike(node.arguments[0])) {
      imports.push({ specifier: node.arguments[0].text, typeOnly: false, dynamic: true });
      specifierNodes.add(node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      imports.push({ specifier: node.argument.literal.text, typeOnly: true, dynamic: false });
      specifierNodes.add(node.argument.literal);
    }
    if ((ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) && !specifierNodes.has(node)) {
      literals.push({ text: node.text, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { file, imports, literals };
}

/** The repo-relative `.ts` file a relative specifier of `from` names, or undefined for a package. */
export function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  return path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier)).replace(/\.js$/, '.ts');
}
