// `${VAR}` and `${VAR:-default}` substitution, applied to the YAML text before it is parsed
// (contract section 3), with the same meaning as in POSIX shells and docker compose.

export interface Substitution {
  text: string;
  /** Variables referenced without a default that are not set, with their 1-based line. */
  missing: { name: string; line: number }[];
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces references from `env`. Full-line comments are left alone so that a commented-out
 * example does not demand its variable. A reference to an unset variable without a default is
 * reported (a key or password silently becoming "" is worse than refusing to start).
 */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv): Substitution {
  const missing: Substitution['missing'] = [];
  const lines = text.split('\n').map((line, i) => {
    if (/^\s*#/.test(line)) return line;
    return line.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
      const value = env[name];
      // `:-` also applies when the variable is set but empty, as in the shell.
      if (value !== undefined && value !== '') return value;
      if (fallback !== undefined) return fallback;
      if (value === undefined) missing.push({ name, line: i + 1 });
      return '';
    });
  });
  return { text: lines.join('\n'), missing };
}
