-- A result that failed its check is delivered free only within the key's free deliveries (docs/billing.md, "Checked
-- results"): begin_tryon gives a try-on of a checked key the free-delivery slots when some are left, and never refuses
-- a standard try-on for want of one. What that try-on's result may be, once its check has failed, is asked here.

-- Whether a running try-on may be delivered for nothing: its key has no limit on free deliveries, or the try-on holds
-- the slots of every limit it has (begin_tryon takes all of them or none). retry_after: the seconds to the end of the
-- UTC day, when the day's free deliveries come back.
create function tryon.free_delivery_held(p_tryon_id uuid, p_now timestamptz default null)
returns table (held boolean, retry_after integer)
language sql stable
security definer
set search_path = ''
as $$
  select (k.limit_daily_refunded is null or 'refunded' = any (t.usage_held))
         and (k.limit_per_client_daily_refunded is null or 'refunded_client' = any (t.usage_held)),
         greatest(1, ceil(extract(epoch from
           date_trunc('day', coalesce(p_now, now()), 'UTC') + interval '1 day' - coalesce(p_now, now()))))::integer
    from tryon.tryons t
    join tryon.api_keys k on k.id = t.api_key_id
   where t.id = p_tryon_id
$$;

revoke all on function tryon.free_delivery_held(uuid, timestamptz) from public, anon, authenticated, service_role;
grant execute on function tryon.free_delivery_held(uuid, timestamptz) to service_role;
