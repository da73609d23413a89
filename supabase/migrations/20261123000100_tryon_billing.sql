-- Try-on billing: accounts, API keys, try-on records and an append-only credit ledger.
-- Everything lives in the `tryon` schema, which PostgREST does not expose; only the
-- service role may execute the functions, and no role but the owner can touch a table.

-- Supabase has these roles; plain Postgres and PGlite do not, and the grants below need them.
do $$
declare
  r text;
begin
  foreach r in array array['anon', 'authenticated', 'service_role'] loop
    if not exists (select 1 from pg_roles where rolname = r) then
      begin
        execute format('create role %I nologin noinherit', r);
      exception when duplicate_object or unique_violation then
        null; -- another session created it concurrently
      end;
    end if;
  end loop;
end
$$;

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
  deactivated_at timestamptz
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
  check ((status = 'reserved') = (settled_at is null))
);
create index tryons_account_id_idx on tryon.tryons (account_id);
create index tryons_unsettled_idx on tryon.tryons (created_at) where status = 'reserved';

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

alter table tryon.accounts enable row level security;
alter table tryon.api_keys enable row level security;
alter table tryon.tryons enable row level security;
alter table tryon.ledger enable row level security;
