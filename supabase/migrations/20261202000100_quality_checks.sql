-- Every result is checked before it is billed (docs/billing.md#checked-results). A result that fails its check is
-- still delivered, for nothing: the settle outcome quality_failed, which keeps 0 credits, refunds the whole
-- reservation with a ledger row, leaves shortId null and, like the wedding-dress train refund, takes one of the key's
-- free deliveries of the day when one is left. Each key has a check level; each try-on keeps what its check found.
-- tryon.credits_for_outcome needs no change: an outcome it does not name keeps nothing. Its table, with this row:
--
--   product kind    outcome (settle_tryon's p_outcome)       reserved   kept   refunded
--   either          quality_failed                           1 or 2     0      all        (delivered all the same)

-- How a key's results are checked: off (not at all), measured (the measured checks alone), judge (those and a seeing
-- judge). Null is the service's default: judge for live keys where a judge is configured, measured otherwise.
alter table tryon.api_keys
  add column quality_check text check (quality_check in ('off', 'measured', 'judge'));

-- What the check of a try-on's result found, as the answer's `quality` object says it: null when nothing was recorded
-- (a try-on settled before this migration, or without a check). Not the shopper's: a deletion keeps it.
alter table tryon.tryons
  add column quality_checked boolean,
  add column quality_passed boolean,
  add column quality_score real check (quality_score between 0 and 1),
  add column quality_issues text[],
  add constraint tryons_quality_passed_checked check (quality_passed is null or quality_checked),
  add constraint tryons_quality_failed_recorded check (outcome is distinct from 'quality_failed' or not quality_passed);

-- quality_failed is delivered, for either kind of try-on.
create or replace function tryon.is_delivered(p_product_kind text, p_outcome text)
returns boolean
language sql immutable
set search_path = ''
as $$
  select case
    when p_outcome = 'generated' then
      case when p_product_kind = 'standard' then true end
    when p_outcome in ('train_rendered', 'score_unavailable', 'train_score_low', 'train_pretreatment_unavailable') then
      case when p_product_kind = 'wedding-dress' then true end
    when p_outcome = 'quality_failed' then true
    when p_outcome ~ '^[a-z][a-z0-9_]*$' then false
  end
$$;

-- A quality record as settle_tryon takes it, the answer's `quality` object:
-- {"checked": true, "passed": false, "score": 0.31, "issues": ["colour_changed"]}. checked is required; passed is
-- true or false when checked and absent or null when not; score is null or within 0..1; issues are issue codes.
create function tryon.check_quality_record(p_quality jsonb)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if p_quality is null then
    return;
  end if;
  if jsonb_typeof(p_quality) <> 'object' or jsonb_typeof(p_quality -> 'checked') is distinct from 'boolean'
     or (coalesce(jsonb_typeof(p_quality -> 'passed'), 'null') = 'boolean') is distinct from (p_quality -> 'checked' = 'true')
     or coalesce(jsonb_typeof(p_quality -> 'score'), 'null') not in ('number', 'null')
     or coalesce(jsonb_typeof(p_quality -> 'issues'), 'array') <> 'array'
     or exists (select 1 from jsonb_object_keys(p_quality) f where f not in ('checked', 'passed', 'score', 'issues')) then
    raise exception 'a quality record is {"checked": true|false, "passed": true|false|null, "score": number|null, "issues": [codes]}'
      using errcode = '22023';
  end if;
  if (p_quality ->> 'score')::numeric not between 0 and 1 then
    raise exception 'a quality score is within 0..1' using errcode = '22023';
  end if;
  if exists (select 1 from jsonb_array_elements(coalesce(p_quality -> 'issues', '[]')) i
              where jsonb_typeof(i) <> 'string' or (i #>> '{}') !~ '^[a-z][a-z0-9_]{0,63}$')
     or jsonb_array_length(coalesce(p_quality -> 'issues', '[]')) > 32 then
    raise exception 'quality issues are at most 32 codes such as colour_changed' using errcode = '22023';
  end if;
end
$$;

-- begin_tryon returns the key's check level (quality_check), and a standard try-on of a key whose results are
-- checked takes a free-delivery slot when one is left, as a wedding dress does; unlike a wedding dress it is not
-- refused without one. A new column in the result: dropped and made again.
drop function tryon.begin_tryon(bytea, text, uuid, text, text, text, text, text, bytea, bytea, timestamptz);
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
returns table (
  verdict text, key_mode text, balance bigint, credits_reserved integer, replay jsonb, retry_after integer, quality_check text
)
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
  v_may_be_free boolean;
  v_slot boolean := true;
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
    return query select k.verdict, k.key_mode, null::bigint, 0, null::jsonb, null::integer, null::text;
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
        null::integer, null::text;
      return;
    end if;
  end if;

  select * into v_key from tryon.api_keys a where a.id = k.api_key_id;
  -- A try-on that may be delivered for nothing holds a free-delivery slot: a wedding dress (the train refund), and
  -- any try-on of a key whose results are checked (a failed check is delivered free, tryon.is_delivered). A wedding
  -- dress without a slot is refused; a standard try-on takes one when one is left and is never refused for it (its
  -- refusal is null here): past the day's free deliveries, a result that fails its check is still free, uncounted.
  -- A key without a level of its own (null) is checked at the default level (docs/billing.md, "Checked results").
  v_may_be_free := p_product_kind = 'wedding-dress' or v_key.quality_check is distinct from 'off';
  if v_key.limit_daily_credits is not null then
    c_metric := c_metric || 'credits'::text; c_client := c_client || ''::bytea;
    c_start := c_start || v_day; c_end := c_end || (v_day + interval '1 day');
    c_limit := c_limit || v_key.limit_daily_credits::bigint; c_amount := c_amount || v_price;
    c_refusal := c_refusal || 'daily_cap_reached'::text;
  end if;
  if v_may_be_free and v_key.limit_daily_refunded is not null then
    c_metric := c_metric || 'refunded'::text; c_client := c_client || ''::bytea;
    c_start := c_start || v_day; c_end := c_end || (v_day + interval '1 day');
    c_limit := c_limit || v_key.limit_daily_refunded::bigint; c_amount := c_amount || 1;
    c_refusal := array_append(c_refusal, case when p_product_kind = 'wedding-dress' then 'free_deliveries_exhausted' end);
  end if;
  if v_may_be_free and v_key.limit_per_client_daily_refunded is not null then
    c_metric := c_metric || 'refunded'::text; c_client := c_client || v_client;
    c_start := c_start || v_day; c_end := c_end || (v_day + interval '1 day');
    c_limit := c_limit || v_key.limit_per_client_daily_refunded::bigint; c_amount := c_amount || 1;
    c_refusal := array_append(c_refusal, case when p_product_kind = 'wedding-dress' then 'free_deliveries_exhausted' end);
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
     where u.used + u.pending + c.amount > c.lim and c.refusal is not null
     order by c.n
     limit 1;
    if v_refusal is not null then
      return query select v_refusal, k.key_mode, null::bigint, 0, null::jsonb, v_retry, null::text;
      return;
    end if;
    -- The free-delivery slots a standard try-on would take: all of them, or none when one is full.
    select not exists (
      select 1
        from unnest(c_metric, c_client, c_start, c_limit, c_amount, c_refusal)
               as c (metric, client_hash, window_start, lim, amount, refusal)
        join tryon.usage_counters u
          on u.api_key_id = v_key.id and u.metric = c.metric and u.client_hash = c.client_hash and u.window_start = c.window_start
       where c.refusal is null and u.used + u.pending + c.amount > c.lim)
      into v_slot;
  end if;

  -- The WHERE clause is re-checked against the latest row version, so concurrent
  -- requests can never take the balance below zero.
  update tryon.accounts a
     set balance = a.balance - v_price, reserved = a.reserved + v_price
   where a.id = k.account_id and a.balance >= v_price
  returning a.balance into v_balance;
  if not found then
    return query
      select 'insufficient_credits', k.key_mode, a.balance, 0, null::jsonb, null::integer, null::text
        from tryon.accounts a where a.id = k.account_id;
    return;
  end if;

  if cardinality(c_metric) > 0 then
    -- A try-on counts at once against a rate; against a daily cap it is pending until it settles.
    update tryon.usage_counters u
       set used = u.used + case when c.metric = 'tryons' then c.amount else 0 end,
           pending = u.pending + case when c.metric = 'tryons' then 0 else c.amount end
      from unnest(c_metric, c_client, c_start, c_amount, c_refusal) as c (metric, client_hash, window_start, amount, refusal)
     where u.api_key_id = v_key.id and u.metric = c.metric and u.client_hash = c.client_hash and u.window_start = c.window_start
       and (c.refusal is not null or v_slot);
    v_held := array(
      select case when c.metric = 'credits' then 'credits' when c.client_hash = ''::bytea then 'refunded' else 'refunded_client' end
        from unnest(c_metric, c_client, c_refusal) as c (metric, client_hash, refusal)
       where c.metric <> 'tryons' and (c.refusal is not null or v_slot));
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

  return query select 'ok', k.key_mode, v_balance, v_price, null::jsonb, null::integer, v_key.quality_check;
end
$$;


-- settle_tryon takes the quality record (p_quality, tryon.check_quality_record; without one, quality_failed records
-- {"checked": true, "passed": false}) and settles quality_failed as a delivery without a short id. A result that
-- failed its check cannot be charged: a record with passed false settles only as quality_failed or an error.
-- A new parameter: dropped and made again.
drop function tryon.settle_tryon(uuid, text, text, text, text, jsonb);
create function tryon.settle_tryon(
  p_tryon_id uuid,
  p_outcome text,
  p_short_id text default null,
  p_result_path text default null,
  p_engine text default null,
  p_response jsonb default null,
  p_quality jsonb default null
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
  v_quality jsonb := p_quality;
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
  if v_delivered and p_outcome not in ('train_score_low', 'quality_failed') and p_short_id is null then
    raise exception 'a delivered try-on needs a short id' using errcode = '22023';
  end if;

  if p_outcome = 'quality_failed' then
    v_quality := coalesce(v_quality, '{"checked": true, "passed": false}');
  end if;
  perform tryon.check_quality_record(v_quality);
  if v_delivered and (v_quality -> 'passed') = 'false' and p_outcome <> 'quality_failed' then
    raise exception 'a delivered result that failed its check settles as quality_failed' using errcode = '22023';
  end if;
  if p_outcome = 'quality_failed' and (v_quality -> 'passed') is distinct from 'false' then
    raise exception 'quality_failed needs a quality record with checked true and passed false' using errcode = '22023';
  end if;

  v_charge := tryon.credits_for_outcome(t.product_kind, p_outcome);
  v_refund := t.credits_reserved - v_charge;

  -- Counters before the account, as begin_tryon takes them.
  perform tryon.release_usage(t, v_charge, v_delivered and v_charge = 0);

  update tryon.tryons
     set status = case when v_delivered then 'succeeded' else 'failed' end,
         credits_charged = v_charge,
         outcome = p_outcome,
         -- shortId is null when the train verdict fails, or the result failed its check (docs/billing.md)
         short_id = case when v_delivered and p_outcome not in ('train_score_low', 'quality_failed') then p_short_id end,
         result_path = case when v_delivered then p_result_path end,
         engine = p_engine,
         client_hash = null,
         quality_checked = (v_quality ->> 'checked')::boolean,
         quality_passed = (v_quality ->> 'passed')::boolean,
         quality_score = (v_quality ->> 'score')::real,
         quality_issues = case when v_quality is not null
                          then array(select jsonb_array_elements_text(coalesce(v_quality -> 'issues', '[]'))) end,
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


-- Each try-on's check at a glance, for dashboards and `usage`: the view gains two columns at its end.
create or replace view tryon.usage_daily as
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
       count(*) filter (where t.outcome = 'train_pretreatment_unavailable')::bigint as train_pretreatment_unavailable,
       count(*) filter (where t.quality_passed = false)::bigint as quality_failed,
       count(*) filter (where t.quality_checked = false)::bigint as quality_unchecked
  from tryon.tryons t
  left join lateral (
    select sum(-l.reserved_delta) filter (where l.kind = 'charge') as charged,
           sum(l.delta) filter (where l.kind = 'refund') as refunded
      from tryon.ledger l
     where l.tryon_id = t.id
  ) m on true
 group by t.account_id, 2, t.api_key_id, 4, t.origin, 6;

-- The key's check level, in `keys list` and `keys show`.
create or replace function tryon.key_summary(p_key tryon.api_keys, p_now timestamptz)
returns jsonb
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
    'keyId', p_key.id, 'accountId', p_key.account_id, 'displayPrefix', p_key.display_prefix, 'label', p_key.label,
    'mode', p_key.mode, 'allowedOrigins', to_jsonb(p_key.allowed_origins),
    'state', tryon.key_state(p_key, p_now),
    'active', tryon.key_state(p_key, p_now) in ('active', 'expiring'),
    'qualityCheck', p_key.quality_check,
    'expiresAt', p_key.expires_at, 'replacedBy', p_key.replaced_by,
    'lastUsedAt', (select max(t.created_at) from tryon.tryons t where t.api_key_id = p_key.id),
    'createdAt', p_key.created_at, 'deactivatedAt', p_key.deactivated_at)
$$;

-- select tryon.set_key_quality('<key id>', 'measured');  Sets how a key's results are checked: 'off', 'measured',
-- 'judge', or null for the service's default. Returns the level set.
create function tryon.set_key_quality(p_key_id uuid, p_level text)
returns text
language plpgsql volatile
security definer
set search_path = ''
as $$
begin
  if p_level is not null and p_level not in ('off', 'measured', 'judge') then
    raise exception 'quality check level % is none of off, measured, judge (or null for the default)', p_level using errcode = '22023';
  end if;
  update tryon.api_keys a set quality_check = p_level where a.id = p_key_id;
  if not found then
    raise exception 'api key % does not exist', p_key_id using errcode = 'P0002';
  end if;
  return p_level;
end
$$;

-- A rotated key keeps its check level: the new key copies it with the limits.
create or replace function tryon.rotate_api_key(p_key_id uuid, p_grace interval default interval '24 hours', p_now timestamptz default null)
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
         limit_per_client_daily_refunded = k.limit_per_client_daily_refunded,
         quality_check = k.quality_check
   where x.id = n.key_id;
  update tryon.api_keys x set expires_at = v_now + p_grace, replaced_by = n.key_id where x.id = k.id;

  return query select n.api_key, n.key_id, k.account_id, k.id, v_now + p_grace;
end
$$;

revoke all on function
  tryon.is_delivered(text, text),
  tryon.check_quality_record(jsonb),
  tryon.begin_tryon(bytea, text, uuid, text, text, text, text, text, bytea, bytea, timestamptz),
  tryon.settle_tryon(uuid, text, text, text, text, jsonb, jsonb),
  tryon.key_summary(tryon.api_keys, timestamptz),
  tryon.set_key_quality(uuid, text),
  tryon.rotate_api_key(uuid, interval, timestamptz)
from public, anon, authenticated, service_role;
grant execute on function
  tryon.begin_tryon(bytea, text, uuid, text, text, text, text, text, bytea, bytea, timestamptz),
  tryon.settle_tryon(uuid, text, text, text, text, jsonb, jsonb),
  tryon.set_key_quality(uuid, text),
  tryon.rotate_api_key(uuid, interval, timestamptz)
to service_role;
revoke all on tryon.usage_daily from public, anon, authenticated, service_role;
