-- Version 8: the account a usage row was counted under (store/types.ts UsageRow.account), part of
-- the row's identity, and the hourly rows (usage_hours: the same counts per UTC hour, 0-23 of the
-- day). A primary key cannot be changed in place, so the table is made anew and its rows copied
-- (https://www.sqlite.org/lang_altertable.html#otheralter), with the account '' (none recorded).
-- Rows of earlier versions have no hourly rows.
CREATE TABLE usage_v8 (
  day TEXT NOT NULL,
  key_id TEXT NOT NULL,
  account TEXT NOT NULL, -- the key's account (acc_...) when the counts were made; '' for none
  chain TEXT NOT NULL,
  route TEXT NOT NULL,
  requests INTEGER NOT NULL,
  credits INTEGER NOT NULL,
  cache_hits INTEGER NOT NULL,
  refused INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  rate_limited INTEGER NOT NULL,
  out_of_credits INTEGER NOT NULL,
  forbidden INTEGER NOT NULL,
  client_errors INTEGER NOT NULL,
  PRIMARY KEY (day, key_id, chain, route, account)
) STRICT, WITHOUT ROWID;
INSERT INTO usage_v8 (day, key_id, account, chain, route, requests, credits, cache_hits, refused, errors,
  rate_limited, out_of_credits, forbidden, client_errors)
SELECT day, key_id, '', chain, route, requests, credits, cache_hits, refused, errors,
  rate_limited, out_of_credits, forbidden, client_errors
FROM usage;
DROP TABLE usage;
ALTER TABLE usage_v8 RENAME TO usage;
CREATE TABLE usage_hours (
  day TEXT NOT NULL,
  hour INTEGER NOT NULL CHECK (hour BETWEEN 0 AND 23), -- UTC
  key_id TEXT NOT NULL,
  account TEXT NOT NULL,
  chain TEXT NOT NULL,
  route TEXT NOT NULL,
  requests INTEGER NOT NULL,
  credits INTEGER NOT NULL,
  cache_hits INTEGER NOT NULL,
  refused INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  rate_limited INTEGER NOT NULL,
  out_of_credits INTEGER NOT NULL,
  forbidden INTEGER NOT NULL,
  client_errors INTEGER NOT NULL,
  PRIMARY KEY (day, hour, key_id, chain, route, account)
) STRICT, WITHOUT ROWID;
