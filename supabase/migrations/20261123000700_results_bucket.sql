-- The public bucket try-on results go to (TRYON_BUCKET's default). Supabase Storage keeps its buckets in
-- storage.buckets; plain Postgres and PGlite (dev stack, tests) have no storage schema, and there this
-- migration does nothing, so the same migrations apply everywhere.
-- Public: anyone may read an object by its URL, which is what a permanent resultUrl needs. Only the
-- function's secret (or service-role) key writes, and it bypasses row-level security: no policies needed.
do $$
begin
  if to_regclass('storage.buckets') is null then
    return;
  end if;

  insert into storage.buckets (id, name, public)
  values ('tryon-results', 'tryon-results', true)
  on conflict (id) do update set public = true;

  -- Older Storage versions lack the per-bucket limits; where they exist, match supabase/config.toml.
  if exists (
    select 1 from information_schema.columns
     where table_schema = 'storage' and table_name = 'buckets' and column_name = 'allowed_mime_types'
  ) then
    update storage.buckets
       set file_size_limit = 20971520,
           allowed_mime_types = array['image/jpeg', 'image/png', 'image/webp']
     where id = 'tryon-results';
  end if;
end
$$;
