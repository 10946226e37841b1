-- Version 4: a ledger keeps a day counter and a month counter (store/types.ts, LedgerRow) instead
-- of one period's spend. The table is made anew (a column's NOT NULL cannot be changed in place:
-- https://www.sqlite.org/lang_altertable.html#otheralter) and the rows copied, under the names
-- they have: a `d…` period's spend becomes its day counter and its month's counter (what was
-- spent that day was spent in that month), a `m…` period's the month counter; the other counter
-- starts empty (''). A period id of neither form (a ledger of bought credits only, '') keeps
-- its bought credits and no spend.
CREATE TABLE ledgers_v4 (
  account TEXT PRIMARY KEY,
  day TEXT NOT NULL, -- the day counter's day, d20261126; '' when none
  day_spent INTEGER NOT NULL,
  month TEXT NOT NULL, -- the month counter's month, m202611; '' when none
  month_spent INTEGER NOT NULL,
  topup INTEGER NOT NULL
) STRICT;
INSERT INTO ledgers_v4 (account, day, day_spent, month, month_spent, topup)
SELECT account,
  CASE WHEN is_day THEN period_id ELSE '' END,
  CASE WHEN is_day THEN spent ELSE 0 END,
  CASE WHEN is_day THEN 'm' || substr(period_id, 2, 6) WHEN is_month THEN period_id ELSE '' END,
  CASE WHEN is_day OR is_month THEN spent ELSE 0 END,
  topup
FROM (
  SELECT *,
    period_id GLOB 'd[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]' AS is_day,
    period_id GLOB 'm[0-9][0-9][0-9][0-9][0-9][0-9]' AS is_month
  FROM ledgers
);
DROP TABLE ledgers;
ALTER TABLE ledgers_v4 RENAME TO ledgers;
