// `confirmations` in a long-lived entry, kept right: where each value sits in the body and the
// block it counts from are found once, when the entry is stored; an answer then writes the value
// Blockscout would write now, max(1 + head - block, 1) (Explorer.Chain.confirmations/2,
// apps/explorer/lib/explorer/chain.ex), without parsing the body again. Pure.

/** Where the `confirmations` values of a body sit, and what each counts from. */
export interface ConfirmationMarks {
  /** Byte offset of each value's digits, ascending. */
  readonly at: readonly number[];
  /** Their length in bytes. */
  readonly length: readonly number[];
  /** The block each counts from. */
  readonly block: readonly number[];
  /** The value stored: an answer never shows fewer. */
  readonly stored: readonly number[];
}

// A key in the JSON text (a quote inside a string is escaped, so never matches), then the value:
// a number (v2) or a decimal string (the legacy API).
const FIELD = /"confirmations"\s*:\s*"?(\d+)/g;

/**
 * The marks for a body whose `confirmations` count from `blocks`, in text order
 * (finality/classify.ts); undefined when the text holds a different number of them.
 */
export function findConfirmations(body: Buffer, blocks: readonly number[]): ConfirmationMarks | undefined {
  if (blocks.length === 0) return undefined;
  // latin1: one character per byte, so string offsets are byte offsets.
  const text = body.toString('latin1');
  const at: number[] = [];
  const length: number[] = [];
  const stored: number[] = [];
  for (const m of text.matchAll(FIELD)) {
    const digits = m[1]!;
    at.push(m.index + m[0].length - digits.length);
    length.push(digits.length);
    stored.push(Number(digits));
  }
  return at.length === blocks.length ? { at, length, block: [...blocks], stored } : undefined;
}

/** The body with every marked value as of `head`. */
export function withConfirmations(body: Buffer, marks: ConfirmationMarks, head: number): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = 0; i < marks.at.length; i++) {
    const at = marks.at[i]!;
    parts.push(body.subarray(from, at), Buffer.from(String(Math.max(1 + head - marks.block[i]!, marks.stored[i]!, 1)), 'latin1'));
    from = at + marks.length[i]!;
  }
  parts.push(body.subarray(from));
  return Buffer.concat(parts);
}
