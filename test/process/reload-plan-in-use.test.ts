// Issue 42, item 5: a reload (SIGHUP) whose file drops a plan that run-time keys are on is refused
// as the admin API refuses deleting it (409 PLAN_IN_USE): the running configuration stays, the
// error names the plan and how many keys use it, egw_config_reloads_total{outcome} and
// egw_config_last_reload_successful say so. A key whose plan the gateway lacks anyway (a restart
// on such a file) is answered 503 KEY_PLAN_MISSING, never 401 "Invalid API key", and its client's
// address is never blocked by security.badKeys for it. The real program in a child process, its
// embedded store in a directory of the test's, the fixture explorer.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, closedPort, DEMO_KEY } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const fixture = useFixtureExplorer();

const running: GatewayProcess[] = [];
afterEach(async () => {
  for (const g of running.splice(0)) if (g.child.exitCode === null) await g.stop();
});

describe('a reload that drops a plan still in use', () => {
  it('is refused: the key keeps its plan, the metrics count it, and a restart on that file answers 503, never a block', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-plan-in-use-'));
    const adminPort = await closedPort();
    const opsPort = await closedPort();
    const config = (plans: Record<string, unknown>) => ({
      chains: { '1': { name: 'Ethereum', upstreams: [fixture().url] } },
      plans,
      keys: [{ name: 'demo', key: DEMO_KEY, plan: 'free' }],
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: adminPort },
      metrics: { host: '127.0.0.1', port: opsPort },
      storage: { path: join(dir, 'gateway.db') },
      security: { badKeys: { failures: 20, windowSeconds: 60, blockSeconds: 300 } },
      log: { level: 'info', requests: false },
    });
    const both = { free: { rps: 100, credits: 1_000_000 }, gold: { rps: 777, credits: 1_000_000 } };
    const withoutGold = { free: both.free };

    let gw = await startGatewayProcess(config(both));
    running.push(gw);
    const admin = adminClient(() => `http://127.0.0.1:${adminPort}/admin/v1`);
    const created = await admin.post<{ key: string }>('/keys', { name: 'customer', plan: 'gold' });
    expect(created.status).toBe(201);
    const secret = created.body.key;
    const use = (g: GatewayProcess) => fetch(g.url + BALANCES, { headers: { authorization: `Bearer ${secret}` } });
    const metric = async (line: string) => {
      const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
      return text.split('\n').find((l) => l.startsWith(line));
    };
    expect((await use(gw)).headers.get('x-ratelimit-limit')).toBe('777');
    expect(await metric('egw_config_last_reload_successful')).toBe('egw_config_last_reload_successful 1');

    gw.writeConfig(config(withoutGold));
    gw.child.kill('SIGHUP');
    await until(() => gw.output().includes('configuration refused'), 'the refusal to be logged');
    const line = gw
      .output()
      .split('\n')
      .find((l) => l.includes('configuration refused'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 50, plans: [{ plan: 'gold', keys: 1, accounts: 0 }] });
    expect(line).toContain('plan gold is removed but 1 key(s) use it');
    // The running configuration stays: the key is served on its plan.
    const still = await use(gw);
    expect(still.status).toBe(200);
    expect(still.headers.get('x-ratelimit-limit')).toBe('777');
    expect(await metric('egw_config_reloads_total{outcome="refused"}')).toBe('egw_config_reloads_total{outcome="refused"} 1');
    expect(await metric('egw_config_reloads_total{outcome="ok"}')).toBe('egw_config_reloads_total{outcome="ok"} 0');
    expect(await metric('egw_config_last_reload_successful')).toBe('egw_config_last_reload_successful 0');

    // The plan back: the reload is applied, the gauge says so.
    gw.writeConfig(config(both));
    gw.child.kill('SIGHUP');
    await until(async () => (await metric('egw_config_reloads_total{outcome="ok"}'))?.endsWith(' 1'), 'the good reload');
    expect(await metric('egw_config_last_reload_successful')).toBe('egw_config_last_reload_successful 1');
    expect(await gw.stop()).toBe(0);

    // A start on the file without the plan (a restart is not a reload): the key is the operator's
    // problem, 503 with its own message, and 20 and more of them block nothing.
    gw = await startGatewayProcess(config(withoutGold));
    running.push(gw);
    for (let i = 0; i < 25; i++) {
      const res = await use(gw);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ message: "API key's plan is not available on this gateway; the operator must restore it" });
    }
    // The admin API's verify says the same: the key is there, its plan is not.
    expect((await admin.post('/keys:verify', { key: secret })).body).toMatchObject({ valid: false, code: 'PLAN_MISSING', key: null });
    const demo = await fetch(gw.url + BALANCES, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
    expect(demo.status).toBe(200);
    // An unknown key from the same address is still only a 401: no block was made.
    expect((await fetch(gw.url + BALANCES, { headers: { authorization: 'Bearer nobody-has-this-key' } })).status).toBe(401);
  });
});
