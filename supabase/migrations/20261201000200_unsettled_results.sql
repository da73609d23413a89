-- Nothing stored outlives a try-on that did not end delivered and settled. The result is written to the bucket before
-- the settlement that records its path, so a try-on that fails after the write (the database lost, the store's time
-- limit passed while the upload went on, a crash) ends with an object no row points to. Where the object can be is
-- known from the try-on alone: <yyyy>/<mm>/<id>.<jpg|png|webp> (shared/storage/result-store.ts), dated by the
-- service's clock when it stores, which is the database's at begin give or take the run (minutes) and clock skew.
-- Such a try-on queues those paths for removal in the transaction that ends it, and so does its deletion; whoever
-- holds the store removes them (shared/storage/deletions.ts: the dev stack every minute, `tryons purge`).

-- Where the result of a try-on begun at p_created_at can have been stored: the month folders of a day either side.
create function tryon.possible_result_paths(p_tryon_id uuid, p_created_at timestamptz)
returns text[]
language sql stable
set search_path = ''
as $$
  select array_agg(distinct to_char(d.moment at time zone 'UTC', 'YYYY/MM') || '/' || p_tryon_id || '.' || e.ext)
    from unnest(array[p_created_at - interval '1 day', p_created_at, p_created_at + interval '1 day']) as d (moment),
         unnest(array['jpg', 'png', 'webp']) as e (ext)
$$;

-- Whether a try-on that ended this way may have written its result: swept (its process died, or its settlement
-- was lost, at any step), or failed at or after the write (the store, the database, or a bug). An error answered
-- before the write (a bad image, the engine's refusal or failure) never wrote anything.
create function tryon.may_have_stored(p_status text, p_outcome text)
returns boolean
language sql immutable
set search_path = ''
as $$
  select p_status = 'expired'
      or (p_status = 'failed' and p_outcome in ('storage_failed', 'database_unavailable', 'internal_error'))
$$;

-- Queues what a try-on's result may be stored under, unless it is queued already.
create function tryon.queue_possible_results(p_tryon tryon.tryons)
returns void
language sql volatile
set search_path = ''
as $$
  insert into tryon.result_deletions (result_path, tryon_id)
  select p.path, p_tryon.id from unnest(tryon.possible_result_paths(p_tryon.id, p_tryon.created_at)) as p (path)
  on conflict do nothing
$$;

-- A try-on that ends without a delivery, by settle_tryon or sweep_reservations, queues whatever it may have stored.
create function tryon.queue_undelivered_results()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tryon.may_have_stored(new.status, new.outcome) then
    perform tryon.queue_possible_results(new);
  end if;
  return null;
end
$$;

create trigger tryons_queue_undelivered_results
  after update of status on tryon.tryons
  for each row
  when (old.status = 'reserved' and new.status in ('failed', 'expired'))
  execute function tryon.queue_undelivered_results();

-- Deleting a try-on (0500) removes whatever was stored for it, in every outcome: its delivered result, or what a
-- try-on that ended without one may have left.
create or replace function tryon.erase_tryon(p_tryon tryon.tryons)
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
  elsif tryon.may_have_stored(p_tryon.status, p_tryon.outcome) then
    perform tryon.queue_possible_results(p_tryon);
  end if;
  delete from tryon.idempotency_keys i where i.tryon_id = p_tryon.id;
end
$$;

-- Try-ons that ended this way before this migration: what they may have left is queued once now.
insert into tryon.result_deletions (result_path, tryon_id)
select p.path, t.id
  from tryon.tryons t, unnest(tryon.possible_result_paths(t.id, t.created_at)) as p (path)
 where tryon.may_have_stored(t.status, t.outcome)
on conflict do nothing;

revoke all on function
  tryon.possible_result_paths(uuid, timestamptz),
  tryon.may_have_stored(text, text),
  tryon.queue_possible_results(tryon.tryons),
  tryon.queue_undelivered_results(),
  tryon.erase_tryon(tryon.tryons)
from public, anon, authenticated, service_role;
