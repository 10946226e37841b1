// The SQL migrations of the SQLite and PostgreSQL stores, one file a schema version:
// src/store/sql/<dialect>/<NNN>-<what it does>.sql, NNN the version it brings the schema to (the
// one SQLite's user_version and PostgreSQL's schema_version table record). They are read once, at
// start, in the order of their versions. A later gateway adds a file; it never edits one that
// shipped. A version whose step is code rather than SQL (PostgreSQL's 3) has no file: the store
// says which (`codeOnly`). test/unit/sql-migrations.test.ts checks the files.
import { readdirSync, readFileSync } from 'node:fs';

export type Dialect = 'sqlite' | 'postgres';

/** A migration file's name: its version in three digits, a dash, a name. */
const FILE = /^(\d{3})-[a-z0-9-]+\.sql$/;

/**
 * The migrations of `dialect`, by version, 1 to `latest`: each file's text. A version missing
 * (other than those in `codeOnly`), one named twice, one past `latest`, or any other file in the
 * folder is an error at start.
 */
export function readMigrations(dialect: Dialect, latest: number, codeOnly: readonly number[] = []): ReadonlyMap<number, string> {
  const dir = new URL(`./sql/${dialect}/`, import.meta.url);
  const out = new Map<number, string>();
  for (const name of readdirSync(dir).sort()) {
    const match = FILE.exec(name);
    const version = match ? Number(match[1]) : NaN;
    if (!(version >= 1 && version <= latest) || codeOnly.includes(version) || out.has(version)) {
      throw new Error(`src/store/sql/${dialect}/${name}: not a migration of versions 1 to ${latest} (NNN-name.sql, one a version)`);
    }
    out.set(version, readFileSync(new URL(name, dir), 'utf8'));
  }
  for (let v = 1; v <= latest; v++) {
    if (!out.has(v) && !codeOnly.includes(v)) throw new Error(`src/store/sql/${dialect}/: no migration to version ${v}`);
  }
  return out;
}

/** PostgreSQL's files name the store's schema `:schema` (as psql's variables read); `s` is the quoted name. */
export function inSchema(sql: string, s: string): string {
  return sql.replace(/:schema\b/g, () => s);
}
