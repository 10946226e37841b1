-- Version 1, a new file's schema.
CREATE TABLE keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  owner TEXT,
  plan TEXT NOT NULL,
  chains TEXT, -- JSON array of chain ids; NULL: every chain
  status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
  expires_at INTEGER,
  created_at INTEGER NOT NULL,
  prefix TEXT NOT NULL,
  digest TEXT NOT NULL,
  previous_digest TEXT, -- with previous_until: the secret a roll replaced; both NULL when none
  previous_until INTEGER
) STRICT;

CREATE TABLE audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  action TEXT NOT NULL,
  key_id TEXT NOT NULL,
  before TEXT, -- JSON object or NULL
  after TEXT
) STRICT;
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_key_at ON audit (key_id, at);

CREATE TABLE usage (
  day TEXT NOT NULL,
  key_id TEXT NOT NULL,
  chain TEXT NOT NULL,
  route TEXT NOT NULL,
  requests INTEGER NOT NULL,
  credits INTEGER NOT NULL,
  cache_hits INTEGER NOT NULL,
  refused INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  PRIMARY KEY (day, key_id, chain, route)
) STRICT, WITHOUT ROWID;

CREATE TABLE ledgers (
  account TEXT PRIMARY KEY,
  period_id TEXT NOT NULL,
  spent INTEGER NOT NULL,
  topup INTEGER NOT NULL
) STRICT;
