// Whether a body is one JSON text (RFC 8259: https://www.rfc-editor.org/rfc/rfc8259), read from
// its bytes without building anything: the same verdict as JSON.parse(body.toString('utf8'))
// (test/unit/json-check.test.ts holds it to that), for the miss path's answer check
// (request/forward.ts). JSON.parse built every object and string of a 3 KB answer only to throw
// them away: about a quarter of a miss's CPU (bench/results/2026-11-23-miss-path.md).
//
// Bytes of 0x80 and above are taken as they come inside strings: JSON.parse of the decoded text
// sees U+FFFD for invalid UTF-8 there, which is valid too; anywhere else they are invalid in both.

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
/** `]` is `[` + 2 and `}` is `{` + 2. */
const CLOSE_OFFSET = 2;

/** The open arrays and objects, innermost last; kept between calls, grown when a body nests deeper. */
let open = new Uint8Array(64);

export function isJson(b: Uint8Array): boolean {
  const n = b.length;
  let depth = 0;
  let i = whitespace(b, 0);
  for (;;) {
    // A value starts at i.
    if (i >= n) return false;
    const c = b[i]!;
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === open.length) {
        const deeper = new Uint8Array(open.length * 2);
        deeper.set(open);
        open = deeper;
      }
      open[depth++] = c;
      i = whitespace(b, i + 1);
      if (i < n && b[i] === c + CLOSE_OFFSET) {
        // Empty: a whole value, closed below.
        depth--;
        i++;
      } else if (c === OPEN_OBJECT) {
        i = member(b, i);
        if (i < 0) return false;
        continue;
      } else {
        continue;
      }
    } else {
      i = c === QUOTE ? string(b, i) : c === MINUS || (c >= ZERO && c <= NINE) ? number(b, i) : literal(b, i);
      if (i < 0) return false;
    }
    // A value ended at i: close what it completes, until a comma asks for the next one.
    for (;;) {
      i = whitespace(b, i);
      if (depth === 0) return i === n;
      if (i >= n) return false;
      const d = b[i]!;
      const inner = open[depth - 1]!;
      if (d === COMMA) {
        i = whitespace(b, i + 1);
        if (inner === OPEN_OBJECT) {
          i = member(b, i);
          if (i < 0) return false;
        }
        break;
      }
      if (d !== inner + CLOSE_OFFSET) return false;
      depth--;
      i++;
    }
  }
}

function whitespace(b: Uint8Array, i: number): number {
  const n = b.length;
  while (i < n) {
    const c = b[i]!;
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break;
    i++;
  }
  return i;
}

/** A member's name and its colon: where its value starts, or -1. */
function member(b: Uint8Array, i: number): number {
  if (i >= b.length || b[i] !== QUOTE) return -1;
  i = whitespace(b, string(b, i));
  if (i <= 0 || i >= b.length || b[i] !== COLON) return -1;
  return whitespace(b, i + 1);
}

const isHex = (c: number | undefined): boolean =>
  c !== undefined && ((c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));

/** A string from its opening quote: where it ends, or -1. */
function string(b: Uint8Array, i: number): number {
  const n = b.length;
  i++;
  for (;;) {
    // Most bytes of an answer are plain string bytes: one tight loop over them.
    let c = 0;
    while (i < n && (c = b[i]!) !== QUOTE && c !== BACKSLASH && c >= SPACE) i++;
    if (i >= n || c < SPACE) return -1;
    if (c === QUOTE) return i + 1;
    const e = b[i + 1];
    if (e === 0x75 /* u */) {
      if (!(isHex(b[i + 2]) && isHex(b[i + 3]) && isHex(b[i + 4]) && isHex(b[i + 5]))) return -1;
      i += 6;
    } else if (
      e === QUOTE ||
      e === BACKSLASH ||
      e === 0x2f /* / */ ||
      e === 0x62 /* b */ ||
      e === 0x66 /* f */ ||
      e === 0x6e /* n */ ||
      e === 0x72 /* r */ ||
      e === 0x74 /* t */
    ) {
      i += 2;
    } else {
      return -1;
    }
  }
}

const isDigit = (c: number | undefined): boolean => c !== undefined && c >= ZERO && c <= NINE;

/** A number: where it ends, or -1. */
function number(b: Uint8Array, i: number): number {
  if (b[i] === MINUS) i++;
  if (b[i] === ZERO) i++;
  else if (isDigit(b[i])) while (isDigit(b[i])) i++;
  else return -1;
  if (b[i] === DOT) {
    i++;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i++;
  }
  if (b[i] === 0x65 /* e */ || b[i] === 0x45 /* E */) {
    i++;
    if (b[i] === PLUS || b[i] === MINUS) i++;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i++;
  }
  return i;
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

/** true, false or null: where it ends, or -1. */
function literal(b: Uint8Array, i: number): number {
  const word = b[i] === 0x74 ? TRUE : b[i] === 0x66 ? FALSE : b[i] === 0x6e ? NULL : undefined;
  if (word === undefined) return -1;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return -1;
  return i + word.length;
}
