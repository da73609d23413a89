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
alter table tryon.idempotency_keys enable row level security;
revoke all on tryon.idempotency_keys from public, anon, authenticated, service_role;

-- How long a completed response is replayed.
create function tryon.idempotency_ttl()
returns interval
language sql immutable
set search_path = ''
as $$ select interval '24 hours' $$;

drop function tryon.begin_tryon(bytea, text, uuid, text, text, text, text);

-- Step 3 of a request, as before, plus the idempotency claim. Verdicts beyond the key checks:
-- 'replay' (the stored response of a completed request is returned in `replay`),
-- 'idempotency_in_progress' (the first request with this key is still running),
-- 'idempotency_mismatch' (the key was used with a different request).
create function tryon.begin_tryon(
  p_key_hash bytea,
  p_origin text,
  p_tryon_id uuid,
  p_product_kind text,
  p_clothing_type text default null,
  p_parent_url text default null,
  p_locale text default null,
  p_idempotency_key text default null,
  p_request_hash bytea default null
)
returns table (verdict text, key_mode text, balance bigint, credits_reserved integer, replay jsonb)
language plpgsql volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  k record;
  v_price integer := tryon.price_of(p_product_kind);
  v_balance bigint;
  v_claim tryon.idempotency_keys;
begin
  if v_price is null then
    raise exception 'unknown product kind %', p_product_kind using errcode = '22023';
  end if;
  if (p_idempotency_key is null) <> (p_request_hash is null) then
    raise exception 'an idempotency key needs its request hash' using errcode = '22023';
  end if;

  select * into k from tryon.check_api_key(p_key_hash, p_origin);
  if k.verdict <> 'ok' then
    return query select k.verdict, k.key_mode, null::bigint, 0, null::jsonb;
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
        case when v_claim.request_hash = p_request_hash then v_claim.response end;
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
      select 'insufficient_credits', k.key_mode, a.balance, 0, null::jsonb
        from tryon.accounts a where a.id = k.account_id;
    return;
  end if;

  insert into tryon.tryons (id, account_id, api_key_id, product_kind, credits_reserved,
                            clothing_type, parent_url, locale, origin)
  values (p_tryon_id, k.account_id, k.api_key_id, p_product_kind, v_price,
          p_clothing_type, p_parent_url, p_locale, p_origin);
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

  return query select 'ok', k.key_mode, v_balance, v_price, null::jsonb;
end
$$;

drop function tryon.settle_tryon(uuid, text, text, text, text);

-- Step 7, as before. A delivered try-on with an idempotency key stores its response: `p_response`
-- (what the caller knew before settling) plus shortId, creditsRemaining and creditsCharged from here.
-- A failed one releases its key, so the caller can retry the same request.
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

-- Refunds reservations that were never settled (the process died mid-request), releases their
-- idempotency keys, and forgets idempotency keys past their 24 hours.
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
    delete from tryon.idempotency_keys i where i.tryon_id = r.id;
    v_count := v_count + 1;
  end loop;
  delete from tryon.idempotency_keys i where i.created_at < now() - tryon.idempotency_ttl();
  return v_count;
end
$$;

revoke all on all functions in schema tryon from public, anon, authenticated, service_role;
grant execute on function
  tryon.authorize_api_key(bytea, text),
  tryon.begin_tryon(bytea, text, uuid, text, text, text, text, text, bytea),
  tryon.settle_tryon(uuid, text, text, text, text, jsonb),
  tryon.sweep_reservations(interval, integer),
  tryon.create_api_key(bigint, text, text[], boolean, text, uuid),
  tryon.add_credits(uuid, bigint),
  tryon.deactivate_api_key(uuid),
  tryon.credit_balance(uuid)
to service_role;
