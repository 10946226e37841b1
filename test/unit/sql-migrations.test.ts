// The SQL migrations (src/store/sql/, read by store/migrations.ts): one file a version, 1 to the
// stores' versions. The SQLite files are run in order on an in-memory database (SQLite parses
// them, a STRICT table's types included); the PostgreSQL files are parsed by pgsql-ast-parser
// (https://github.com/oguimbal/pgsql-ast-parser), their schema named as the store names it.
import Database from 'better-sqlite3';
import { parse } from 'pgsql-ast-parser';
import { describe, expect, it } from 'vitest';
import { inSchema, readMigrations } from '../../src/store/migrations.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres.js';
import { SQLITE_SCHEMA_VERSION } from '../../src/store/sqlite.js';

describe('the SQL migrations', () => {
  it('SQLite: one file a version, 1 to SQLITE_SCHEMA_VERSION, each runs after the ones before', () => {
    const migrations = readMigrations('sqlite', SQLITE_SCHEMA_VERSION);
    expect([...migrations.keys()]).toEqual(Array.from({ length: SQLITE_SCHEMA_VERSION }, (_, i) => i + 1));
    const db = new Database(':memory:');
    try {
      for (const sql of migrations.values()) db.exec(sql);
      const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all();
      expect(tables.map((t) => t.name)).toEqual([
        'audit',
        'keys',
        'ledgers',
        'meta',
        'objects',
        'sqlite_sequence',
        'usage',
        'usage_batches',
        'usage_hours',
        'webhook_deliveries',
      ]);
    } finally {
      db.close();
    }
  });

  it('PostgreSQL: one file a version but 3 (code), each parses, its schema named as given', () => {
    const migrations = readMigrations('postgres', POSTGRES_SCHEMA_VERSION, [3]);
    expect([...migrations.keys()]).toEqual([1, 2, 4, 5, 6, 7, 8]);
    for (const [version, sql] of migrations) {
      const text = inSchema(sql, '"a$&schema"');
      expect(text, `version ${version}`).not.toContain(':schema');
      expect(text, `version ${version}`).toContain('"a$&schema".');
      expect(() => parse(text), `version ${version}`).not.toThrow();
    }
  });
});
