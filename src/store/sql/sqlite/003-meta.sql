-- Version 3: what the store keeps about itself, by name: `ledger_secret`, the key of the ledger
-- rows' names (hex), and `probe`, written by ping() to learn whether writes work again.
CREATE TABLE meta (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
