/**
 * A domain is one folder: no file outside `src/domains/<name>/` names that domain in a string literal or an
 * import path. What differs per domain the domain declares (`Domain.defaults`, `baselines`, `restore`,
 * `commands`, `episodeState`). Scope: every non-test source file under `src/`; test code (`*.test.ts` and
 * `testing/` fixture folders) may use built-in domains as fixtures and is not checked.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSource, parseFile, sourceFiles, SRC, type ParsedFile } from './source.js';

/** The one wiring file allowed to name domains. */
const WIRING = new Set(['src/builtins.ts']);

const DOMAINS = readdirSync(`${SRC}/domains`, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

const isTestCode = (file: string): boolean => file.endsWith('.test.ts') || file.split('/').includes('testing');

/** Where `parsed` names `domain`: literals and import specifiers containing the name as a word. */
function namings(parsed: ParsedFile, domain: string): string[] {
  const word = new RegExp(`(^|[^A-Za-z0-9_])${domain}($|[^A-Za-z0-9_])`);
  return [
    ...parsed.literals.filter((l) => word.test(l.text)).map((l) => `${parsed.file}:${l.line} string ${JSON.stringify(l.text.slice(0, 60))}`),
    ...parsed.imports.filter((i) => word.test(i.specifier)).map((i) => `${parsed.file} imports ${i.specifier}`),
  ];
}

describe('a domain is one folder', () => {
  it('finds the built-in domains', () => {
    expect(DOMAINS).toEqual(expect.arrayContaining(['math', 'retail']));
  });

  it('no shared source file names a domain in a string literal or an import path', () => {
    const found: string[] = [];
    for (const file of sourceFiles()) {
      if (WIRING.has(file) || isTestCode(file)) continue;
      const parsed = parseFile(file);
      for (const domain of DOMAINS) if (!file.startsWith(`src/domains/${domain}/`)) found.push(...namings(parsed, domain));
    }
    expect(found).toEqual([]);
  });

  it('catches a planted branch on a domain name, a domain import and a template id, but not comments or identifiers', () => {
    const planted = parseSource(
      'src/cli/planted.ts',
      [
        "import { retail } from '../domains/retail/index.js';",
        "// the retail domain is mentioned in a comment only",
        "const retailish = 1; const mathematics = 'mathematics';",
        "if (ctx.domain === 'retail') run();",
        'const id = `retail/tau-bench-${set}@1`;',
      ].join('\n'),
    );
    expect(namings(planted, 'retail')).toEqual([
      'src/cli/planted.ts:4 string "retail"',
      'src/cli/planted.ts:5 string "retail/tau-bench-"',
      'src/cli/planted.ts imports ../domains/retail/index.js',
    ]);
    expect(namings(planted, 'math')).toEqual([]);
  });
});
