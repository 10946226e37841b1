-- Version 9: the webhook outbox's deliveries (store/outbox-sqlite.ts). STRICT, as the other
-- tables. `webhook_deliveries_due` holds only pending deliveries (a partial index:
-- https://www.sqlite.org/partialindex.html), in the order claims take them; the others serve the
-- listing, newest first, and pruning.
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  event_id TEXT NOT NULL,
  type TEXT NOT NULL,
  webhook TEXT NOT NULL,
  key_id TEXT NOT NULL, -- '' for none
  body TEXT NOT NULL, -- the JSON sent
  created_at INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  last_attempt_at INTEGER NOT NULL,
  last_status INTEGER NOT NULL,
  last_error TEXT NOT NULL,
  delivered_at INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at, id);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook, created_at, id);
CREATE INDEX webhook_deliveries_key ON webhook_deliveries (key_id, created_at, id);
