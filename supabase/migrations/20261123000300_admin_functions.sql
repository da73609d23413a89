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
  insert into tryon.api_keys (account_id, key_hash, display_prefix, mode, active, allowed_origins, label, deactivated_at)
  values (v_account, sha256(convert_to(v_key, 'UTF8')), left(v_key, 13), p_mode, coalesce(p_active, true),
          v_origins, p_label, case when coalesce(p_active, true) then null else now() end)
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

revoke all on all tables in schema tryon from public, anon, authenticated, service_role;
revoke all on all functions in schema tryon from public, anon, authenticated, service_role;
grant execute on function
  tryon.authorize_api_key(bytea, text),
  tryon.begin_tryon(bytea, text, uuid, text, text, text, text),
  tryon.settle_tryon(uuid, text, text, text, text),
  tryon.sweep_reservations(interval, integer),
  tryon.create_api_key(bigint, text, text[], boolean, text, uuid),
  tryon.add_credits(uuid, bigint),
  tryon.deactivate_api_key(uuid),
  tryon.credit_balance(uuid)
to service_role;

-- Where pg_cron is installed (Supabase: enable it in the dashboard first), sweep every minute.
do $$
begin
  if exists (select 1 from pg_extension where extname = 'pg_cron') then
    execute $cron$select cron.schedule('tryon-sweep-reservations', '* * * * *', 'select tryon.sweep_reservations()')$cron$;
  end if;
end
$$;
