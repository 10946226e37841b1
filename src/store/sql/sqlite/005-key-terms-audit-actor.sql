-- Version 5: a key's terms (store/types.ts KeyTerms: its own limits, allowed routes, networks
-- and origins, the operator's meta) as one JSON value, NULL when it has none; and who made each
-- audited write (the admin token's name). Rows of earlier versions have neither.
ALTER TABLE keys ADD COLUMN terms TEXT;
ALTER TABLE audit ADD COLUMN actor TEXT;
