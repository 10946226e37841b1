-- Version 6: the refusals of a usage row by cause (429 of the key's rate, 402, 403) and its
-- other 4xx answers (store/types.ts UsageCounts). Rows of earlier versions read 0 of each; a
-- column added with a constant default rewrites no row
-- (https://www.postgresql.org/docs/current/sql-altertable.html#SQL-ALTERTABLE-NOTES). A gateway
-- of version 5 still running writes its rows without them (0), as before.
ALTER TABLE :schema.usage
  ADD COLUMN rate_limited bigint NOT NULL DEFAULT 0,
  ADD COLUMN out_of_credits bigint NOT NULL DEFAULT 0,
  ADD COLUMN forbidden bigint NOT NULL DEFAULT 0,
  ADD COLUMN client_errors bigint NOT NULL DEFAULT 0;
