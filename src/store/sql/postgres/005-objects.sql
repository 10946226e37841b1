-- Version 5: plans and accounts made at run time (store/types.ts StoredObject), by kind and id.
CREATE TABLE :schema.objects (
  kind text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  value json NOT NULL,
  PRIMARY KEY (kind, id)
);
