-- Version 7: the account a usage row was counted under (store/types.ts UsageRow.account), part
-- of the row's identity ('' in the rows there are: none recorded), and the hourly rows
-- (usage_hours: the same counts per UTC hour, 0-23 of the day). The primary key is made again
-- with the account; a gateway of version 6 still running then fails its usage writes (its
-- ON CONFLICT names the old key) and keeps them in memory: stop the old gateways of a schema
-- before the first new one starts, as for version 2.
ALTER TABLE :schema.usage ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE :schema.usage DROP CONSTRAINT usage_pkey;
ALTER TABLE :schema.usage ADD CONSTRAINT usage_pkey PRIMARY KEY (day, key_id, chain, route, account);
CREATE TABLE :schema.usage_hours (
  day date NOT NULL,
  hour smallint NOT NULL CHECK (hour BETWEEN 0 AND 23), -- UTC
  key_id text COLLATE "C" NOT NULL,
  account text COLLATE "C" NOT NULL,
  chain text COLLATE "C" NOT NULL,
  route text COLLATE "C" NOT NULL,
  requests bigint NOT NULL,
  credits bigint NOT NULL,
  cache_hits bigint NOT NULL,
  refused bigint NOT NULL,
  errors bigint NOT NULL,
  rate_limited bigint NOT NULL,
  out_of_credits bigint NOT NULL,
  forbidden bigint NOT NULL,
  client_errors bigint NOT NULL,
  PRIMARY KEY (day, hour, key_id, chain, route, account)
);
CREATE INDEX usage_hours_key_day ON :schema.usage_hours (key_id, day);
