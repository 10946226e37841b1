-- Version 6: plans and accounts made at run time (store/types.ts StoredObject), as JSON by kind and id.
CREATE TABLE objects (
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  value TEXT NOT NULL, -- JSON object
  PRIMARY KEY (kind, id)
) STRICT, WITHOUT ROWID;
