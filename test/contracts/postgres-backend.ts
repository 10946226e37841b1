// The PostgreSQL store as a backend of the store contract (test/contracts/store.test.ts): each
// world is a schema of its own in the test database (test/support/postgres.ts), its store and
// every `another()` are gateways on that schema, each with its own pool and listener.
//
// A world's stores are closed, and its schema dropped, when the next world is made (the suite's
// tests run one after another in their file) and at teardown: so a run holds the connections of
// one world at a time, far below the server's max_connections.
import { PostgresStore } from '../../src/store/postgres.js';
import type { Storage } from '../../src/store/types.js';
import { leaves } from '../support/leaves.js';
import { dropSchemas, POSTGRES_URL, quoted, testSchemas, withClient } from '../support/postgres.js';

/** One store's data as a test sees it: the store, another gateway on the same data, and every string it holds. */
export interface PostgresWorld {
  store: Storage;
  another(): Storage;
  /** Every string stored in the world's schema: each row as JSON (row_to_json), taken apart. */
  dump(): Promise<string[]>;
}

export interface PostgresBackend {
  name: string;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  world(): PostgresWorld;
}

/** Every row of every table of a schema, as strings. */
export async function dumpSchema(schema: string): Promise<string[]> {
  return withClient(async (c) => {
    const { rows: tables } = await c.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'",
      [schema],
    );
    const out: string[] = [];
    for (const { table_name } of tables) {
      // row_to_json: every column as JSON, text as text, days and bigints as they print.
      const { rows } = await c.query<{ r: unknown }>(`SELECT row_to_json(t) AS r FROM ${quoted(schema)}.${quoted(table_name)} t`);
      for (const { r } of rows) leaves(r, out);
    }
    return out;
  });
}

export function postgresBackend(): PostgresBackend {
  const schemas = testSchemas('store');
  let open: PostgresStore[] = [];
  let worlds: string[] = [];
  /** What closing the last world started, awaited before the next teardown step. */
  let closing: Promise<void> = Promise.resolve();
  let failure: Error | undefined;

  /** Closes the stores opened so far and then drops their schemas, without waiting. */
  const closeOpen = () => {
    const stores = open;
    const names = worlds;
    open = [];
    worlds = [];
    const before = closing;
    closing = (async () => {
      await before;
      await Promise.all(stores.map((s) => s.close()));
      await dropSchemas(names);
    })().catch((err: unknown) => {
      // Kept for teardown to throw: a rejection nobody awaits yet would be reported as unhandled.
      failure ??= err instanceof Error ? err : new Error(String(err));
    });
  };

  return {
    name: 'postgres',
    async setup() {
      // Fails the suite at once, with the reason, when the database is not there.
      await withClient((c) => c.query('SELECT 1'));
    },
    async teardown() {
      closeOpen();
      await closing;
      if (failure) throw failure;
    },
    world() {
      closeOpen();
      const schema = schemas.fresh();
      worlds.push(schema);
      const make = () => {
        const s = new PostgresStore(POSTGRES_URL, { schema, ledgers: true });
        open.push(s);
        return s;
      };
      return {
        store: make(),
        another: make,
        // The previous world's schema may still be being dropped: a different schema, no matter.
        dump: () => dumpSchema(schema),
      };
    },
  };
}
