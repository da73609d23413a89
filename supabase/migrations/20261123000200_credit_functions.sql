-- The money: pricing, the billing rules of spec §3, and the four calls the API makes
-- (authorize, begin, settle, sweep). Each call is one statement, so each runs in one
-- transaction and holds an account's row lock only for that statement.
-- The refund rule is tryon.credits_for_outcome; the abuse limits begin_tryon checks are explained in 0400.

-- Credits a try-on reserves up front (spec §1 and §8).
create function tryon.price_of(p_product_kind text)
returns integer
language sql immutable
set search_path = ''
as $$
  select case p_product_kind when 'standard' then 1 when 'wedding-dress' then 2 end
$$;

-- Whether an outcome delivered a result (true) or ended in an error response (false).
-- Null for an outcome that cannot happen to that kind of try-on: settling with it is a bug.
-- Failures are named by their error code, e.g. image_unreachable or generation_failed.
create function tryon.is_delivered(p_product_kind text, p_outcome text)
returns boolean
language sql immutable
set search_path = ''
as $$
  select case
    when p_outcome = 'generated' then
      case when p_product_kind = 'standard' then true end
    when p_outcome in ('train_rendered', 'score_unavailable', 'train_score_low', 'train_pretreatment_unavailable') then
      case when p_product_kind = 'wedding-dress' then true end
    when p_outcome ~ '^[a-z][a-z0-9_]*$' then false
  end
$$;

-- Credits kept when a try-on settles (spec §3); the rest of the reservation is refunded:
--
--   product kind    outcome (settle_tryon's p_outcome)       reserved   kept   refunded
--   standard        generated                                1          1      0
--   wedding-dress   train_rendered                           2          2      0
--   wedding-dress   score_unavailable                        2          2      0
--   wedding-dress   train_pretreatment_unavailable           2          1      1
--   wedding-dress   train_score_low                          2          0      2   (delivered all the same)
--   either          an error code, e.g. generation_failed    1 or 2     0      all
create function tryon.credits_for_outcome(p_product_kind text, p_outcome text)
returns integer
language sql immutable
set search_path = ''
as $$
  select case
    when p_product_kind = 'standard' and p_outcome = 'generated' then 1
    when p_product_kind = 'wedding-dress' and p_outcome in ('train_rendered', 'score_unavailable') then 2
    when p_product_kind = 'wedding-dress' and p_outcome = 'train_pretreatment_unavailable' then 1
    else 0
  end
$$;

-- Origins are compared in the form browsers send: lowercase scheme://host[:port], default port omitted.
create function tryon.origin_allowed(p_allowed text[], p_origin text)
returns boolean
language sql immutable
set search_path = ''
as $$
  select p_origin is not null and exists (
    select 1
      from unnest(p_allowed) as a
     where a = p_origin
        -- https://*.shop.example matches any subdomain of shop.example, on the default port only
        or (starts_with(a, 'https://*.')
            and starts_with(p_origin, 'https://')
            and length(p_origin) > length(a) - 1
            and right(p_origin, length(a) - 9) = substr(a, 10)
            and position(':' in substr(p_origin, 9)) = 0)
  )
$$;

-- What a key may do for a request from p_origin, in the order the API reports refusals. A key past its expiry
-- (a rotated key after its grace period) is inactive. p_now is the service's clock, as the limits count by.
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

-- Used when a request is refused before billing starts (bad body): the key's verdict
-- decides between 401/403 and the validation error, and nothing is reserved.
create function tryon.authorize_api_key(p_key_hash bytea, p_origin text, p_now timestamptz default null)
returns table (verdict text, key_mode text)
language sql stable
security definer
set search_path = ''
as $$
  select c.verdict, c.key_mode from tryon.check_api_key(p_key_hash, p_origin, p_now) c
$$;

-- How long a completed response is replayed.
create function tryon.idempotency_ttl()
returns interval
language sql immutable
set search_path = ''
as $$ select interval '24 hours' $$;

-- Step 3 of a request: authenticate, check the origin and the balance, reserve the price and record the try-on,
-- all in one call. Verdicts beyond the key checks:
-- 'replay' (the stored response of a completed request with this idempotency key is returned in `replay`),
-- 'idempotency_in_progress' (the first request with this key is still running),
-- 'idempotency_mismatch' (the key was used with a different request),
-- then the key's abuse limits, checked after the key and its idempotency claim and before the balance:
-- 'rate_limited', 'daily_cap_reached' or 'free_deliveries_exhausted', with `retry_after` in seconds. A refused
-- request takes nothing. p_client_hash is the HMAC of the client's address (null: unknown); p_now the service's
-- clock (null: the database's), which decides the minute and the UTC day of the counters, and by which the key
-- is checked (a rotated key expires by it). The product page is stored without its query string and fragment
-- (tryon.page_url, 0500).
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

-- Step 7: charge or refund by outcome. Idempotent: a try-on that is already settled
-- (or was swept) moves nothing and reports how it ended.
-- A delivered try-on with an idempotency key stores its response: `p_response` (what the caller knew before
-- settling) plus shortId, creditsRemaining and creditsCharged from here. A failed one releases its key, so the
-- caller can retry the same request.
-- The try-on gives back what it held on its key's daily counters. A delivery that kept nothing (the bridal
-- refund) keeps its free-delivery slot; the client's HMAC is then forgotten.
create function tryon.settle_tryon(
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

-- Refunds reservations that were never settled (the process died mid-request), releases their
-- idempotency keys, and forgets idempotency keys past their 24 hours. An expired reservation gives back what it
-- held on its key's counters; counters whose window ended over a minute ago (room for clocks that differ a
-- little) are deleted. p_now is the sweeper's clock (null: the database's), for tests.
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

-- Each file revokes its functions from every API role, whatever a platform grants by default, and grants the service
-- role the ones it calls.
revoke all on function
  tryon.price_of(text),
  tryon.is_delivered(text, text),
  tryon.credits_for_outcome(text, text),
  tryon.origin_allowed(text[], text),
  tryon.check_api_key(bytea, text, timestamptz),
  tryon.authorize_api_key(bytea, text, timestamptz),
  tryon.idempotency_ttl(),
  tryon.begin_tryon(bytea, text, uuid, text, text, text, text, text, bytea, bytea, timestamptz),
  tryon.settle_tryon(uuid, text, text, text, text, jsonb),
  tryon.sweep_reservations(interval, integer, timestamptz)
from public, anon, authenticated, service_role;
grant execute on function
  tryon.authorize_api_key(bytea, text, timestamptz),
  tryon.begin_tryon(bytea, text, uuid, text, text, text, text, text, bytea, bytea, timestamptz),
  tryon.settle_tryon(uuid, text, text, text, text, jsonb),
  tryon.sweep_reservations(interval, integer, timestamptz)
to service_role;

-- Where pg_cron is installed (Supabase: enable it in the dashboard first), sweep every minute.
do $$
begin
  if exists (select 1 from pg_extension where extname = 'pg_cron') then
    execute $cron$select cron.schedule('tryon-sweep-reservations', '* * * * *', 'select tryon.sweep_reservations()')$cron$;
  end if;
end
$$;
