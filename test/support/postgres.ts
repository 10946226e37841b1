// Tests talk to a real PostgreSQL: DATABASE_URL, or postgres@127.0.0.1:5432/test (what .ci/run
// sets up). Each test world gets a schema of its own, named here, and dropped afterwards: tests
// and suites running at once never see each other's tables.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A quoted identifier (https://www.postgresql.org/docs/current/sql-syntax-lexical.html#SQL-SYNTAX-IDENTIFIERS). */
export const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** `fn` with a connection of its own, closed afterwards: for what a test reads or does behind a store's back. */
export async function withClient<T>(fn: (client: pg.Client) => Promise<T>, url = POSTGRES_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Drops schemas with what they hold; those already gone are no matter. */
export async function dropSchemas(names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await withClient((c) => c.query(`DROP SCHEMA IF EXISTS ${names.map(quoted).join(', ')} CASCADE`));
}

export interface TestSchemas {
  /** A schema name not used before (lower case, so that it needs no quoting to read by hand). */
  fresh(): string;
  /** Drops every schema named so far, with what it holds. */
  dropAll(): Promise<void>;
}

/** Schema names for one suite, `egw_test_<suite>_<random>_<n>`. */
export function testSchemas(suite: string): TestSchemas {
  const base = `egw_test_${suite.replace(/[^a-z0-9]/g, '_')}_${randomBytes(4).toString('hex')}_`;
  const named: string[] = [];
  return {
    fresh() {
      const name = `${base}${named.length}`;
      named.push(name);
      return name;
    },
    dropAll: () => dropSchemas(named.splice(0)),
  };
}
