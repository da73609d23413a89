-- Key management and top-ups, usable from psql or the Supabase SQL editor and
-- wrapped by `npm run admin`. The plaintext key is returned once and never stored.

-- Key format (GitHub's token scheme): vto_<mode>_ + 30 random base62 chars + a
-- 6-char base62 CRC32 of everything before it. shared/auth/api-key.ts checks the same.
create function tryon.crc32(p_data bytea)
returns bigint
language plpgsql immutable strict
set search_path = ''
as $$
declare
  crc bigint := 4294967295;
begin
  for i in 0 .. length(p_data) - 1 loop
    crc := crc # get_byte(p_data, i);
    for j in 1 .. 8 loop
      if crc & 1 = 1 then
        crc := (crc >> 1) # 3988292384; -- 0xEDB88320, the reflected IEEE polynomial
      else
        crc := crc >> 1;
      end if;
    end loop;
  end loop;
  return crc # 4294967295;
end
$$;

create function tryon.base62(p_value bigint, p_width integer)
returns text
language plpgsql immutable strict
set search_path = ''
as $$
declare
  alphabet constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  v bigint := p_value;
  out text := '';
begin
  while v > 0 loop
    out := substr(alphabet, (v % 62)::integer + 1, 1) || out;
    v := v / 62;
  end loop;
  return lpad(out, p_width, '0');
end
$$;

create function tryon.random_base62(p_length integer)
returns text
language plpgsql volatile strict
set search_path = ''
as $$
declare
  alphabet constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  out text := '';
  bytes bytea;
  b integer;
begin
  while length(out) < p_length loop
    -- gen_random_uuid draws from the server's strong random source.
    bytes := uuid_send(gen_random_uuid());
    for i in 0 .. 15 loop
      continue when i in (6, 8); -- these bytes carry the UUID version and variant bits
      b := get_byte(bytes, i);
      continue when b >= 248;    -- 248 = 4 × 62: rejecting the rest keeps every character equally likely
      out := out || substr(alphabet, b % 62 + 1, 1);
      exit when length(out) = p_length;
    end loop;
  end loop;
  return out;
end
$$;

-- Allowed origins are exact https://host[:port] or https://*.host, stored in browser form.
create function tryon.normalize_allowed_origin(p_origin text)
returns text
language plpgsql immutable strict
set search_path = ''
as $$
declare
  label constant text := '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
  o text := regexp_replace(lower(btrim(p_origin)), '/$', '');
begin
  o := regexp_replace(o, ':443$', '');
  if o ~ ('^https://' || label || '(\.' || label || ')*(:[0-9]{1,5})?$')
     or o ~ ('^https://\*\.' || label || '(\.' || label || ')+$') then
    return o;
  end if;
  raise exception 'allowed origin % must look like https://shop.example, https://shop.example:8443 or https://*.shop.example', p_origin
    using errcode = '22023';
end
$$;

create function tryon.top_up(p_account_id uuid, p_amount bigint, p_reason text)
returns bigint
language plpgsql volatile
set search_path = ''
as $$
declare
  v_balance bigint;
begin
  if p_amount is null or p_amount <= 0 then
    raise exception 'a top-up must add a positive number of credits' using errcode = '22023';
  end if;
  update tryon.accounts set balance = balance + p_amount where id = p_account_id
  returning balance into v_balance;
  if not found then
    raise exception 'account % does not exist', p_account_id using errcode = 'P0002';
  end if;
  insert into tryon.ledger (account_id, kind, delta, reserved_delta, reason)
  values (p_account_id, 'topup', p_amount, 0, p_reason);
  return v_balance;
end
$$;

-- A new key on a new account, or on p_account_id; p_credits are topped up first. A key restricted to origins
-- (a browser key, public in a page's source) starts with tryon.browser_key_default_limits() (0400).
create function tryon.create_api_key(
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

create function tryon.add_credits(p_key_id uuid, p_amount bigint)
returns bigint
language plpgsql volatile
security definer
set search_path = ''
as $$
declare
  v_account uuid;
begin
  select account_id into v_account from tryon.api_keys where id = p_key_id;
  if not found then
    raise exception 'api key % does not exist', p_key_id using errcode = 'P0002';
  end if;
  return tryon.top_up(v_account, p_amount, 'admin_top_up');
end
$$;

create function tryon.deactivate_api_key(p_key_id uuid)
returns void
language plpgsql volatile
security definer
set search_path = ''
as $$
begin
  update tryon.api_keys
     set active = false, deactivated_at = coalesce(deactivated_at, now())
   where id = p_key_id;
  if not found then
    raise exception 'api key % does not exist', p_key_id using errcode = 'P0002';
  end if;
end
$$;

create function tryon.credit_balance(p_key_id uuid)
returns bigint
language plpgsql stable
security definer
set search_path = ''
as $$
declare
  v_balance bigint;
begin
  select a.balance into v_balance
    from tryon.api_keys k join tryon.accounts a on a.id = k.account_id
   where k.id = p_key_id;
  if not found then
    raise exception 'api key % does not exist', p_key_id using errcode = 'P0002';
  end if;
  return v_balance;
end
$$;

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

-- `keys show`: the key as key_summary gives it, with its account's credits and its limits.
create function tryon.show_api_key(p_key_id uuid)
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

revoke all on function
  tryon.crc32(bytea),
  tryon.base62(bigint, integer),
  tryon.random_base62(integer),
  tryon.normalize_allowed_origin(text),
  tryon.top_up(uuid, bigint, text),
  tryon.create_api_key(bigint, text, text[], boolean, text, uuid),
  tryon.add_credits(uuid, bigint),
  tryon.deactivate_api_key(uuid),
  tryon.credit_balance(uuid),
  tryon.key_state(tryon.api_keys, timestamptz),
  tryon.key_summary(tryon.api_keys, timestamptz),
  tryon.list_api_keys(uuid, timestamptz),
  tryon.show_api_key(uuid),
  tryon.rotate_api_key(uuid, interval, timestamptz)
from public, anon, authenticated, service_role;
grant execute on function
  tryon.create_api_key(bigint, text, text[], boolean, text, uuid),
  tryon.add_credits(uuid, bigint),
  tryon.deactivate_api_key(uuid),
  tryon.credit_balance(uuid),
  tryon.list_api_keys(uuid, timestamptz),
  tryon.show_api_key(uuid),
  tryon.rotate_api_key(uuid, interval, timestamptz)
to service_role;
