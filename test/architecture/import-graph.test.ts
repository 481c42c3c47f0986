/**
 * No import cycles in `src/`. The graph has an edge for every relative `import`/`export … from` of a `.ts`
 * file, static and dynamic (`import()`); type-only imports (`import type`, `export type`, all-`type`
 * bindings, `import('…')` types) are left out because the compiler erases them and they load nothing.
 */
import { describe, expect, it } from 'vitest';
import { parseFile, parseSource, resolveSpecifier, sourceFiles, type ParsedFile } from './source.js';

/** Every cycle of the graph, as the strongly connected components with more than one file (or a self-import). */
function cycles(files: readonly ParsedFile[]): string[][] {
  const edges = new Map<string, string[]>();
  for (const f of files) {
    edges.set(
      f.file,
      f.imports.filter((i) => !i.typeOnly).flatMap((i) => resolveSpecifier(f.file, i.specifier) ?? []),
    );
  }
  // Tarjan's strongly connected components, iterative enough for src/'s depth.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const connect = (v: string): void => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!indexOf.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (edges.get(v) ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!indexOf.has(v)) connect(v);
  return out.sort((x, y) => x[0]!.localeCompare(y[0]!));
}

describe('the import graph of src/', () => {
  it('has no cycles', () => {
    expect(cycles(sourceFiles().map(parseFile))).toEqual([]);
  });

  it('finds a planted cycle, and ignores one closed only by a type-only import', () => {
    const a = parseSource('src/x/a.ts', "import { b } from './b.js';\nexport const a = 1;");
    const b = parseSource('src/x/b.ts', "export { a } from './a.js';\nexport const b = 2;");
    const c = parseSource('src/x/c.ts', "import type { D } from './d.js';\nexport type C = 1;");
    const d = parseSource('src/x/d.ts', "import { c } from './c.js';\nexport type D = 1;");
    const lazy = parseSource('src/x/e.ts', "export const e = () => import('./f.js');");
    const f = parseSource('src/x/f.ts', "import { e } from './e.js';");
    expect(cycles([a, b, c, d, lazy, f])).toEqual([
      ['src/x/a.ts', 'src/x/b.ts'],
      ['src/x/e.ts', 'src/x/f.ts'],
    ]);
  });
});
