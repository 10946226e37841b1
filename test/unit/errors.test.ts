// Every error the gateway answers is defined once (http/errors.ts); the status table of
// docs/clients.md ("## Statuses") is what operators and clients read, so it must say the same.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS, legacyErrorBody, messageBody, type ErrorSpec } from '../../src/http/errors.js';

const PAGE = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');
const statusSection = PAGE.slice(PAGE.indexOf('\n## Statuses\n'), PAGE.indexOf('\n## Response headers\n'));
/** `| case | status | message / notes |` rows of the status table. */
const rows = statusSection
  .split('\n')
  .filter((l) => /^\| .* \| \d{3} \|/.test(l))
  .map((l) => {
    const cells = l.split(' | ');
    return { status: Number(cells[1]), notes: cells.slice(2).join(' | ') };
  });

describe('the error registry', () => {
  it.each(Object.entries(ERRORS))('%s has a status, a message, and a row of the status table that says both', (_code, spec: ErrorSpec) => {
    expect(spec.status).toBeGreaterThanOrEqual(400);
    expect(spec.message).not.toBe('');
    const row = rows.find((r) => r.notes.startsWith(`\`${spec.message}\``));
    expect(row, `docs/clients.md row for "${spec.message}"`).toBeDefined();
    expect(row!.status).toBe(spec.status);
    for (const [name, value] of Object.entries(spec.headers ?? {})) {
      expect(row!.notes.toLowerCase()).toContain(`${name}: ${value}`.toLowerCase());
    }
  });

  it('every row of the status table with a message in backticks is an error of the registry (or an upstream answer)', () => {
    const messages = new Set(Object.values(ERRORS).map((e: ErrorSpec) => e.message));
    for (const row of rows) {
      const message = /^`([^`]+)`/.exec(row.notes)?.[1];
      if (message !== undefined && row.status >= 400) expect(messages, row.notes).toContain(message);
    }
  });

  it('messages are unique, so a client can tell every refusal apart', () => {
    const messages = Object.values(ERRORS).map((e: ErrorSpec) => e.message);
    expect(new Set(messages).size).toBe(messages.length);
  });

  it('renders the two bodies the contract fixes', () => {
    expect(JSON.parse(messageBody('Out of credits'))).toEqual({ message: 'Out of credits' });
    expect(JSON.parse(legacyErrorBody('Unknown action'))).toEqual({ message: 'Unknown action', result: null, status: '0' });
  });
});
