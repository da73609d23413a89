-- Running a shop's account: deleting a shopper's image (GDPR Art. 17), usage by product page and share links (key
-- rotation is with the keys, 0300). Deleting keeps the billing record and the ledger; the stored image is removed
-- through the Storage API by the admin CLI (cli/tryons.ts), never by SQL: deleting a row of storage.objects
-- orphans the file.

-- A product page is kept without its query string, fragment and credentials: they can carry a shopper's data
-- (a session, an e-mail in a campaign link) and say nothing about the product.
create function tryon.page_url(p_url text)
returns text
language sql immutable
set search_path = ''
as $$
  select nullif(regexp_replace(regexp_replace(p_url, '[?#].*$', ''), '^([a-z][a-z0-9+.-]*://)[^/@]*@', '\1', 'i'), '')
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

revoke all on function
  tryon.page_url(text),
  tryon.shared_result(text),
  tryon.erase_tryon(tryon.tryons),
  tryon.delete_tryon(uuid),
  tryon.delete_account_tryons(uuid, timestamptz),
  tryon.pending_result_deletions(integer),
  tryon.confirm_result_deletion(text)
from public, anon, authenticated, service_role;
grant execute on function
  tryon.shared_result(text),
  tryon.delete_tryon(uuid),
  tryon.delete_account_tryons(uuid, timestamptz),
  tryon.pending_result_deletions(integer),
  tryon.confirm_result_deletion(text)
to service_role;
