-- Version 2: the usage batches already added, so that one sent again adds nothing (store/types.ts).
CREATE TABLE usage_batches (
  id TEXT PRIMARY KEY,
  at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
