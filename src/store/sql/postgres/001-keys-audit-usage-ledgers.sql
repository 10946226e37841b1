-- Version 1. Text columns that are ordered or compared (ids, names, days' rows) use the "C"
-- collation: byte order, which is the order of code points, as the other backends sort; the
-- database's default collation may be a locale's, which orders punctuation and case otherwise
-- (https://www.postgresql.org/docs/current/collation.html).
CREATE TABLE :schema.keys (
  id text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  owner text,
  plan text NOT NULL,
  chains text[], -- the allow-list of chain ids; NULL: every chain
  status text NOT NULL CHECK (status IN ('active', 'disabled')),
  expires_at bigint,
  created_at bigint NOT NULL,
  prefix text NOT NULL,
  digest text NOT NULL,
  previous_digest text, -- with previous_until: the secret a roll replaced; both NULL when none
  previous_until bigint,
  CONSTRAINT keys_pkey PRIMARY KEY (id),
  CONSTRAINT keys_name_key UNIQUE (name),
  CHECK ((previous_digest IS NULL) = (previous_until IS NULL))
);

-- id: the order of insertion, for entries of one instant.
CREATE TABLE :schema.audit (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at bigint NOT NULL,
  action text NOT NULL,
  key_id text COLLATE "C" NOT NULL,
  before json, -- json, not jsonb: kept as written, keys in their order
  after json
);
CREATE INDEX audit_at ON :schema.audit (at, id);
CREATE INDEX audit_key_at ON :schema.audit (key_id, at, id);

CREATE TABLE :schema.usage (
  day date NOT NULL,
  key_id text COLLATE "C" NOT NULL,
  chain text COLLATE "C" NOT NULL,
  route text COLLATE "C" NOT NULL,
  requests bigint NOT NULL,
  credits bigint NOT NULL,
  cache_hits bigint NOT NULL,
  refused bigint NOT NULL,
  errors bigint NOT NULL,
  PRIMARY KEY (day, key_id, chain, route)
);
-- /usage of some keys over a range of days; a range of days alone is the primary key's.
CREATE INDEX usage_key_day ON :schema.usage (key_id, day);

CREATE TABLE :schema.usage_batches (
  id text PRIMARY KEY,
  at bigint NOT NULL
);
CREATE INDEX usage_batches_at ON :schema.usage_batches (at);

CREATE TABLE :schema.ledgers (
  account text COLLATE "C" PRIMARY KEY,
  period_id text NOT NULL,
  spent bigint NOT NULL,
  topup bigint NOT NULL
);
