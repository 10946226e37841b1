-- Version 2: a ledger keeps a day counter and a month counter (store/types.ts, LedgerRow)
-- instead of one period's spend. A `d…` period's spend becomes its day counter and its month's
-- counter (what was spent that day was spent in that month), a `m…` period's the month
-- counter; the other counter starts empty (''). A period id of neither form (a ledger of bought
-- credits only, '') keeps its bought credits and no spend. A gateway of version 1 refuses to
-- start on this schema; one still running when it changes fails its ledger writes (they name
-- the dropped columns) and keeps them in memory: stop the old gateways of a schema before the
-- first new one starts.
ALTER TABLE :schema.ledgers
  ADD COLUMN day text NOT NULL DEFAULT '',
  ADD COLUMN day_spent bigint NOT NULL DEFAULT 0,
  ADD COLUMN month text NOT NULL DEFAULT '',
  ADD COLUMN month_spent bigint NOT NULL DEFAULT 0;
UPDATE :schema.ledgers SET day = period_id, day_spent = spent, month = 'm' || substr(period_id, 2, 6), month_spent = spent
  WHERE period_id ~ '^d[0-9]{8}$';
UPDATE :schema.ledgers SET month = period_id, month_spent = spent WHERE period_id ~ '^m[0-9]{6}$';
ALTER TABLE :schema.ledgers
  DROP COLUMN period_id,
  DROP COLUMN spent,
  ALTER COLUMN day DROP DEFAULT,
  ALTER COLUMN day_spent DROP DEFAULT,
  ALTER COLUMN month DROP DEFAULT,
  ALTER COLUMN month_spent DROP DEFAULT;
