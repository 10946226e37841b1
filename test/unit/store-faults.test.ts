// Which store errors the admin API answers 503 (try again) rather than 500 (store/faults.ts).
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { storeUnavailable } from '../../src/store/faults.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('storeUnavailable', () => {
  it("takes PostgreSQL's connection, resource and shutdown classes for the store being away", () => {
    for (const code of ['08006', '08001', '53100', '53300', '57P01', '57014']) expect(storeUnavailable(withCode(code))).toBe(true);
  });

  it("does not take the caller's own errors for it: a constraint, a syntax error, a bad value", () => {
    for (const code of ['23505', '42601', '22P02']) expect(storeUnavailable(withCode(code))).toBe(false);
    expect(storeUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(storeUnavailable(undefined)).toBe(false);
  });

  it("takes node-postgres's and ioredis's closed or stalled connections, and socket errors", () => {
    expect(storeUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(storeUnavailable(new Error('Connection is closed.'))).toBe(true);
    expect(storeUnavailable(new Error('Command timed out'))).toBe(true);
    expect(
      storeUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED', syscall: 'connect' })),
    ).toBe(true);
  });

  it("takes SQLite's file faults (full, read-only) and not its constraint errors", () => {
    expect(storeUnavailable(new Database.SqliteError('database or disk is full', 'SQLITE_FULL'))).toBe(true);
    expect(storeUnavailable(new Database.SqliteError('attempt to write a readonly database', 'SQLITE_READONLY'))).toBe(true);
    expect(storeUnavailable(new Database.SqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE'))).toBe(false);
  });
});
