-- Abuse limits: a key that sits in a storefront's page source cannot be drained by a script that copies it.
-- Per key: try-ons per minute, try-ons per minute per client address, credits per day, and refunded ("free")
-- deliveries per day, per key and per client address. The limits live on the key; the counters in
-- tryon.usage_counters. begin_tryon checks and takes them in the same call that reserves the credits (still two
-- database calls per try-on), settle_tryon and the sweeper give back what a try-on held, and the sweeper drops
-- counters whose window has ended. A client address arrives only as an HMAC made by the service; it is never stored.

alter table tryon.api_keys
  add column limit_per_minute integer check (limit_per_minute >= 1),
  add column limit_per_client_per_minute integer check (limit_per_client_per_minute >= 1),
  add column limit_daily_credits integer check (limit_daily_credits >= 0),
  add column limit_daily_refunded integer check (limit_daily_refunded >= 0),
  add column limit_per_client_daily_refunded integer check (limit_per_client_daily_refunded >= 0);

-- One row per key, metric, client (empty for the key as a whole) and window: a minute for `tryons`, a UTC day for
-- `credits` and `refunded`. `used` is spent for good; `pending` is held by try-ons still running, so a cap counts
-- them before they settle and stays exact under concurrency.
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
alter table tryon.usage_counters enable row level security;
revoke all on tryon.usage_counters from public, anon, authenticated, service_role;

-- What a try-on holds until it settles: the UTC day of its daily counters, which of them
-- ('credits', 'refunded', 'refunded_client'), and the client's HMAC while it holds a per-client one.
alter table tryon.tryons
  add column usage_window timestamptz,
  add column usage_held text[] not null default '{}',
  add column client_hash bytea check (octet_length(client_hash) = 32),
  add check ((cardinality(usage_held) = 0) = (usage_window is null));

-- Limits a key restricted to origins (a browser key, public in a page's source) gets when it is created.
create function tryon.browser_key_default_limits()
returns jsonb
language sql immutable
set search_path = ''
as $$
  select '{"perMinute": null, "perClientPerMinute": 10, "dailyCredits": null, "dailyRefunded": 20, "perClientDailyRefunded": 5}'::jsonb
$$;

create function tryon.limits_of(p_key tryon.api_keys)
returns jsonb
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
    'perMinute', p_key.limit_per_minute,
    'perClientPerMinute', p_key.limit_per_client_per_minute,
    'dailyCredits', p_key.limit_daily_credits,
    'dailyRefunded', p_key.limit_daily_refunded,
    'perClientDailyRefunded', p_key.limit_per_client_daily_refunded)
$$;

-- The client of a request whose address the service could not tell: all such requests count as one client.
create function tryon.unknown_client()
returns bytea
language sql immutable
set search_path = ''
as $$ select decode(repeat('00', 32), 'hex') $$;

-- Sets some limits of a key and leaves the others: each field of p_limits present sets that limit, null removes it.
-- p_clear removes every limit first. Returns the key's limits.
-- select tryon.set_key_limits('<key id>', '{"perMinute": 30, "dailyCredits": 500, "dailyRefunded": null}');
create function tryon.set_key_limits(p_key_id uuid, p_limits jsonb default '{}', p_clear boolean default false)
returns jsonb
language plpgsql volatile
security definer
set search_path = ''
as $$
declare
  k tryon.api_keys;
  v_name text;
  v_value jsonb;
  v_min integer;
begin
  if p_limits is null or jsonb_typeof(p_limits) <> 'object' then
    raise exception 'limits must be a JSON object such as {"perMinute": 30}' using errcode = '22023';
  end if;
  for v_name, v_value in select * from jsonb_each(p_limits) loop
    v_min := case v_name
      when 'perMinute' then 1 when 'perClientPerMinute' then 1
      when 'dailyCredits' then 0 when 'dailyRefunded' then 0 when 'perClientDailyRefunded' then 0
    end;
    if v_min is null then
      raise exception 'unknown limit %; the limits are perMinute, perClientPerMinute, dailyCredits, dailyRefunded and perClientDailyRefunded', v_name
        using errcode = '22023';
    end if;
    if jsonb_typeof(v_value) <> 'null' and (jsonb_typeof(v_value) <> 'number' or v_value::numeric <> trunc(v_value::numeric)
        or v_value::numeric < v_min or v_value::numeric > 2147483647) then
      raise exception 'limit % must be a whole number of at least %, or null to remove it', v_name, v_min using errcode = '22023';
    end if;
  end loop;

  update tryon.api_keys a
     set limit_per_minute = case when p_limits ? 'perMinute' then (p_limits ->> 'perMinute')::integer
                                 when p_clear then null else a.limit_per_minute end,
         limit_per_client_per_minute = case when p_limits ? 'perClientPerMinute' then (p_limits ->> 'perClientPerMinute')::integer
                                            when p_clear then null else a.limit_per_client_per_minute end,
         limit_daily_credits = case when p_limits ? 'dailyCredits' then (p_limits ->> 'dailyCredits')::integer
                                    when p_clear then null else a.limit_daily_credits end,
         limit_daily_refunded = case when p_limits ? 'dailyRefunded' then (p_limits ->> 'dailyRefunded')::integer
                                     when p_clear then null else a.limit_daily_refunded end,
         limit_per_client_daily_refunded = case when p_limits ? 'perClientDailyRefunded' then (p_limits ->> 'perClientDailyRefunded')::integer
                                                when p_clear then null else a.limit_per_client_daily_refunded end
   where a.id = p_key_id
  returning * into k;
  if not found then
    raise exception 'api key % does not exist', p_key_id using errcode = 'P0002';
  end if;
  return tryon.limits_of(k);
end
$$;

-- A key as the admin CLI's `keys show` prints it: never the key itself, which is not stored.
create function tryon.show_api_key(p_key_id uuid)
returns jsonb
language plpgsql stable
security definer
set search_path = ''
as $$
declare
  v_key jsonb;
begin
  select jsonb_build_object(
           'keyId', k.id, 'accountId', k.account_id, 'displayPrefix', k.display_prefix, 'mode', k.mode,
           'active', k.active, 'label', k.label, 'allowedOrigins', to_jsonb(k.allowed_origins),
           'createdAt', k.created_at, 'deactivatedAt', k.deactivated_at, 'credits', a.balance,
           'limits', tryon.limits_of(k))
    into v_key
    from tryon.api_keys k join tryon.accounts a on a.id = k.account_id
   where k.id = p_key_id;
  if not found then
    raise exception 'api key % does not exist', p_key_id using errcode = 'P0002';
  end if;
  return v_key;
end
$$;

-- Browser keys made before this migration get the defaults too.
update tryon.api_keys a
   set limit_per_client_per_minute = (d ->> 'perClientPerMinute')::integer,
       limit_daily_refunded = (d ->> 'dailyRefunded')::integer,
       limit_per_client_daily_refunded = (d ->> 'perClientDailyRefunded')::integer
  from tryon.browser_key_default_limits() as d
 where cardinality(a.allowed_origins) > 0;

-- As before, and a key restricted to origins starts with tryon.browser_key_default_limits().
create or replace function tryon.create_api_key(
  p_credits bigint default 0,
  p_mode text default 'test',
  p_allowed_origins text[] default '{}',
  p_active boolean default true,
  p_label text default null,
  p_account_id uuid default null
)
returns table (api_key text, key_id uuid, account_id uuid, credits bigint)
language plpgsql volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_account uuid := p_account_id;
  v_origins text[];
  v_key text;
  v_key_id uuid;
  v_balance bigint;
  v_defaults jsonb;
begin
  if p_mode is null or p_mode not in ('live', 'test') then
    raise exception 'mode must be live or test' using errcode = '22023';
  end if;
  if p_credits is null or p_credits < 0 then
    raise exception 'credits cannot be negative' using errcode = '22023';
  end if;
  select coalesce(array_agg(tryon.normalize_allowed_origin(o) order by n), '{}')
    into v_origins
    from unnest(coalesce(p_allowed_origins, '{}')) with ordinality as u (o, n);
  v_defaults := case when cardinality(v_origins) > 0 then tryon.browser_key_default_limits() else '{}'::jsonb end;

  if v_account is null then
    insert into tryon.accounts default values returning id into v_account;
  elsif not exists (select 1 from tryon.accounts a where a.id = v_account) then
    raise exception 'account % does not exist', v_account using errcode = 'P0002';
  end if;
  if p_credits > 0 then
    perform tryon.top_up(v_account, p_credits, 'key_created');
  end if;

  v_key := 'vto_' || p_mode || '_' || tryon.random_base62(30);
  v_key := v_key || tryon.base62(tryon.crc32(convert_to(v_key, 'UTF8')), 6);
  insert into tryon.api_keys (account_id, key_hash, display_prefix, mode, active, allowed_origins, label, deactivated_at,
                              limit_per_minute, limit_per_client_per_minute, limit_daily_credits,
                              limit_daily_refunded, limit_per_client_daily_refunded)
  values (v_account, sha256(convert_to(v_key, 'UTF8')), left(v_key, 13), p_mode, coalesce(p_active, true),
          v_origins, p_label, case when coalesce(p_active, true) then null else now() end,
          (v_defaults ->> 'perMinute')::integer, (v_defaults ->> 'perClientPerMinute')::integer,
          (v_defaults ->> 'dailyCredits')::integer, (v_defaults ->> 'dailyRefunded')::integer,
          (v_defaults ->> 'perClientDailyRefunded')::integer)
  returning id into v_key_id;

  select a.balance into v_balance from tryon.accounts a where a.id = v_account;
  return query select v_key, v_key_id, v_account, v_balance;
end
$$;

-- Gives back what a try-on held on its daily counters as it settles or expires: the credits it did not keep
-- return to the day's budget, and its free-delivery slot stays taken only if it was delivered for nothing.
-- Counters are locked in key order, as begin_tryon locks them, so concurrent calls queue instead of deadlocking.
create function tryon.release_usage(p_tryon tryon.tryons, p_charged integer, p_free_delivery boolean)
returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  if cardinality(p_tryon.usage_held) = 0 then
    return;
  end if;
  perform 1
     from tryon.usage_counters u
    where u.api_key_id = p_tryon.api_key_id and u.window_start = p_tryon.usage_window
      and (u.metric, u.client_hash) in (
        select case h when 'credits' then 'credits' else 'refunded' end,
               case h when 'refunded_client' then p_tryon.client_hash else ''::bytea end
          from unnest(p_tryon.usage_held) as h)
    order by u.metric, u.client_hash, u.window_start
      for update;
  update tryon.usage_counters u
     set pending = greatest(u.pending - r.held, 0), used = u.used + r.kept
    from (
      select case h when 'credits' then 'credits' else 'refunded' end as metric,
             case h when 'refunded_client' then p_tryon.client_hash else ''::bytea end as client_hash,
             case h when 'credits' then p_tryon.credits_reserved else 1 end as held,
             case h when 'credits' then p_charged else case when p_free_delivery then 1 else 0 end end as kept
        from unnest(p_tryon.usage_held) as h
    ) r
   where u.api_key_id = p_tryon.api_key_id and u.window_start = p_tryon.usage_window
     and u.metric = r.metric and u.client_hash = r.client_hash;
end
$$;

drop function tryon.begin_tryon(bytea, text, uuid, text, text, text, text, text, bytea);

-- Step 3 of a request, as before, plus the key's abuse limits, checked after the key and its idempotency claim and
-- before the balance: 'rate_limited', 'daily_cap_reached' or 'free_deliveries_exhausted', with `retry_after` in
-- seconds. A refused request takes nothing. p_client_hash is the HMAC of the client's address (null: unknown);
-- p_now the service's clock (null: the database's), which decides the minute and the UTC day of the counters.
create function tryon.begin_tryon(
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

  select * into k from tryon.check_api_key(p_key_hash, p_origin);
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
          p_clothing_type, p_parent_url, p_locale, p_origin,
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

-- Step 7, as before, and the try-on gives back what it held on its key's daily counters. A delivery that kept
-- nothing (the bridal refund) keeps its free-delivery slot; the client's HMAC is then forgotten.
create or replace function tryon.settle_tryon(
  p_tryon_id uuid,
  p_outcome text,
  p_short_id text default null,
  p_result_path text default null,
  p_engine text default null,
  p_response jsonb default null
)
returns table (settled boolean, status text, credits_charged integer, balance bigint, short_id text)
language plpgsql volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  t tryon.tryons;
  v_delivered boolean;
  v_charge integer;
  v_refund integer;
  v_balance bigint;
begin
  select * into t from tryon.tryons where id = p_tryon_id for update;
  if not found then
    raise exception 'try-on % does not exist', p_tryon_id using errcode = 'P0002';
  end if;

  if t.status <> 'reserved' then
    return query
      select false, t.status, t.credits_charged, a.balance, t.short_id
        from tryon.accounts a where a.id = t.account_id;
    return;
  end if;

  v_delivered := tryon.is_delivered(t.product_kind, p_outcome);
  if v_delivered is null then
    raise exception 'outcome % cannot settle a % try-on', p_outcome, t.product_kind using errcode = '22023';
  end if;
  if v_delivered and p_result_path is null then
    raise exception 'a delivered try-on needs its result path' using errcode = '22023';
  end if;
  if v_delivered and p_outcome <> 'train_score_low' and p_short_id is null then
    raise exception 'a delivered try-on needs a short id' using errcode = '22023';
  end if;

  v_charge := tryon.credits_for_outcome(t.product_kind, p_outcome);
  v_refund := t.credits_reserved - v_charge;

  -- Counters before the account, as begin_tryon takes them.
  perform tryon.release_usage(t, v_charge, v_delivered and v_charge = 0);

  update tryon.tryons
     set status = case when v_delivered then 'succeeded' else 'failed' end,
         credits_charged = v_charge,
         outcome = p_outcome,
         -- spec §4: shortId is null when the bridal train verdict fails
         short_id = case when v_delivered and p_outcome <> 'train_score_low' then p_short_id end,
         result_path = case when v_delivered then p_result_path end,
         engine = p_engine,
         client_hash = null,
         settled_at = now()
   where id = t.id
  returning * into t;

  update tryon.accounts a
     set balance = a.balance + v_refund, reserved = a.reserved - t.credits_reserved
   where a.id = t.account_id
  returning a.balance into v_balance;

  if v_charge > 0 then
    insert into tryon.ledger (account_id, tryon_id, kind, delta, reserved_delta, reason)
    values (t.account_id, t.id, 'charge', 0, -v_charge, p_outcome);
  end if;
  if v_refund > 0 then
    insert into tryon.ledger (account_id, tryon_id, kind, delta, reserved_delta, reason)
    values (t.account_id, t.id, 'refund', v_refund, -v_refund, p_outcome);
  end if;

  if v_delivered then
    update tryon.idempotency_keys i
       set status = 'completed',
           response = coalesce(p_response, '{}'::jsonb)
             || jsonb_build_object('shortId', t.short_id, 'creditsRemaining', v_balance, 'creditsCharged', v_charge)
     where i.tryon_id = t.id;
  else
    delete from tryon.idempotency_keys i where i.tryon_id = t.id;
  end if;

  return query select true, t.status, t.credits_charged, v_balance, t.short_id;
end
$$;

drop function tryon.sweep_reservations(interval, integer);

-- As before, and an expired reservation gives back what it held on its key's counters; counters whose window
-- ended over a minute ago (room for clocks that differ a little) are deleted. p_now is the sweeper's clock
-- (null: the database's), for tests.
-- Rows are locked in account order, and the counters they hold in key order, so concurrent sweeps and
-- try-ons cannot deadlock.
create function tryon.sweep_reservations(
  p_older_than interval default interval '10 minutes',
  p_limit integer default 500,
  p_now timestamptz default null
)
returns integer
language plpgsql volatile
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := coalesce(p_now, now());
  v_ids uuid[];
  r tryon.tryons;
  v_count integer := 0;
begin
  if p_older_than < interval '0' then
    raise exception 'the age of a sweepable reservation cannot be negative' using errcode = '22023';
  end if;
  select coalesce(array_agg(s.id order by s.account_id, s.created_at), '{}') into v_ids
    from (select t.id, t.account_id, t.created_at
            from tryon.tryons t
           where t.status = 'reserved' and t.created_at < v_now - p_older_than
           order by t.account_id, t.created_at
           limit p_limit
             for update skip locked) s;

  perform 1
     from tryon.usage_counters u
     join (select t.api_key_id, t.usage_window,
                  case h when 'credits' then 'credits' else 'refunded' end as metric,
                  case h when 'refunded_client' then t.client_hash else ''::bytea end as client_hash
             from tryon.tryons t, unnest(t.usage_held) as h
            where t.id = any (v_ids)) held
       on u.api_key_id = held.api_key_id and u.metric = held.metric
      and u.client_hash = held.client_hash and u.window_start = held.usage_window
    order by u.api_key_id, u.metric, u.client_hash, u.window_start
      for update of u;

  for r in select * from tryon.tryons t where t.id = any (v_ids) order by t.account_id, t.created_at loop
    perform tryon.release_usage(r, 0, false);
    update tryon.tryons
       set status = 'expired', outcome = 'expired', credits_charged = 0, client_hash = null, settled_at = now()
     where id = r.id;
    update tryon.accounts
       set balance = balance + r.credits_reserved, reserved = reserved - r.credits_reserved
     where id = r.account_id;
    insert into tryon.ledger (account_id, tryon_id, kind, delta, reserved_delta, reason)
    values (r.account_id, r.id, 'refund', r.credits_reserved, -r.credits_reserved, 'expired');
    delete from tryon.idempotency_keys i where i.tryon_id = r.id;
    v_count := v_count + 1;
  end loop;

  delete from tryon.usage_counters u
   where (u.api_key_id, u.metric, u.client_hash, u.window_start) in (
     select c.api_key_id, c.metric, c.client_hash, c.window_start
       from tryon.usage_counters c
      where c.window_end <= v_now - interval '1 minute'
      order by c.window_end
      limit 10000
        for update skip locked);
  delete from tryon.idempotency_keys i where i.created_at < now() - tryon.idempotency_ttl();
  return v_count;
end
$$;

revoke all on all functions in schema tryon from public, anon, authenticated, service_role;
grant execute on function
  tryon.authorize_api_key(bytea, text),
  tryon.begin_tryon(bytea, text, uuid, text, text, text, text, text, bytea, bytea, timestamptz),
  tryon.settle_tryon(uuid, text, text, text, text, jsonb),
  tryon.sweep_reservations(interval, integer, timestamptz),
  tryon.create_api_key(bigint, text, text[], boolean, text, uuid),
  tryon.add_credits(uuid, bigint),
  tryon.deactivate_api_key(uuid),
  tryon.credit_balance(uuid),
  tryon.set_key_limits(uuid, jsonb, boolean),
  tryon.show_api_key(uuid)
to service_role;
