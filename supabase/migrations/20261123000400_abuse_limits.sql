-- Abuse limits: a key that sits in a storefront's page source cannot be drained by a script that copies it.
-- Per key: try-ons per minute, try-ons per minute per client address, credits per day, and refunded ("free")
-- deliveries per day, per key and per client address. The limits live on the key; the counters in
-- tryon.usage_counters. begin_tryon checks and takes them in the same call that reserves the credits (still two
-- database calls per try-on), settle_tryon and the sweeper give back what a try-on held, and the sweeper drops
-- counters whose window has ended. A client address arrives only as an HMAC made by the service; it is never stored.
-- The limit columns are on tryon.api_keys and the counters' table is tryon.usage_counters (0100); the checks are
-- in tryon.begin_tryon, the give-back in tryon.settle_tryon and tryon.sweep_reservations (0200).

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

revoke all on function
  tryon.browser_key_default_limits(),
  tryon.limits_of(tryon.api_keys),
  tryon.unknown_client(),
  tryon.set_key_limits(uuid, jsonb, boolean),
  tryon.release_usage(tryon.tryons, integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function tryon.set_key_limits(uuid, jsonb, boolean) to service_role;
