-- Version 4: a key's terms (store/types.ts KeyTerms) as one JSON value, NULL when it has none;
-- who made each audited write (the admin token's name). Rows of earlier versions have neither.
ALTER TABLE :schema.keys ADD COLUMN terms json;
ALTER TABLE :schema.audit ADD COLUMN actor text;
