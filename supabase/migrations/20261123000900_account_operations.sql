-- Running a shop's account: deleting a shopper's image (GDPR Art. 17), usage by product page, share links and
-- key rotation. Deleting keeps the billing record and the ledger; the stored image is removed through the
-- Storage API by the admin CLI (cli/tryons.ts), never by SQL: deleting a row of storage.objects orphans the file.

-- A product page is kept without its query string, fragment and credentials: they can carry a shopper's data
-- (a session, an e-mail in a campaign link) and say nothing about the product.
create function tryon.page_url(p_url text)
returns text
language sql immutable
set search_path = ''
as $$
  select nullif(regexp_replace(regexp_replace(p_url, '[?#].*$', ''), '^([a-z][a-z0-9+.-]*://)[^/@]*@', '\1', 'i'), '')
$$;

update tryon.tryons set parent_url = tryon.page_url(parent_url) where parent_url ~ '[?#@]';

-- Rotation: the old key works until expires_at (the grace period), then answers 403 like a deactivated key.
alter table tryon.api_keys
  add column expires_at timestamptz,
  add column replaced_by uuid references tryon.api_keys (id);

-- A deleted try-on keeps what billing and the shop's analytics need and loses what came from the shopper.
alter table tryon.tryons add column deleted_at timestamptz;
-- Usage per account and period, deletion before a date, and a key's last use.
create index tryons_account_created_idx on tryon.tryons (account_id, created_at);
drop index tryon.tryons_account_id_idx;
create index tryons_api_key_created_idx on tryon.tryons (api_key_id, created_at);

-- Stored images of deleted try-ons that still have to be removed from the bucket. A deletion queues its image
-- here in the same transaction; whoever holds the store (the admin CLI, the dev stack's timer) removes it and
-- then confirms, so an image is never forgotten when Storage is down.
create table tryon.result_deletions (
  result_path text primary key,
  tryon_id uuid not null references tryon.tryons (id),
  requested_at timestamptz not null default now()
);
alter table tryon.result_deletions enable row level security;
revoke all on tryon.result_deletions from public, anon, authenticated, service_role;

-- A key's state at p_now: deactivated by hand, expired after a rotation's grace, expiring during it, or active.
create function tryon.key_state(p_key tryon.api_keys, p_now timestamptz)
returns text
language sql stable
set search_path = ''
as $$
  select case
    when not p_key.active then 'deactivated'
    when p_key.expires_at <= p_now then 'expired'
    when p_key.expires_at is not null then 'expiring'
    else 'active'
  end
$$;

drop function tryon.authorize_api_key(bytea, text);
drop function tryon.check_api_key(bytea, text);

-- As before, and a key past its expiry is inactive. p_now is the service's clock, as the limits count by.
create function tryon.check_api_key(
  p_key_hash bytea,
  p_origin text,
  p_now timestamptz,
  out verdict text,
  out api_key_id uuid,
  out account_id uuid,
  out key_mode text
)
language plpgsql stable
set search_path = ''
as $$
begin
  select k.id, k.account_id, k.mode,
         case
           when not k.active or k.expires_at <= coalesce(p_now, now()) then 'key_inactive'
           when cardinality(k.allowed_origins) > 0
                and not tryon.origin_allowed(k.allowed_origins, p_origin) then 'origin_not_allowed'
           else 'ok'
         end
    into api_key_id, account_id, key_mode, verdict
    from tryon.api_keys k
   where k.key_hash = p_key_hash;
  if not found then
    verdict := 'invalid_key';
  end if;
end
$$;

create function tryon.authorize_api_key(p_key_hash bytea, p_origin text, p_now timestamptz default null)
returns table (verdict text, key_mode text)
language sql stable
security definer
set search_path = ''
as $$
  select c.verdict, c.key_mode from tryon.check_api_key(p_key_hash, p_origin, p_now) c
$$;

-- Step 3 of a request, exactly as before, except that the key is checked by the service's clock (a rotated key
-- expires by it) and the product page is stored without its query string and fragment.
create or replace function tryon.begin_tryon(
  p_key_hash bytea,
  p_origin text,
  p_tryon_id uuid,
  p_product_kind text,
  p_clothing_type text default null,
  p_parent_url text default null,
  p_locale text default null,
  p_idempotency_key text default null,
  p_request_hash bytea default null,
  p_client_hash bytea default null,
  p_now timestamptz default null
)
returns table (verdict text, key_mode text, balance bigint, credits_reserved integer, replay jsonb, retry_after integer)
language plpgsql volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  k record;
  v_key tryon.api_keys;
  v_price integer := tryon.price_of(p_product_kind);
  v_balance bigint;
  v_claim tryon.idempotency_keys;
  v_now timestamptz := coalesce(p_now, now());
  v_minute timestamptz := date_trunc('minute', coalesce(p_now, now()), 'UTC');
  v_day timestamptz := date_trunc('day', coalesce(p_now, now()), 'UTC');
  v_client bytea := coalesce(p_client_hash, tryon.unknown_client());
  -- The counters this request needs, one per limit the key has, in the order refusals are reported: the
  -- longest wait first, so that a caller retrying after Retry-After is not refused again by another limit.
  c_metric text[] := '{}';
  c_client bytea[] := '{}';
  c_start timestamptz[] := '{}';
  c_end timestamptz[] := '{}';
  c_limit bigint[] := '{}';
  c_amount integer[] := '{}';
  c_refusal text[] := '{}';
  v_refusal text;
  v_retry integer;
  v_held text[] := '{}';
begin
  if v_price is null then
    raise exception 'unknown product kind %', p_product_kind using errcode = '22023';
  end if;
  if (p_idempotency_key is null) <> (p_request_hash is null) then
    raise exception 'an idempotency key needs its request hash' using errcode = '22023';
  end if;
  if octet_length(p_client_hash) <> 32 then
    raise exception 'a client hash is 32 bytes (HMAC-SHA-256)' using errcode = '22023';
  end if;

  select * into k from tryon.check_api_key(p_key_hash, p_origin, v_now);
  if k.verdict <> 'ok' then
    return query select k.verdict, k.key_mode, null::bigint, 0, null::jsonb, null::integer;
    return;
  end if;

  if p_idempotency_key is not null then
    -- An expired claim is forgotten; a live one decides the request before any credit moves.
    delete from tryon.idempotency_keys i
     where i.api_key_id = k.api_key_id and i.idempotency_key = p_idempotency_key
       and i.created_at < now() - tryon.idempotency_ttl();
    select * into v_claim from tryon.idempotency_keys i
     where i.api_key_id = k.api_key_id and i.idempotency_key = p_idempotency_key;
    if found then
      return query select
        case
          when v_claim.request_hash <> p_request_hash then 'idempotency_mismatch'
          when v_claim.status = 'in_progress' then 'idempotency_in_progress'
          else 'replay'
        end,
        k.key_mode, null::bigint, 0,
        case when v_claim.request_hash = p_request_hash then v_claim.response end,
        null::integer;
      return;
    end if;
  end if;

  select * into v_key from tryon.api_keys a where a.id = k.api_key_id;
  if v_key.limit_daily_credits is not null then
    c_metric := c_metric || 'credits'::text; c_client := c_client || ''::bytea;
    c_start := c_start || v_day; c_end := c_end || (v_day + interval '1 day');
    c_limit := c_limit || v_key.limit_daily_credits::bigint; c_amount := c_amount || v_price;
    c_refusal := c_refusal || 'daily_cap_reached'::text;
  end if;
  if p_product_kind = 'wedding-dress' and v_key.limit_daily_refunded is not null then
    c_metric := c_metric || 'refunded'::text; c_client := c_client || ''::bytea;
    c_start := c_start || v_day; c_end := c_end || (v_day + interval '1 day');
    c_limit := c_limit || v_key.limit_daily_refunded::bigint; c_amount := c_amount || 1;
    c_refusal := c_refusal || 'free_deliveries_exhausted'::text;
  end if;
  if p_product_kind = 'wedding-dress' and v_key.limit_per_client_daily_refunded is not null then
    c_metric := c_metric || 'refunded'::text; c_client := c_client || v_client;
    c_start := c_start || v_day; c_end := c_end || (v_day + interval '1 day');
    c_limit := c_limit || v_key.limit_per_client_daily_refunded::bigint; c_amount := c_amount || 1;
    c_refusal := c_refusal || 'free_deliveries_exhausted'::text;
  end if;
  if v_key.limit_per_minute is not null then
    c_metric := c_metric || 'tryons'::text; c_client := c_client || ''::bytea;
    c_start := c_start || v_minute; c_end := c_end || (v_minute + interval '1 minute');
    c_limit := c_limit || v_key.limit_per_minute::bigint; c_amount := c_amount || 1;
    c_refusal := c_refusal || 'rate_limited'::text;
  end if;
  if v_key.limit_per_client_per_minute is not null then
    c_metric := c_metric || 'tryons'::text; c_client := c_client || v_client;
    c_start := c_start || v_minute; c_end := c_end || (v_minute + interval '1 minute');
    c_limit := c_limit || v_key.limit_per_client_per_minute::bigint; c_amount := c_amount || 1;
    c_refusal := c_refusal || 'rate_limited'::text;
  end if;

  if cardinality(c_metric) > 0 then
    -- Lock every counter the request needs (creating those that do not exist yet) in key order: concurrent
    -- requests on the same counters queue here, and each then sees what the ones before it took.
    -- ON CONFLICT DO UPDATE locks the row even when its WHERE leaves it unchanged.
    insert into tryon.usage_counters as u (api_key_id, metric, client_hash, window_start, window_end)
    select v_key.id, c.metric, c.client_hash, c.window_start, c.window_end
      from unnest(c_metric, c_client, c_start, c_end) as c (metric, client_hash, window_start, window_end)
     order by c.metric, c.client_hash, c.window_start
    on conflict (api_key_id, metric, client_hash, window_start) do update set used = u.used where false;

    select c.refusal,
           case
             -- Settled use alone is over the limit: nothing changes before the window ends.
             when u.used + c.amount > c.lim then greatest(1, ceil(extract(epoch from u.window_end - v_now)))::integer
             -- Try-ons still running hold the rest: some of it may come back when they settle.
             else least(10, greatest(1, ceil(extract(epoch from u.window_end - v_now))))::integer
           end
      into v_refusal, v_retry
      from unnest(c_metric, c_client, c_start, c_limit, c_amount, c_refusal) with ordinality
             as c (metric, client_hash, window_start, lim, amount, refusal, n)
      join tryon.usage_counters u
        on u.api_key_id = v_key.id and u.metric = c.metric and u.client_hash = c.client_hash and u.window_start = c.window_start
     where u.used + u.pending + c.amount > c.lim
     order by c.n
     limit 1;
    if v_refusal is not null then
      return query select v_refusal, k.key_mode, null::bigint, 0, null::jsonb, v_retry;
      return;
    end if;
  end if;

  -- The WHERE clause is re-checked against the latest row version, so concurrent
  -- requests can never take the balance below zero.
  update tryon.accounts a
     set balance = a.balance - v_price, reserved = a.reserved + v_price
   where a.id = k.account_id and a.balance >= v_price
  returning a.balance into v_balance;
  if not found then
    return query
      select 'insufficient_credits', k.key_mode, a.balance, 0, null::jsonb, null::integer
        from tryon.accounts a where a.id = k.account_id;
    return;
  end if;

  if cardinality(c_metric) > 0 then
    -- A try-on counts at once against a rate; against a daily cap it is pending until it settles.
    update tryon.usage_counters u
       set used = u.used + case when c.metric = 'tryons' then c.amount else 0 end,
           pending = u.pending + case when c.metric = 'tryons' then 0 else c.amount end
      from unnest(c_metric, c_client, c_start, c_amount) as c (metric, client_hash, window_start, amount)
     where u.api_key_id = v_key.id and u.metric = c.metric and u.client_hash = c.client_hash and u.window_start = c.window_start;
    v_held := array(
      select case when c.metric = 'credits' then 'credits' when c.client_hash = ''::bytea then 'refunded' else 'refunded_client' end
        from unnest(c_metric, c_client) as c (metric, client_hash)
       where c.metric <> 'tryons');
  end if;

  insert into tryon.tryons (id, account_id, api_key_id, product_kind, credits_reserved,
                            clothing_type, parent_url, locale, origin, usage_window, usage_held, client_hash)
  values (p_tryon_id, k.account_id, k.api_key_id, p_product_kind, v_price,
          p_clothing_type, tryon.page_url(p_parent_url), p_locale, p_origin,
          case when cardinality(v_held) > 0 then v_day end, v_held,
          case when 'refunded_client' = any (v_held) then v_client end);
  insert into tryon.ledger (account_id, tryon_id, kind, delta, reserved_delta, reason)
  values (k.account_id, p_tryon_id, 'reservation', -v_price, v_price, p_product_kind);

  if p_idempotency_key is not null then
    -- A concurrent request with the same key waits on this row's lock, then sees it.
    insert into tryon.idempotency_keys (api_key_id, idempotency_key, request_hash, tryon_id)
    values (k.api_key_id, p_idempotency_key, p_request_hash, p_tryon_id)
    on conflict do nothing;
    if not found then
      raise exception 'idempotency key claimed concurrently' using errcode = '40001';
    end if;
  end if;

  return query select 'ok', k.key_mode, v_balance, v_price, null::jsonb, null::integer;
end
$$;

-- The image behind a share link (GET /functions/v1/tryon-api/s/<shortId>): the result path of a delivered,
-- undeleted try-on, or null. Nothing else about the try-on leaves the database.
create function tryon.shared_result(p_short_id text)
returns text
language sql stable
security definer
set search_path = ''
as $$
  select t.result_path from tryon.tryons t
   where t.short_id = p_short_id and t.status = 'succeeded' and t.deleted_at is null
$$;

-- Deleting one try-on: the fields that came from the shopper or lead to their image are cleared (the image's
-- path and share link, the shopper's language, the client address's HMAC, the stored idempotent response that
-- holds the image's URL), the image is queued for removal from the bucket, and deleted_at is set. The billing
-- record stays: key, product kind, outcome, credits, times, the shop's page and origin; the ledger is untouched.
create function tryon.erase_tryon(p_tryon tryon.tryons)
returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  update tryon.tryons
     set short_id = null, result_path = null, locale = null, client_hash = null, deleted_at = now()
   where id = p_tryon.id;
  if p_tryon.result_path is not null then
    insert into tryon.result_deletions (result_path, tryon_id) values (p_tryon.result_path, p_tryon.id)
    on conflict do nothing;
  end if;
  delete from tryon.idempotency_keys i where i.tryon_id = p_tryon.id;
end
$$;

-- select tryon.delete_tryon('<try-on id>');  → 'deleted', or 'already_deleted' (nothing changes).
-- A try-on still running cannot be deleted yet: its result may still be stored and settled.
create function tryon.delete_tryon(p_tryon_id uuid)
returns text
language plpgsql volatile
security definer
set search_path = ''
as $$
declare
  t tryon.tryons;
begin
  select * into t from tryon.tryons where id = p_tryon_id for update;
  if not found then
    raise exception 'try-on % does not exist', p_tryon_id using errcode = 'P0002';
  end if;
  if t.deleted_at is not null then
    return 'already_deleted';
  end if;
  if t.status = 'reserved' then
    raise exception 'try-on % is still running; delete it once it has finished (at most 10 minutes)', p_tryon_id
      using errcode = '55000';
  end if;
  perform tryon.erase_tryon(t);
  return 'deleted';
end
$$;

-- select * from tryon.delete_account_tryons('<account id>', '2026-12-01');  Every try-on of the account created
-- before p_before. Those still running are left and counted; run it again once they have finished.
create function tryon.delete_account_tryons(p_account_id uuid, p_before timestamptz)
returns table (deleted integer, already_deleted integer, running integer)
language plpgsql volatile
security definer
set search_path = ''
as $$
declare
  t tryon.tryons;
  v_deleted integer := 0;
  v_already integer := 0;
  v_running integer := 0;
begin
  if p_before is null then
    raise exception 'give the date before which try-ons are deleted' using errcode = '22023';
  end if;
  if not exists (select 1 from tryon.accounts a where a.id = p_account_id) then
    raise exception 'account % does not exist', p_account_id using errcode = 'P0002';
  end if;
  for t in
    select * from tryon.tryons x
     where x.account_id = p_account_id and x.created_at < p_before
     order by x.created_at
       for update
  loop
    if t.deleted_at is not null then
      v_already := v_already + 1;
    elsif t.status = 'reserved' then
      v_running := v_running + 1;
    else
      perform tryon.erase_tryon(t);
      v_deleted := v_deleted + 1;
    end if;
  end loop;
  return query select v_deleted, v_already, v_running;
end
$$;

-- The images still to be removed from the bucket, oldest first; each is confirmed once the store removed it.
create function tryon.pending_result_deletions(p_limit integer default 100)
returns setof text
language sql stable
security definer
set search_path = ''
as $$
  select d.result_path from tryon.result_deletions d order by d.requested_at, d.result_path limit p_limit
$$;

create function tryon.confirm_result_deletion(p_result_path text)
returns void
language sql volatile
security definer
set search_path = ''
as $$
  delete from tryon.result_deletions d where d.result_path = p_result_path
$$;

-- Usage for dashboards: one row per account, UTC day, key, product page, origin and outcome. Credits come from
-- the ledger (charges, and refunds including the sweeper's), so summing any column of a period matches it.
-- outcome is 'generated', a wedding-dress verdict, the error code a try-on failed with, 'expired', or 'running'.
create view tryon.usage_daily as
select t.account_id,
       (t.created_at at time zone 'UTC')::date as day,
       t.api_key_id,
       tryon.page_url(t.parent_url) as parent_url,
       t.origin,
       coalesce(t.outcome, 'running') as outcome,
       count(*)::bigint as tryons,
       count(*) filter (where t.status = 'succeeded')::bigint as delivered,
       count(*) filter (where t.status in ('failed', 'expired'))::bigint as failed,
       count(*) filter (where t.status = 'reserved')::bigint as running,
       coalesce(sum(m.charged), 0)::bigint as credits_charged,
       coalesce(sum(m.refunded), 0)::bigint as credits_refunded,
       count(*) filter (where t.outcome = 'train_rendered')::bigint as train_rendered,
       count(*) filter (where t.outcome = 'train_score_low')::bigint as train_score_low,
       count(*) filter (where t.outcome = 'score_unavailable')::bigint as score_unavailable,
       count(*) filter (where t.outcome = 'train_pretreatment_unavailable')::bigint as train_pretreatment_unavailable
  from tryon.tryons t
  left join lateral (
    select sum(-l.reserved_delta) filter (where l.kind = 'charge') as charged,
           sum(l.delta) filter (where l.kind = 'refund') as refunded
      from tryon.ledger l
     where l.tryon_id = t.id
  ) m on true
 group by t.account_id, 2, t.api_key_id, 4, t.origin, 6;

revoke all on tryon.usage_daily from public, anon, authenticated, service_role;

-- A key as `keys list` and `keys show` print it: never the key itself, which is not stored. lastUsedAt is when
-- it last started a try-on.
create function tryon.key_summary(p_key tryon.api_keys, p_now timestamptz)
returns jsonb
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
    'keyId', p_key.id, 'accountId', p_key.account_id, 'displayPrefix', p_key.display_prefix, 'label', p_key.label,
    'mode', p_key.mode, 'allowedOrigins', to_jsonb(p_key.allowed_origins),
    'state', tryon.key_state(p_key, p_now),
    'active', tryon.key_state(p_key, p_now) in ('active', 'expiring'),
    'expiresAt', p_key.expires_at, 'replacedBy', p_key.replaced_by,
    'lastUsedAt', (select max(t.created_at) from tryon.tryons t where t.api_key_id = p_key.id),
    'createdAt', p_key.created_at, 'deactivatedAt', p_key.deactivated_at)
$$;

create function tryon.list_api_keys(p_account_id uuid, p_now timestamptz default null)
returns setof jsonb
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  if not exists (select 1 from tryon.accounts a where a.id = p_account_id) then
    raise exception 'account % does not exist', p_account_id using errcode = 'P0002';
  end if;
  return query
    select tryon.key_summary(k, coalesce(p_now, now()))
      from tryon.api_keys k
     where k.account_id = p_account_id
     order by k.created_at, k.id;
end
$$;

-- As before, with the key's state, expiry, successor and last use.
create or replace function tryon.show_api_key(p_key_id uuid)
returns jsonb
language plpgsql stable
security definer
set search_path = ''
as $$
declare
  v_key jsonb;
begin
  select tryon.key_summary(k, now()) || jsonb_build_object('credits', a.balance, 'limits', tryon.limits_of(k))
    into v_key
    from tryon.api_keys k join tryon.accounts a on a.id = k.account_id
   where k.id = p_key_id;
  if not found then
    raise exception 'api key % does not exist', p_key_id using errcode = 'P0002';
  end if;
  return v_key;
end
$$;

-- select * from tryon.rotate_api_key('<key id>', interval '24 hours');  A new key on the same account with the
-- same mode, origins, label and limits, returned once; the old key keeps working until the grace period ends
-- (by p_now, the caller's clock; the database's by default), then answers 403. Its counters are its own.
create function tryon.rotate_api_key(p_key_id uuid, p_grace interval default interval '24 hours', p_now timestamptz default null)
returns table (api_key text, key_id uuid, account_id uuid, replaces uuid, old_key_expires_at timestamptz)
language plpgsql volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_now timestamptz := coalesce(p_now, now());
  k tryon.api_keys;
  n record;
begin
  if p_grace is null or p_grace < interval '0' then
    raise exception 'the grace period cannot be negative' using errcode = '22023';
  end if;
  select * into k from tryon.api_keys x where x.id = p_key_id for update;
  if not found then
    raise exception 'api key % does not exist', p_key_id using errcode = 'P0002';
  end if;
  if k.replaced_by is not null then
    raise exception 'api key % was already rotated; its successor is %', p_key_id, k.replaced_by using errcode = '55000';
  end if;
  if tryon.key_state(k, v_now) <> 'active' then
    raise exception 'api key % is inactive; make a new key on its account with keys create --account %', p_key_id, k.account_id
      using errcode = '55000';
  end if;

  select * into n from tryon.create_api_key(0, k.mode, k.allowed_origins, true, k.label, k.account_id);
  update tryon.api_keys x
     set limit_per_minute = k.limit_per_minute,
         limit_per_client_per_minute = k.limit_per_client_per_minute,
         limit_daily_credits = k.limit_daily_credits,
         limit_daily_refunded = k.limit_daily_refunded,
         limit_per_client_daily_refunded = k.limit_per_client_daily_refunded
   where x.id = n.key_id;
  update tryon.api_keys x set expires_at = v_now + p_grace, replaced_by = n.key_id where x.id = k.id;

  return query select n.api_key, n.key_id, k.account_id, k.id, v_now + p_grace;
end
$$;

revoke all on all functions in schema tryon from public, anon, authenticated, service_role;
grant execute on function
  tryon.authorize_api_key(bytea, text, timestamptz),
  tryon.begin_tryon(bytea, text, uuid, text, text, text, text, text, bytea, bytea, timestamptz),
  tryon.settle_tryon(uuid, text, text, text, text, jsonb),
  tryon.sweep_reservations(interval, integer, timestamptz),
  tryon.create_api_key(bigint, text, text[], boolean, text, uuid),
  tryon.add_credits(uuid, bigint),
  tryon.deactivate_api_key(uuid),
  tryon.credit_balance(uuid),
  tryon.set_key_limits(uuid, jsonb, boolean),
  tryon.show_api_key(uuid),
  tryon.list_api_keys(uuid, timestamptz),
  tryon.rotate_api_key(uuid, interval, timestamptz),
  tryon.shared_result(text),
  tryon.delete_tryon(uuid),
  tryon.delete_account_tryons(uuid, timestamptz),
  tryon.pending_result_deletions(integer),
  tryon.confirm_result_deletion(text)
to service_role;
