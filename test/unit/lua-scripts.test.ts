// Every Redis Lua script as the gateway sends it (src/quota/lua/, src/store/lua/, with the
// generated prologue and the shared functions): parsed as Lua 5.1, Redis's
// (https://redis.io/docs/latest/develop/interact/programmability/lua-api/), by luaparse
// (https://github.com/fstirlitz/luaparse), so a syntax error fails here rather than at a
// script's first call. With scopes tracked, a name that is no local must be one of the globals
// Redis gives scripts: a misspelt local would read a global, which Redis 7 refuses at run time.
import { readdirSync, readFileSync } from 'node:fs';
import luaparse from 'luaparse';
import { describe, expect, it } from 'vitest';
import { QUOTA_LUA } from '../../src/quota/redis-scripts.js';
import { OUTBOX_LUA } from '../../src/store/outbox-redis.js';
import { STORE_LUA } from '../../src/store/redis.js';

/** The globals these scripts may read: Redis's API and the Lua 5.1 library they use. */
const GLOBALS = new Set(['redis', 'KEYS', 'ARGV', 'tonumber', 'tostring', 'string', 'math', 'table', 'ipairs', 'pairs', 'unpack', 'type']);

/**
 * An identifier as luaparse makes it with `scope: true`: `isLocal` tells a local from a global
 * (luaparse.js, its `scope` option: "adding an isLocal attribute to each identifier-node");
 * @types/luaparse leaves the property out.
 */
type ScopedIdentifier = luaparse.Identifier & { isLocal?: boolean };

/** The globals `lua` reads, parsing it as Lua 5.1 (throws on a syntax error). */
function globalsRead(lua: string): Set<string> {
  const names: ScopedIdentifier[] = [];
  // Names that are no variable: a field's (`redis.call`, `{ s = 1 }`).
  const fields = new Set<luaparse.Node>();
  luaparse.parse(lua, {
    luaVersion: '5.1',
    scope: true,
    onCreateNode: (node) => {
      if (node.type === 'Identifier') names.push(node);
      else if (node.type === 'MemberExpression') fields.add(node.identifier);
      else if (node.type === 'TableKeyString') fields.add(node.key);
    },
  });
  // Read once the parse is done: a declaration's name is marked local after its node is made.
  return new Set(names.filter((n) => !n.isLocal && !fields.has(n)).map((n) => n.name));
}

const SCRIPTS: [string, string][] = [
  ...Object.entries(QUOTA_LUA).map(([name, lua]): [string, string] => [`src/quota/lua/${name}.lua`, lua]),
  ...Object.entries(STORE_LUA).map(([name, lua]): [string, string] => [`src/store/lua/${name}.lua`, lua]),
  ...Object.entries(OUTBOX_LUA).map(([name, lua]): [string, string] => [`src/store/lua/${name}.lua`, lua]),
];

describe('the Redis Lua scripts', () => {
  it('are every .lua file of src/quota/lua/ and src/store/lua/ (besides the shared ones)', () => {
    const files = (dir: string, shared: string) =>
      readdirSync(new URL(`../../src/${dir}/`, import.meta.url))
        .filter((f) => f.endsWith('.lua') && f !== shared)
        .map((f) => `src/${dir}/${f}`);
    expect(SCRIPTS.map(([file]) => file).sort()).toEqual([...files('quota/lua', 'lib.lua'), ...files('store/lua', 'audit.lua')].sort());
  });

  it.each(SCRIPTS)("%s parses as Lua 5.1 and reads no global but Redis's", (file, lua) => {
    // The file is in what is sent (its first line, never a `--#reply` one).
    expect(lua).toContain(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8').split('\n')[0]);
    const unknown = [...globalsRead(lua)].filter((name) => !GLOBALS.has(name));
    expect(unknown).toEqual([]);
  });

  it('a misspelt local is found, and a syntax error fails', () => {
    expect([...globalsRead('local count = 1\nreturn cuont + 1')]).toEqual(['cuont']);
    expect(() => globalsRead('if x then')).toThrow();
  });
});
