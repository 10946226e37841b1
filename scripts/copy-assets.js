// Copies the files of src/ that are not TypeScript (the Lua scripts and SQL migrations the stores
// read at start: src/quota/lua/, src/store/lua/, src/store/sql/) to the same paths under the
// folder given, where tsc put the compiled code: `node scripts/copy-assets.js dist` (package.json's
// build; the Dockerfile's build stage runs it through `npm run build`).
import { cpSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';
import { URL } from 'node:url';

const ASSET = /\.(lua|sql)$/;
const src = new URL('../src/', import.meta.url).pathname;
const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/copy-assets.js <out dir>');

let copied = 0;
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !ASSET.test(entry.name)) continue;
  const from = join(entry.parentPath, entry.name);
  cpSync(from, join(out, relative(src, from)));
  copied++;
}
process.stdout.write(`copied ${copied} .lua and .sql files of src/ to ${out}/\n`);
