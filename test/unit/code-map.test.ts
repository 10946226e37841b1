// The code map (docs/architecture.md, "## Code map": the table of paths and contents) against
// the tree: every path it names exists, every file it names in a row exists in that row's folder,
// and every folder of src/ and every file directly under src/ has a row.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

interface Row {
  /** The paths of the first column, as written (`src/app/`, `scripts/demo.ts`). */
  paths: string[];
  /** The `*.ts` names of the second column. */
  files: string[];
}

/** The rows of the first table under "## Code map". */
function codeMap(): Row[] {
  const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = page.slice(page.indexOf('\n## Code map\n'));
  const lines = section.split('\n');
  const head = lines.findIndex((l) => /^\| path \| contents \|$/.test(l));
  const rows: Row[] = [];
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith('|')) break;
    const [path = '', contents = ''] = line.split(' | ');
    const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    rows.push({ paths: ticked(path), files: ticked(contents).filter((t) => /^[\w./-]+\.ts$/.test(t)) });
  }
  return rows;
}

const ROWS = codeMap();
const named = new Set(ROWS.flatMap((r) => r.paths));

describe('the code map of docs/architecture.md', () => {
  it('is found, one row per path', () => {
    expect(ROWS.length).toBeGreaterThan(10);
    expect(ROWS.flatMap((r) => r.paths)).toHaveLength(named.size);
  });

  it.each(ROWS.flatMap((r) => r.paths))('%s exists', (path) => {
    expect(existsSync(join(ROOT, path))).toBe(true);
  });

  it('every file a row names is in that row', () => {
    const missing = ROWS.flatMap(({ paths, files }) =>
      files
        .filter((file) => !paths.some((p) => existsSync(join(ROOT, p.endsWith('/') ? p : dirname(p), file))))
        .map((file) => `${file} (row ${paths.join(', ')})`),
    );
    expect(missing).toEqual([]);
  });

  it('has a row for every folder of src/ and every file directly under it', () => {
    const tree = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.name.endsWith('.ts'))
      .map((e) => (e.isDirectory() ? `src/${e.name}/` : `src/${e.name}`));
    expect(tree.filter((p) => !named.has(p))).toEqual([]);
  });
});
