import { describe, expect, it } from 'vitest';
import { substituteEnv } from '../../src/config/env.js';

describe('substituteEnv', () => {
  const env = { SET: 'value', EMPTY: '' };

  it('replaces ${VAR} with the variable', () => {
    expect(substituteEnv('key: ${SET}', env)).toEqual({ text: 'key: value', missing: [] });
  });

  it('uses the default of ${VAR:-default} when the variable is unset or empty', () => {
    expect(substituteEnv('a: ${UNSET:-d1}\nb: ${EMPTY:-d2}\nc: ${SET:-d3}', env).text).toBe('a: d1\nb: d2\nc: value');
  });

  it('allows an empty default', () => {
    expect(substituteEnv('k: ${UNSET:-}', env)).toEqual({ text: 'k: ', missing: [] });
  });

  it('reports an unset variable without a default, with its line', () => {
    expect(substituteEnv('a: 1\nkey: ${NOPE}', env).missing).toEqual([{ name: 'NOPE', line: 2 }]);
  });

  it('leaves full-line comments alone', () => {
    expect(substituteEnv('  # key: ${NOPE}', env)).toEqual({ text: '  # key: ${NOPE}', missing: [] });
  });
});
