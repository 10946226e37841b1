// `npm run generate:routes`: reads the two vendored API documents (spec/README.md says where they
// come from) and writes the route data the gateway is built from, src/routes/generated/*.ts:
//
// - v2-operations.ts: every GET operation of the PRO API under `/{chain_id}/api/v2/`, with its
//   path and query parameters and their schemas, every `$ref` inlined;
// - legacy-actions.ts: every GET action of the legacy RPC API, except contract verification;
// - service-operations.ts: every other operation of the PRO API (40: an explorer's /api/v1/search
//   and /api/legacy/, a chain's stats service, and the shared services under /services/).
//
// The output is formatted with the repository's prettier configuration and checked in; a unit
// test (test/unit/route-table.test.ts) runs this generator into a temporary directory and
// fails when the checked-in files differ. `tsx scripts/generate-routes.ts [out-dir]`.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';
import { parse as parseYaml } from 'yaml';
import { VERIFY_ROUTES } from '../src/routes/client-routes.js';
import type { LegacyActionData, ParamData, ParamSchema, ServiceOperationData, V2OperationData } from '../src/routes/spec-types.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const PRO_API_DOCUMENT = 'spec/pro-api-0.5.0.json';
export const RPC_API_DOCUMENT = 'spec/blockscout-rpc-api-1.0.0.yaml';
export const DEFAULT_OUT_DIR = 'src/routes/generated';
export const V2_FILE = 'v2-operations.ts';
export const LEGACY_FILE = 'legacy-actions.ts';
export const SERVICE_FILE = 'service-operations.ts';

/** Paths of the PRO API the gateway serves: `/{chain_id}` then Blockscout's own `/api/v2/...`. */
export const V2_PATH_PREFIX = '/{chain_id}/api/v2/';
const CHAIN_PREFIX = '/{chain_id}';

/**
 * The contract verification flow of the legacy API: it publishes source code (a write, even
 * when sent as GET) or reports on such a write. It is not generated from the document's GET
 * operations: src/routes/client-routes.ts serves it (forwarded as POST, never cached).
 */
export const EXCLUDED_LEGACY_ACTIONS: ReadonlySet<string> = new Set(VERIFY_ROUTES.map((r) => r.action));
/**
 * Bounds the PRO API document prints as doubles that lost digits. `index` of the beacon deposit
 * routes is `maximum: 9_223_372_036_854_775_807` (int64) in Blockscout's source
 * (apps/block_scout_web/lib/block_scout_web/schemas/api/v2/general.ex, "deposit_index"); the
 * document says 9223372036854776000, which is 2^63 rounded. Any other unsafe integer stops the
 * generator, so a new one is looked at rather than guessed.
 */
const ROUNDED_BOUNDS: Readonly<Record<string, string>> = { '9223372036854776000': '9223372036854775807' };

// Keywords kept (in this order), keywords that never change validation, and nothing else.
const KEPT_KEYWORDS = [
  'type',
  'title',
  'enum',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'maxItems',
  'nullable',
  'anyOf',
  'oneOf',
  'items',
  'default',
] as const;
const IGNORED_KEYWORDS = new Set(['description', 'example', 'examples']);
const TYPES = new Set(['string', 'integer', 'boolean', 'array', 'object']);
const FORMATS = new Set(['date-time', 'uuid', 'int64']);
const PARAM_KEYS = new Set(['name', 'in', 'required', 'schema', 'description', 'example', 'style', 'explode']);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(where: string, what: string): never {
  throw new Error(`${where}: ${what}`);
}

/** A local JSON pointer (`#/components/schemas/AddressHash`), RFC 6901 unescaping. */
function resolveRef(doc: JsonObject, ref: string, where: string): JsonObject {
  if (!ref.startsWith('#/')) fail(where, `only local $ref is supported, got ${ref}`);
  let node: Json | undefined = doc;
  for (const part of ref.slice(2).split('/')) {
    const key = part.replaceAll('~1', '/').replaceAll('~0', '~');
    node = isObject(node) ? node[key] : undefined;
  }
  if (!isObject(node)) fail(where, `unresolved $ref ${ref}`);
  return node;
}

/** Follows `$ref`s (a `$ref` with siblings is refused: OpenAPI 3.0 ignores them, 3.1 merges). */
function deref(doc: JsonObject, node: JsonObject, where: string): JsonObject {
  let current = node;
  for (let depth = 0; typeof current.$ref === 'string'; depth++) {
    if (Object.keys(current).length !== 1) fail(where, '$ref with sibling keywords');
    if (depth > 32) fail(where, '$ref cycle');
    current = resolveRef(doc, current.$ref, where);
  }
  return current;
}

function boundText(value: Json | undefined, where: string): string {
  if (typeof value !== 'number' || !Number.isInteger(value)) fail(where, `bound ${JSON.stringify(value)} is not an integer`);
  if (Number.isSafeInteger(value)) return String(value);
  return ROUNDED_BOUNDS[String(value)] ?? fail(where, `bound ${value} is beyond 2^53: add its exact value to ROUNDED_BOUNDS`);
}

export function toParamSchema(doc: JsonObject, raw: Json | undefined, where: string): ParamSchema {
  if (!isObject(raw)) fail(where, 'schema is not an object');
  const node = deref(doc, raw, where);
  for (const key of Object.keys(node)) {
    if (!(KEPT_KEYWORDS as readonly string[]).includes(key) && !IGNORED_KEYWORDS.has(key)) {
      fail(where, `keyword "${key}" is not supported by the parameter validator`);
    }
  }
  const out: Record<string, unknown> = {};
  for (const key of KEPT_KEYWORDS) {
    const value = node[key];
    if (value === undefined) continue;
    switch (key) {
      case 'type':
        if (typeof value !== 'string' || !TYPES.has(value)) fail(where, `type ${JSON.stringify(value)} is not supported`);
        out[key] = value;
        break;
      case 'format':
        if (typeof value !== 'string' || !FORMATS.has(value)) fail(where, `format ${JSON.stringify(value)} is not supported`);
        out[key] = value;
        break;
      case 'title':
      case 'pattern':
        if (typeof value !== 'string') fail(where, `${key} is not a string`);
        out[key] = value;
        break;
      case 'enum':
        if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) fail(where, 'enum of non-strings');
        out[key] = value;
        break;
      case 'minimum':
      case 'maximum':
        out[key] = boundText(value, `${where}.${key}`);
        break;
      case 'minLength':
      case 'maxLength':
      case 'maxItems':
        if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) fail(where, `${key} is not a count`);
        out[key] = value;
        break;
      case 'nullable':
        if (typeof value !== 'boolean') fail(where, 'nullable is not a boolean');
        out[key] = value;
        break;
      case 'anyOf':
      case 'oneOf':
        if (!Array.isArray(value) || value.length === 0) fail(where, `${key} is not a non-empty list`);
        out[key] = value.map((branch, i) => toParamSchema(doc, branch, `${where}.${key}[${i}]`));
        break;
      case 'items':
        out[key] = toParamSchema(doc, value, `${where}.items`);
        break;
      case 'default':
        if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') fail(where, 'default is not a scalar');
        out[key] = value;
        break;
    }
  }
  if (out.type === 'array' && out.items === undefined) fail(where, 'array without items');
  return out;
}

interface RawParam {
  name: string;
  in: string;
  data: ParamData;
}

function toParam(doc: JsonObject, raw: Json | undefined, where: string): RawParam {
  if (!isObject(raw)) fail(where, 'parameter is not an object');
  const node = deref(doc, raw, where);
  for (const key of Object.keys(node)) if (!PARAM_KEYS.has(key)) fail(where, `parameter key "${key}" is not supported`);
  const { name, in: location, required } = node;
  if (typeof name !== 'string' || typeof location !== 'string') fail(where, 'parameter without name or in');
  const at = `${where}(${location}:${name})`;
  const schema = toParamSchema(doc, node.schema, `${at}.schema`);
  // form/explode=false is the comma-separated list the legacy API reads; no other serialisation is used.
  if (node.style !== undefined || node.explode !== undefined) {
    if (node.style !== 'form' || node.explode !== false || schema.type !== 'array')
      fail(at, 'only style: form, explode: false arrays are supported');
  }
  if (required !== undefined && typeof required !== 'boolean') fail(at, 'required is not a boolean');
  return { name, in: location, data: { name, required: required === true, schema } };
}

/** Operation parameters over path-item parameters, by (name, in), as OpenAPI defines them. */
function operationParams(doc: JsonObject, item: JsonObject, op: JsonObject, where: string): RawParam[] {
  const listed = (v: Json | undefined, w: string): RawParam[] => {
    if (v === undefined) return [];
    if (!Array.isArray(v)) fail(w, 'parameters is not a list');
    return v.map((p, i) => toParam(doc, p, `${w}[${i}]`));
  };
  const own = listed(op.parameters, `${where}.parameters`);
  const inherited = listed(item.parameters, `${where}(path item).parameters`).filter(
    (p) => !own.some((o) => o.name === p.name && o.in === p.in),
  );
  const all = [...inherited, ...own];
  const seen = new Set<string>();
  for (const p of all) {
    const key = `${p.in}:${p.name}`;
    if (seen.has(key)) fail(where, `parameter ${key} listed twice`);
    seen.add(key);
  }
  return all;
}

const methods = (item: JsonObject) => Object.keys(item).filter((k) => k !== 'parameters' && !k.startsWith('x-'));

/**
 * An operation's path parameters in the template's slot order (each required, one per slot) and
 * its query parameters in document order; `chain_id` left out when it is the gateway's own
 * (`dropChainId`, a `/{chain_id}/...` path). Parameters anywhere else stop the generator.
 */
function templateParams(
  doc: JsonObject,
  item: JsonObject,
  op: JsonObject,
  template: string,
  dropChainId: boolean,
  where: string,
): { pathParams: ParamData[]; queryParams: ParamData[] } {
  const params = operationParams(doc, item, op, where);
  const other = params.find((x) => x.in !== 'path' && x.in !== 'query');
  if (other) fail(where, `parameters in ${other.in} are not supported`);
  const byName = new Map(params.filter((x) => x.in === 'path' && !(dropChainId && x.name === 'chain_id')).map((x) => [x.name, x.data]));
  const slots = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? '');
  if (slots.length !== byName.size || !slots.every((s) => byName.has(s))) {
    fail(where, `path parameters ${[...byName.keys()].join(',')} do not match the template's slots ${slots.join(',')}`);
  }
  const pathParams = slots.map((s) => byName.get(s) ?? fail(where, `no parameter for slot ${s}`));
  if (!pathParams.every((x) => x.required)) fail(where, 'a path parameter is not required');
  return { pathParams, queryParams: params.filter((x) => x.in === 'query').map((x) => x.data) };
}

export function extractV2Operations(doc: JsonObject): V2OperationData[] {
  const paths = doc.paths;
  if (!isObject(paths)) fail(PRO_API_DOCUMENT, 'no paths');
  const out: V2OperationData[] = [];
  const operationIds = new Set<string>();
  for (const [p, item] of Object.entries(paths)) {
    if (!p.startsWith(V2_PATH_PREFIX) || !isObject(item)) continue;
    const op = item.get;
    if (!isObject(op)) continue;
    const where = `${PRO_API_DOCUMENT} GET ${p}`;
    const operationId = typeof op.operationId === 'string' ? op.operationId : fail(where, 'no operationId');
    if (operationIds.has(operationId)) fail(where, `operationId ${operationId} used twice`);
    operationIds.add(operationId);
    const template = p.slice(CHAIN_PREFIX.length);
    out.push({ template, operationId, ...templateParams(doc, item, op, template, true, where) });
  }
  return out;
}

/**
 * Every operation of the PRO API outside `/{chain_id}/api/v2/`, GET and POST. The chain's
 * `chain_id` slot of `/{chain_id}/...` paths is the gateway's and left out; the `{chain_id}` of
 * a `/services/bens/api/v1/{chain_id}/...` path is the name service's own parameter and kept.
 */
export function extractServiceOperations(doc: JsonObject): ServiceOperationData[] {
  const paths = doc.paths;
  if (!isObject(paths)) fail(PRO_API_DOCUMENT, 'no paths');
  const out: ServiceOperationData[] = [];
  for (const [p, item] of Object.entries(paths)) {
    if (p.startsWith(V2_PATH_PREFIX) || !isObject(item)) continue;
    for (const method of methods(item)) {
      const where = `${PRO_API_DOCUMENT} ${method.toUpperCase()} ${p}`;
      if (method !== 'get' && method !== 'post') fail(where, 'only GET and POST are supported');
      const op = item[method];
      if (!isObject(op)) fail(where, 'operation is not an object');
      const operationId = typeof op.operationId === 'string' ? op.operationId : fail(where, 'no operationId');
      const underChain = p.startsWith(`${CHAIN_PREFIX}/`);
      if (!underChain && !p.startsWith('/services/')) fail(where, 'neither under /{chain_id}/ nor under /services/');
      const template = underChain ? p.slice(CHAIN_PREFIX.length) : p;
      const { pathParams, queryParams } = templateParams(doc, item, op, template, underChain, where);
      const body = op.requestBody !== undefined;
      if (body !== (method === 'post')) fail(where, 'a body is expected on POST and only there');
      out.push({ documentPath: p, method: method === 'get' ? 'GET' : 'POST', operationId, pathParams, queryParams });
    }
  }
  return out;
}

export function extractLegacyActions(doc: JsonObject): LegacyActionData[] {
  const paths = doc.paths;
  if (!isObject(paths)) fail(RPC_API_DOCUMENT, 'no paths');
  const out: LegacyActionData[] = [];
  for (const [p, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of methods(item)) {
      const where = `${RPC_API_DOCUMENT} ${method.toUpperCase()} ${p}`;
      // The path keys embed the query string: `/?module=account&action=balance`.
      const m = /^\/\?(.+)$/.exec(p);
      if (method !== 'get' || !m) {
        // Only POST /eth-rpc (JSON-RPC in a body) is expected here; it is not an action.
        if (p === '/eth-rpc' && method === 'post') continue;
        fail(where, 'neither a GET action nor POST /eth-rpc');
      }
      const q = new URLSearchParams(m[1]);
      const module = q.get('module');
      const action = q.get('action');
      if (!module || !action || [...q.keys()].length !== 2) fail(where, 'path key is not ?module=M&action=A');
      if (EXCLUDED_LEGACY_ACTIONS.has(action)) continue;
      const op = item[method];
      if (!isObject(op)) fail(where, 'operation is not an object');
      const operationId = typeof op.operationId === 'string' ? op.operationId : fail(where, 'no operationId');
      const params: ParamData[] = [];
      for (const x of operationParams(doc, item, op, where)) {
        if (x.in !== 'query') fail(where, `parameters in ${x.in} are not supported`);
        if (x.name === 'module' || x.name === 'action') {
          // Declared either through components (`module_account`) or inline; either way one value.
          const expected = x.name === 'module' ? module : action;
          const e = x.data.schema.enum;
          if (e !== undefined && (e.length !== 1 || e[0] !== expected)) fail(where, `${x.name} enum ${e.join(',')} is not ${expected}`);
          continue;
        }
        params.push(x.data);
      }
      out.push({ module, action, operationId, params });
    }
  }
  return out;
}

async function format(code: string): Promise<string> {
  // The repository's configuration, whatever directory the files are written to.
  const options = await prettier.resolveConfig(path.join(ROOT, DEFAULT_OUT_DIR, V2_FILE));
  return prettier.format(code, { ...options, parser: 'typescript' });
}

function header(document: string, what: string): string {
  return [
    '// Generated: do not edit. `npm run generate:routes` (scripts/generate-routes.ts) writes it from',
    `// ${document}: ${what}.`,
    "// test/unit/route-table.test.ts fails while it differs from the generator's output.",
  ].join('\n');
}

export async function readDocuments(): Promise<{ pro: JsonObject; rpc: JsonObject }> {
  const pro = JSON.parse(await readFile(path.join(ROOT, PRO_API_DOCUMENT), 'utf8')) as Json;
  const rpc = parseYaml(await readFile(path.join(ROOT, RPC_API_DOCUMENT), 'utf8')) as Json;
  if (!isObject(pro) || !isObject(rpc)) throw new Error('a document is not an object');
  return { pro, rpc };
}

/** The generated files' contents, by file name. */
export async function renderRouteFiles(): Promise<Record<string, string>> {
  const { pro, rpc } = await readDocuments();
  const v2 = extractV2Operations(pro);
  const legacy = extractLegacyActions(rpc);
  const services = extractServiceOperations(pro);
  return {
    [V2_FILE]: await format(
      `${header(PRO_API_DOCUMENT, `the ${v2.length} GET operations under /{chain_id}/api/v2/`)}
import type { V2OperationData } from '../spec-types.js';

export const V2_OPERATIONS: readonly V2OperationData[] = ${JSON.stringify(v2)};
`,
    ),
    [LEGACY_FILE]: await format(
      `${header(RPC_API_DOCUMENT, `its ${legacy.length} GET actions, contract verification left out`)}
import type { LegacyActionData } from '../spec-types.js';

export const LEGACY_ACTIONS: readonly LegacyActionData[] = ${JSON.stringify(legacy)};
`,
    ),
    [SERVICE_FILE]: await format(
      `${header(PRO_API_DOCUMENT, `its ${services.length} operations outside /{chain_id}/api/v2/`)}
import type { ServiceOperationData } from '../spec-types.js';

export const SERVICE_OPERATIONS: readonly ServiceOperationData[] = ${JSON.stringify(services)};
`,
    ),
  };
}

export async function writeRouteFiles(outDir: string): Promise<string[]> {
  const files = await renderRouteFiles();
  await mkdir(outDir, { recursive: true });
  const written: string[] = [];
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(outDir, name);
    await writeFile(file, content);
    written.push(file);
  }
  return written;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const outDir = process.argv[2] === undefined ? path.join(ROOT, DEFAULT_OUT_DIR) : path.resolve(process.argv[2]);
  for (const file of await writeRouteFiles(outDir)) process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
}
