-- Version 7: the refusals of a usage row by cause (429 of the key's rate, 402, 403) and its other
-- 4xx answers (store/types.ts UsageCounts). A STRICT table takes a new NOT NULL column with a
-- default (https://www.sqlite.org/lang_altertable.html#altertabaddcol): rows of earlier
-- versions read 0 for each.
ALTER TABLE usage ADD COLUMN rate_limited INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN out_of_credits INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN forbidden INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN client_errors INTEGER NOT NULL DEFAULT 0;
