// Parameter checks compiled once from a route's resolved schemas (src/routes/spec-types.ts),
// reproducing what a Blockscout instance answers: v2 casts parameters with OpenApiSpex
// (CastAndValidate, json_render_error_v2) and answers 422 JsonErrorResponse with its texts;
// legacy controllers answer HTTP 200, status "0", with texts of their own (legacy-rules.ts).
// The OpenApiSpex behaviour followed is version 3.22.3's, the one Blockscout's mix.lock pins:
// lib/open_api_spex/cast.ex (dispatch), cast/{string,integer,primitive,enum,array,any_of,
// one_of}.ex, cast/error.ex (texts), cast_parameters.ex; in github.com/open-api-spex/open_api_spex.
//
// A check also gives the value to forward and to key the cache with: integers without sign or
// leading zeros (as text, exact at any size), addresses and 32-byte hashes lower-cased
// (Explorer.Chain.Hash casts hex case-insensitively), everything else as it came.
import { DOT_SEGMENT_DETAIL, isDotSegment, percentDecode } from '../http/url-decode.js';
import type { ValidationIssue } from '../http/errors.js';
import type { ParamSchema } from './spec-types.js';
import type { LegacyParamSpec, LegacyRouteSpec, V2RouteSpec } from './table.js';

/** What checkV2 reads of a route: a v2 route's, or an explorer's own outside v2 (`api/v1/search`). */
export type CheckedRoute = Pick<V2RouteSpec, 'segments' | 'pathParams' | 'queryParams'>;

export type CheckResult = { ok: true; value: string } | { ok: false; detail: string };
export type ParamCheck = (raw: string) => CheckResult;

const ok = (value: string): CheckResult => ({ ok: true, value });
const bad = (detail: string): CheckResult => ({ ok: false, detail });

/** Elixir's Integer.parse/1 consuming the whole string: an optional sign, then digits. */
const INTEGER_RE = /^[+-]?[0-9]+$/;

/** Sign and leading zeros off, as text ("+007" -> "7", "-0" -> "0"). Input matches INTEGER_RE. */
export function canonicalInteger(s: string): string {
  const negative = s.startsWith('-');
  const digits = s.replace(/^[+-]?0*/, '') || '0';
  return negative && digits !== '0' ? `-${digits}` : digits;
}

/** Patterns of addresses and 32-byte hashes in the two documents: their values are lower-cased. */
const HEX_HASH_PATTERNS: ReadonlySet<string> = new Set([
  '^0x([A-Fa-f0-9]{40})$',
  '^0x([A-Fa-f0-9]{64})$',
  '^0x[a-fA-F0-9]{40}$',
  '^0x[a-fA-F0-9]{64}$',
]);

/** Elixir's `inspect` of a Regex with no options (Inspect.Regex): `/` escaped, `~r/.../`. */
function inspectRegex(source: string): string {
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    const next = source[i + 1];
    if (c === '\\' && (next === '\\' || next === '/')) {
      out += next === '/' ? '\\/' : '\\\\';
      i++;
    } else if (c === '/') out += '\\/';
    else if (c === '#' && next === '{') out += '\\#';
    else if (c === '\n') out += '\\n';
    else if (c === '\t') out += '\\t';
    else if (c === '\r') out += '\\r';
    else out += c;
  }
  return `~r/${out}/`;
}

/** How OpenApiSpex names a schema in an anyOf failure (any_of.ex error_message/2). */
function schemaLabel(s: ParamSchema): string {
  const type = s.type === undefined ? 'nil' : `:${s.type}`;
  return s.title !== undefined ? `Schema(title: ${JSON.stringify(s.title)}, type: ${type})` : `Schema(type: ${type})`;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);

// Elixir's DateTime.from_iso8601/1 (calendar/iso.ex, extended format), which OpenApiSpex's
// `format: :"date-time"` calls: date, `T` or a space, time, an optional fraction (`.` or `,`),
// and an offset that must be there (Z, ±HH:MM, ±HHMM or ±HH; not -00:00). The RFC 3339 profile
// is inside it, except what Elixir refuses: lower-case t and z, and leap second 60.
const DATE_TIME_RE =
  /^[+-]?([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,][0-9]+)?(Z|([+-])([0-9]{2})(?::?([0-9]{2}))?)$/;

export function isDateTime(s: string): boolean {
  const m = DATE_TIME_RE.exec(s);
  if (!m) return false;
  const [, y, mo, d, h, mi, sec, offset, sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12) return false;
  const days = month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
  if (day < 1 || day > days) return false;
  if (Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return false;
  if (offset === 'Z') return true;
  const offsetHours = Number(oh);
  const offsetMinutes = Number(om ?? '0');
  if (offsetHours > 23 || offsetMinutes > 59) return false;
  return !(sign === '-' && offsetHours === 0 && offsetMinutes === 0);
}

const UUID_RE = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

function compileString(schema: ParamSchema): ParamCheck {
  // A format that OpenApiSpex casts wins over pattern and lengths (string.ex clause order).
  if (schema.format === 'date-time') return (raw) => (isDateTime(raw) ? ok(raw) : bad('Invalid format. Expected :"date-time"'));
  if (schema.format === 'uuid') return (raw) => (UUID_RE.test(raw) ? ok(raw) : bad('Invalid format. Expected :uuid'));
  const re = schema.pattern === undefined ? undefined : new RegExp(schema.pattern);
  const patternDetail = schema.pattern === undefined ? '' : `Invalid format. Expected ${inspectRegex(schema.pattern)}`;
  const lower = schema.pattern !== undefined && HEX_HASH_PATTERNS.has(schema.pattern);
  const { minLength, maxLength } = schema;
  return (raw) => {
    // OpenApiSpex collects every failure and lists the last first: pattern, minLength, maxLength.
    if (re && !re.test(raw)) return bad(patternDetail);
    if (minLength !== undefined || maxLength !== undefined) {
      const length = [...raw].length;
      if (minLength !== undefined && length < minLength) return bad(`String length is smaller than minLength: ${minLength}`);
      if (maxLength !== undefined && length > maxLength) return bad(`String length is larger than maxLength: ${maxLength}`);
    }
    return ok(lower ? raw.toLowerCase() : raw);
  };
}

function compileInteger(schema: ParamSchema): ParamCheck {
  const min = schema.minimum === undefined ? undefined : BigInt(schema.minimum);
  const max = schema.maximum === undefined ? undefined : BigInt(schema.maximum);
  return (raw) => {
    if (!INTEGER_RE.test(raw)) return bad('Invalid integer. Got: string');
    const value = canonicalInteger(raw);
    if (min !== undefined && BigInt(value) < min) return bad(`${value} is smaller than inclusive minimum ${min}`);
    if (max !== undefined && BigInt(value) > max) return bad(`${value} is larger than inclusive maximum ${max}`);
    return ok(value);
  };
}

function compileArray(schema: ParamSchema): ParamCheck {
  // A comma-separated list (the legacy document's style: form, explode: false).
  const item = compileParamCheck(schema.items ?? {});
  const { maxItems } = schema;
  return (raw) => {
    const parts = raw.split(',');
    if (maxItems !== undefined && parts.length > maxItems) return bad(`Array length ${parts.length} is larger than maxItems: ${maxItems}`);
    const values: string[] = [];
    for (const part of parts) {
      const r = item(part);
      if (!r.ok) return r;
      values.push(r.value);
    }
    return ok(values.join(','));
  };
}

function compileAnyOf(branches: readonly ParamSchema[]): ParamCheck {
  const checks = branches.map(compileParamCheck);
  // any_of.ex prepends each failed schema, so they are listed last first.
  const detail = `Failed to cast value using any of: ${branches.map(schemaLabel).reverse().join(', ')}`;
  return (raw) => {
    for (const check of checks) {
      const r = check(raw);
      if (r.ok) return r;
    }
    return bad(detail);
  };
}

function compileOneOf(branches: readonly ParamSchema[]): ParamCheck {
  const checks = branches.map(compileParamCheck);
  return (raw) => {
    const passed = checks.map((c) => c(raw)).filter((r) => r.ok);
    if (passed.length === 1) return passed[0]!;
    return bad(`Failed to cast value to one of: ${passed.length === 0 ? 'no schemas validate' : 'more than one schemas validate'}`);
  };
}

/**
 * A check for one parameter's schema. `nullable` changes nothing here: OpenApiSpex only lets a
 * nil through with it, and a query string has no nil (`null` and the empty string are text,
 * accepted where the document's NullString / EmptyString branches or enums say so).
 */
export function compileParamCheck(schema: ParamSchema): ParamCheck {
  // cast.ex: an enum is cast as its base type first, then compared.
  if (schema.enum !== undefined && schema.enum.length > 0) {
    const { enum: values, ...base } = schema;
    const baseCheck = compileParamCheck(base);
    const allowed = new Set(values);
    return (raw) => {
      const r = baseCheck(raw);
      if (!r.ok) return r;
      return allowed.has(r.value) ? r : bad('Invalid value for enum');
    };
  }
  if (schema.anyOf) return compileAnyOf(schema.anyOf);
  if (schema.oneOf) return compileOneOf(schema.oneOf);
  switch (schema.type) {
    case 'string':
      return compileString(schema);
    case 'integer':
      return compileInteger(schema);
    case 'boolean':
      return (raw) => (raw === 'true' || raw === 'false' ? ok(raw) : bad('Invalid boolean. Got: string'));
    case 'array':
      return compileArray(schema);
    default:
      // 'object': the search route's paging objects, sent back as the client got them; no
      // type at all: OpenApiSpex takes anything.
      return ok;
  }
}

const compiled = new WeakMap<ParamSchema, ParamCheck>();

/** compileParamCheck, once per schema object. */
export function paramCheck(schema: ParamSchema): ParamCheck {
  let check = compiled.get(schema);
  if (!check) {
    check = compileParamCheck(schema);
    compiled.set(schema, check);
  }
  return check;
}

const byName = ([a]: [string, string], [b]: [string, string]) => (a < b ? -1 : a > b ? 1 : 0);

/** OpenApiSpex shortens the name in the text only (error.ex safe_string/1), not in the pointer. */
const unexpected = (name: string): ValidationIssue => ({ name, detail: `Unexpected field: ${[...name].slice(0, 40).join('')}` });

export type V2CheckResult = { ok: true; path: string; query: [string, string][] } | { ok: false; issues: ValidationIssue[] };

/**
 * A v2 request's parameters: the raw (percent-encoded) path values in template order, the
 * decoded query. One issue per bad parameter: path parameters, then declared query parameters
 * in document order, then undeclared ones. On success, the upstream path rebuilt from the
 * template and the canonical values only, and the canonical query sorted by name.
 */
export function checkV2(spec: CheckedRoute, rawPathValues: readonly string[], query: ReadonlyMap<string, string>): V2CheckResult {
  const route = compiledV2(spec);
  const issues: ValidationIssue[] = [];
  const values: string[] = [];
  route.path.forEach(({ name, check }, i) => {
    const raw = rawPathValues[i];
    if (raw === undefined) {
      issues.push({ name, detail: `Missing field: ${name}` });
      return;
    }
    const decoded = percentDecode(raw);
    // A value the document's pattern would let through as `.` or `..` is a dot-segment at the
    // explorer (RFC 3986 section 5.2.4): another route than the one checked and billed.
    if (decoded !== undefined && isDotSegment(decoded)) {
      issues.push({ name, detail: `Invalid value: ${DOT_SEGMENT_DETAIL}` });
      return;
    }
    const r = check(decoded ?? raw);
    if (!r.ok) issues.push({ name, detail: r.detail });
    else if (decoded === undefined) issues.push({ name, detail: 'Invalid percent-encoding' });
    else values.push(r.value);
  });

  const out: [string, string][] = [];
  for (const { name, check, required, list } of route.query) {
    const raw = query.get(name);
    if (raw === undefined) {
      if (required) issues.push({ name, detail: `Missing field: ${name}` });
      continue;
    }
    const r = check(raw);
    if (!r.ok) issues.push({ name, detail: r.detail });
    // An instance reads a list in Plug's form, `name[]=1&name[]=2` (a plain `1,2` is a string to it).
    else if (list) for (const item of r.value.split(',')) out.push([`${name}[]`, item]);
    else out.push([name, r.value]);
  }
  for (const [name, value] of query) {
    if (route.declared.has(name)) continue;
    // `label[block_number]=1`: Plug builds the object the search route's paging parameters are.
    const bracket = name.indexOf('[');
    if (bracket > 0 && name.endsWith(']') && route.objects.has(name.slice(0, bracket))) out.push([name, value]);
    else issues.push(unexpected(name));
  }
  if (issues.length > 0) return { ok: false, issues };

  let i = 0;
  const path = spec.segments.map((s) => (typeof s === 'string' ? s : encodeURIComponent(values[i++] ?? ''))).join('/');
  return { ok: true, path: `/${path}`, query: out.sort(byName) };
}

interface CompiledV2 {
  path: { name: string; check: ParamCheck }[];
  query: { name: string; check: ParamCheck; required: boolean; list: boolean }[];
  declared: ReadonlySet<string>;
  /** Declared parameters of `type: object`. */
  objects: ReadonlySet<string>;
}

const compiledRoutes = new WeakMap<CheckedRoute, CompiledV2>();

/** What checkV2 needs of a route, worked out on its first request. */
function compiledV2(spec: CheckedRoute): CompiledV2 {
  let route = compiledRoutes.get(spec);
  if (!route) {
    route = {
      path: spec.pathParams.map((p) => ({ name: p.name, check: paramCheck(p.schema) })),
      query: spec.queryParams.map((p) => ({
        name: p.name,
        check: paramCheck(p.schema),
        required: p.required,
        list: p.schema.type === 'array',
      })),
      declared: new Set(spec.queryParams.map((p) => p.name)),
      objects: new Set(spec.queryParams.filter((p) => p.schema.type === 'object').map((p) => p.name)),
    };
    compiledRoutes.set(spec, route);
  }
  return route;
}

export type LegacyCheckResult = { ok: true; query: [string, string][] } | { ok: false; message: string };

/**
 * A legacy request's parameters (module and action already matched): the first problem, in
 * Blockscout's words where it has them; the results window first, then missing parameters,
 * then bad values, as the controllers check. Parameters the action does not declare are
 * dropped, not refused (Etherscan-style clients add their own, such as `chainid`), and so are
 * values its controller ignores (legacy-rules.ts: `lenient`, `ignoredWith`).
 */
export function checkLegacy(spec: LegacyRouteSpec, query: ReadonlyMap<string, string>): LegacyCheckResult {
  for (const p of spec.params) {
    if (p.resultsWindow !== undefined && pastWindow(spec, p, query)) return { ok: false, message: p.resultsWindow.message };
  }
  const oneOfMissing = spec.oneOfRequired !== undefined && !spec.oneOfRequired.names.some((n) => query.has(n));
  const missing = spec.params.filter((p) => p.required && !query.has(p.name));
  if (spec.missingTogether !== undefined) {
    const names = missing.map((p) => p.name).sort();
    if (oneOfMissing && spec.oneOfRequired) names.push(spec.oneOfRequired.message);
    if (names.length > 0) return { ok: false, message: `${spec.missingTogether}${names.join(', ')}` };
  } else if (missing[0] !== undefined) {
    return { ok: false, message: missing[0].missing ?? `Query parameter '${missing[0].name}' is required` };
  }

  const out: [string, string][] = [];
  for (const p of spec.params) {
    const raw = query.get(p.name);
    if (raw === undefined) continue;
    if (p.ignoredWith !== undefined && query.has(p.ignoredWith)) continue;
    const r = readLegacy(p, raw);
    if (!r.ok) {
      if (p.lenient) continue;
      // Blockscout's texts are about a bad value; a list longer than the document allows (where
      // no rule says the controller cuts it short) gets ours.
      const tooLong = p.take === undefined && p.schema.maxItems !== undefined && raw.split(',').length > p.schema.maxItems;
      return { ok: false, message: tooLong || p.invalid === undefined ? `Invalid ${p.name}: ${r.detail}` : p.invalid };
    }
    out.push([p.forwardAs ?? p.name, r.value]);
  }
  if (oneOfMissing && spec.oneOfRequired) return { ok: false, message: spec.oneOfRequired.message };
  return { ok: true, query: out.sort(byName) };
}

/** Unicode White_Space at either end, which Elixir's String.trim/1 removes. */
const OUTER_SPACE = /^\p{White_Space}+|\p{White_Space}+$/gu;

/** A legacy parameter's value as its controller reads it (legacy-rules.ts LegacyParamReading), checked and canonical. */
function readLegacy(p: LegacyParamSpec, raw: string): CheckResult {
  const list = p.schema.type === 'array' && (p.take !== undefined || p.trimItems === true || p.lenient === true);
  if (!list) return paramCheck(p.schema)(p.downcase ? raw.toLowerCase() : raw);
  let items = raw.split(',');
  if (p.trimItems) items = items.map((item) => item.replace(OUTER_SPACE, '')).filter((item) => item !== '');
  if (p.take !== undefined) items = items.slice(0, p.take);
  const check = paramCheck(p.schema.items ?? {});
  const values: string[] = [];
  for (const item of items) {
    const r = check(item);
    // A lenient list loses the items its controller skips; the rest still goes (an empty list too).
    if (r.ok) values.push(r.value);
    else if (!p.lenient) return r;
  }
  return ok(values.join(','));
}

/** Whether page and page size, both readable, end past the action's results window. */
function pastWindow(spec: LegacyRouteSpec, size: LegacyParamSpec, query: ReadonlyMap<string, string>): boolean {
  const window = size.resultsWindow;
  const page = spec.params.find((p) => p.name === window?.page);
  const rawSize = query.get(size.name);
  const rawPage = page === undefined ? undefined : query.get(page.name);
  if (window === undefined || page === undefined || rawSize === undefined || rawPage === undefined) return false;
  const s = readLegacy(size, rawSize);
  const n = readLegacy(page, rawPage);
  return s.ok && n.ok && BigInt(s.value) * BigInt(n.value) > BigInt(window.max);
}
