-- Append-only: never edit a migration once it is on main; a change is a new file with the next number.
--
-- Try-on billing: accounts, API keys, try-on records and an append-only credit ledger, plus what the abuse limits,
-- idempotent retries and image deletion keep. Everything lives in the `tryon` schema, which PostgREST does not
-- expose; only the service role may execute the functions, and no role but the owner can touch a table.
-- The roles anon, authenticated and service_role are Supabase's; the dev stack and the tests create them on plain
-- Postgres and PGlite before applying these files (devstack/migrations.ts, ensureSupabaseRoles).
--
-- The files: 0100 tables (this one), 0200 the credit functions (price, begin, settle, sweep: the money),
-- 0300 keys, 0400 abuse limits, 0500 account operations (deletion, share links, usage), 0600 storage buckets.

create schema if not exists tryon;
revoke all on schema tryon from public, anon, authenticated;
grant usage on schema tryon to service_role;
alter default privileges in schema tryon revoke all on tables from public, anon, authenticated;
alter default privileges in schema tryon revoke all on sequences from public, anon, authenticated;
alter default privileges in schema tryon revoke execute on functions from public, anon, authenticated;

-- `balance` is spendable; `reserved` is held for try-ons that have not settled yet.
create table tryon.accounts (
  id uuid primary key default gen_random_uuid(),
  balance bigint not null default 0 check (balance >= 0),
  reserved bigint not null default 0 check (reserved >= 0),
  created_at timestamptz not null default now()
);

-- The key itself is never stored, only its SHA-256. The limits are the abuse limits of 0400 (null: none).
-- Rotation: the old key works until expires_at (the grace period), then answers 403 like a deactivated key.
create table tryon.api_keys (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references tryon.accounts (id),
  key_hash bytea not null unique check (octet_length(key_hash) = 32),
  display_prefix text not null,
  mode text not null check (mode in ('live', 'test')),
  active boolean not null default true,
  allowed_origins text[] not null default '{}',
  label text,
  created_at timestamptz not null default now(),
  deactivated_at timestamptz,
  limit_per_minute integer check (limit_per_minute >= 1),
  limit_per_client_per_minute integer check (limit_per_client_per_minute >= 1),
  limit_daily_credits integer check (limit_daily_credits >= 0),
  limit_daily_refunded integer check (limit_daily_refunded >= 0),
  limit_per_client_daily_refunded integer check (limit_per_client_daily_refunded >= 0),
  expires_at timestamptz,
  replaced_by uuid references tryon.api_keys (id)
);
create index api_keys_account_id_idx on tryon.api_keys (account_id);

create table tryon.tryons (
  id uuid primary key,
  account_id uuid not null references tryon.accounts (id),
  api_key_id uuid not null references tryon.api_keys (id),
  product_kind text not null check (product_kind in ('standard', 'wedding-dress')),
  status text not null default 'reserved'
    check (status in ('reserved', 'succeeded', 'failed', 'expired')),
  credits_reserved integer not null check (credits_reserved > 0),
  credits_charged integer check (credits_charged >= 0 and credits_charged <= credits_reserved),
  outcome text,
  short_id text unique,
  result_path text,
  engine text,
  clothing_type text,
  parent_url text,
  locale text,
  origin text,
  created_at timestamptz not null default now(),
  settled_at timestamptz,
  -- What a try-on holds until it settles: the UTC day of its daily counters, which of them
  -- ('credits', 'refunded', 'refunded_client'), and the client's HMAC while it holds a per-client one.
  usage_window timestamptz,
  usage_held text[] not null default '{}',
  client_hash bytea check (octet_length(client_hash) = 32),
  -- A deleted try-on keeps what billing and the shop's analytics need and loses what came from the shopper.
  deleted_at timestamptz,
  check ((status = 'reserved') = (settled_at is null)),
  check ((cardinality(usage_held) = 0) = (usage_window is null))
);
create index tryons_unsettled_idx on tryon.tryons (created_at) where status = 'reserved';
-- Usage per account and period, deletion before a date, and a key's last use.
create index tryons_account_created_idx on tryon.tryons (account_id, created_at);
create index tryons_api_key_created_idx on tryon.tryons (api_key_id, created_at);

-- One row per movement. `delta` changes accounts.balance, `reserved_delta` changes
-- accounts.reserved: a reservation moves credits from balance to reserved, a charge
-- consumes reserved credits for good, a refund moves them back to balance.
create table tryon.ledger (
  id bigint generated always as identity primary key,
  account_id uuid not null references tryon.accounts (id),
  tryon_id uuid references tryon.tryons (id),
  kind text not null check (kind in ('topup', 'reservation', 'charge', 'refund')),
  delta bigint not null,
  reserved_delta bigint not null,
  reason text not null,
  created_at timestamptz not null default now(),
  check (
    (kind = 'topup' and delta > 0 and reserved_delta = 0 and tryon_id is null)
    or (kind = 'reservation' and delta < 0 and reserved_delta = -delta and tryon_id is not null)
    or (kind = 'charge' and delta = 0 and reserved_delta < 0 and tryon_id is not null)
    or (kind = 'refund' and delta > 0 and reserved_delta = -delta and tryon_id is not null)
  )
);
create index ledger_account_id_idx on tryon.ledger (account_id);
-- A try-on can be reserved, charged and refunded at most once each: no double spend, no double refund.
create unique index ledger_one_movement_per_kind_idx on tryon.ledger (tryon_id, kind) where tryon_id is not null;

-- Idempotent retries: a request sent again with the same Idempotency-Key (per API key, for 24 hours)
-- gets the first request's response instead of a second try-on and a second charge.
-- The key is claimed inside begin_tryon and completed inside settle_tryon, so a try-on with
-- an idempotency key still takes exactly two database calls.
create table tryon.idempotency_keys (
  api_key_id uuid not null references tryon.api_keys (id),
  idempotency_key text not null check (length(idempotency_key) between 1 and 255),
  -- SHA-256 of what the caller sent: the same key with another request is refused.
  request_hash bytea not null check (octet_length(request_hash) = 32),
  tryon_id uuid not null references tryon.tryons (id),
  status text not null default 'in_progress' check (status in ('in_progress', 'completed')),
  response jsonb,
  created_at timestamptz not null default now(),
  primary key (api_key_id, idempotency_key),
  check ((status = 'completed') = (response is not null))
);
create index idempotency_keys_tryon_id_idx on tryon.idempotency_keys (tryon_id);
create index idempotency_keys_created_at_idx on tryon.idempotency_keys (created_at);

-- The abuse limits' counters (0400). One row per key, metric, client (empty for the key as a whole) and window: a
-- minute for `tryons`, a UTC day for `credits` and `refunded`. `used` is spent for good; `pending` is held by
-- try-ons still running, so a cap counts them before they settle and stays exact under concurrency.
create table tryon.usage_counters (
  api_key_id uuid not null references tryon.api_keys (id),
  metric text not null check (metric in ('tryons', 'credits', 'refunded')),
  client_hash bytea not null check (octet_length(client_hash) in (0, 32)),
  window_start timestamptz not null,
  window_end timestamptz not null check (window_end > window_start),
  used bigint not null default 0 check (used >= 0),
  pending bigint not null default 0 check (pending >= 0),
  primary key (api_key_id, metric, client_hash, window_start)
);
create index usage_counters_window_end_idx on tryon.usage_counters (window_end);

-- Stored images of deleted try-ons that still have to be removed from the bucket. A deletion queues its image
-- here in the same transaction; whoever holds the store (the admin CLI, the dev stack's timer) removes it and
-- then confirms, so an image is never forgotten when Storage is down.
create table tryon.result_deletions (
  result_path text primary key,
  tryon_id uuid not null references tryon.tryons (id),
  requested_at timestamptz not null default now()
);

alter table tryon.accounts enable row level security;
alter table tryon.api_keys enable row level security;
alter table tryon.tryons enable row level security;
alter table tryon.ledger enable row level security;
alter table tryon.idempotency_keys enable row level security;
alter table tryon.usage_counters enable row level security;
alter table tryon.result_deletions enable row level security;
revoke all on all tables in schema tryon from public, anon, authenticated, service_role;
