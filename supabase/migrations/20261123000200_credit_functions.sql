-- The money: pricing, the billing rules of spec §3, and the four calls the API makes
-- (authorize, begin, settle, sweep). Each call is one statement, so each runs in one
-- transaction and holds an account's row lock only for that statement.

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

-- Credits kept when a try-on settles (spec §3); the rest of the reservation is refunded.
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

-- What a key may do for a request from p_origin, in the order the API reports refusals.
create function tryon.check_api_key(
  p_key_hash bytea,
  p_origin text,
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
           when not k.active then 'key_inactive'
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
create function tryon.authorize_api_key(p_key_hash bytea, p_origin text)
returns table (verdict text, key_mode text)
language sql stable
security definer
set search_path = ''
as $$
  select c.verdict, c.key_mode from tryon.check_api_key(p_key_hash, p_origin) c
$$;

-- Step 3 of a request: authenticate, check the origin and the balance, reserve the
-- price and record the try-on, all in one call.
create function tryon.begin_tryon(
  p_key_hash bytea,
  p_origin text,
  p_tryon_id uuid,
  p_product_kind text,
  p_clothing_type text default null,
  p_parent_url text default null,
  p_locale text default null
)
returns table (verdict text, key_mode text, balance bigint, credits_reserved integer)
language plpgsql volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  k record;
  v_price integer := tryon.price_of(p_product_kind);
  v_balance bigint;
begin
  if v_price is null then
    raise exception 'unknown product kind %', p_product_kind using errcode = '22023';
  end if;

  select * into k from tryon.check_api_key(p_key_hash, p_origin);
  if k.verdict <> 'ok' then
    return query select k.verdict, k.key_mode, null::bigint, 0;
    return;
  end if;

  -- The WHERE clause is re-checked against the latest row version, so concurrent
  -- requests can never take the balance below zero.
  update tryon.accounts a
     set balance = a.balance - v_price, reserved = a.reserved + v_price
   where a.id = k.account_id and a.balance >= v_price
  returning a.balance into v_balance;
  if not found then
    return query
      select 'insufficient_credits', k.key_mode, a.balance, 0
        from tryon.accounts a where a.id = k.account_id;
    return;
  end if;

  insert into tryon.tryons (id, account_id, api_key_id, product_kind, credits_reserved,
                            clothing_type, parent_url, locale, origin)
  values (p_tryon_id, k.account_id, k.api_key_id, p_product_kind, v_price,
          p_clothing_type, p_parent_url, p_locale, p_origin);
  insert into tryon.ledger (account_id, tryon_id, kind, delta, reserved_delta, reason)
  values (k.account_id, p_tryon_id, 'reservation', -v_price, v_price, p_product_kind);

  return query select 'ok', k.key_mode, v_balance, v_price;
end
$$;

-- Step 7: charge or refund by outcome. Idempotent: a try-on that is already settled
-- (or was swept) moves nothing and reports how it ended.
create function tryon.settle_tryon(
  p_tryon_id uuid,
  p_outcome text,
  p_short_id text default null,
  p_result_path text default null,
  p_engine text default null
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

  update tryon.tryons
     set status = case when v_delivered then 'succeeded' else 'failed' end,
         credits_charged = v_charge,
         outcome = p_outcome,
         -- spec §4: shortId is null when the bridal train verdict fails
         short_id = case when v_delivered and p_outcome <> 'train_score_low' then p_short_id end,
         result_path = case when v_delivered then p_result_path end,
         engine = p_engine,
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

  return query select true, t.status, t.credits_charged, v_balance, t.short_id;
end
$$;

-- Refunds reservations that were never settled (the process died mid-request).
-- Rows are locked in account order so that concurrent sweeps cannot deadlock.
create function tryon.sweep_reservations(
  p_older_than interval default interval '10 minutes',
  p_limit integer default 500
)
returns integer
language plpgsql volatile
security definer
set search_path = ''
as $$
declare
  r record;
  v_count integer := 0;
begin
  if p_older_than < interval '0' then
    raise exception 'the age of a sweepable reservation cannot be negative' using errcode = '22023';
  end if;
  for r in
    select t.id, t.account_id, t.credits_reserved
      from tryon.tryons t
     where t.status = 'reserved' and t.created_at < now() - p_older_than
     order by t.account_id, t.created_at
     limit p_limit
       for update skip locked
  loop
    update tryon.tryons
       set status = 'expired', outcome = 'expired', credits_charged = 0, settled_at = now()
     where id = r.id;
    update tryon.accounts
       set balance = balance + r.credits_reserved, reserved = reserved - r.credits_reserved
     where id = r.account_id;
    insert into tryon.ledger (account_id, tryon_id, kind, delta, reserved_delta, reason)
    values (r.account_id, r.id, 'refund', r.credits_reserved, -r.credits_reserved, 'expired');
    v_count := v_count + 1;
  end loop;
  return v_count;
end
$$;
