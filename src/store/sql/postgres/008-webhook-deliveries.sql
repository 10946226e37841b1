-- Version 8: the webhook outbox's deliveries (store/outbox-postgres.ts). Ids, webhooks, key ids
-- and types are compared and ordered byte-wise ("C", as the store's other text columns), as the
-- other backends order them. `webhook_deliveries_due` holds only pending deliveries (a partial
-- index: https://www.postgresql.org/docs/current/indexes-partial.html), in the order claims take
-- them.
CREATE TABLE :schema.webhook_deliveries (
  id text COLLATE "C" PRIMARY KEY,
  event_id text NOT NULL,
  type text COLLATE "C" NOT NULL,
  webhook text COLLATE "C" NOT NULL,
  key_id text COLLATE "C" NOT NULL, -- '' for none
  body text NOT NULL, -- the JSON sent, as it was signed: text, never re-serialised
  created_at bigint NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL,
  next_attempt_at bigint NOT NULL,
  last_attempt_at bigint NOT NULL,
  last_status integer NOT NULL,
  last_error text NOT NULL,
  delivered_at bigint NOT NULL
);
CREATE INDEX webhook_deliveries_due ON :schema.webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_created ON :schema.webhook_deliveries (created_at, id);
CREATE INDEX webhook_deliveries_webhook ON :schema.webhook_deliveries (webhook, created_at, id);
CREATE INDEX webhook_deliveries_key ON :schema.webhook_deliveries (key_id, created_at, id);
