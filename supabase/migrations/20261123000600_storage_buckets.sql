-- The public buckets: tryon-results, which try-on results go to (TRYON_BUCKET's default), and tryon-assets, which
-- the storefront widget is served from (`npm run deploy:widget` uploads tryon-widget/<version>/tryon-widget.js).
-- Supabase Storage keeps its buckets in storage.buckets; plain Postgres and PGlite (dev stack, tests) have no
-- storage schema, and there this migration does nothing, so the same migrations apply everywhere.
-- Public: anyone may read an object by its URL, which is what a permanent resultUrl needs, and any shop page loads
-- the widget by its URL. Only the function's secret (or service-role) key writes, and it bypasses row-level
-- security: no policies needed.
do $$
begin
  if to_regclass('storage.buckets') is null then
    return;
  end if;

  insert into storage.buckets (id, name, public)
  values ('tryon-results', 'tryon-results', true), ('tryon-assets', 'tryon-assets', true)
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
    update storage.buckets
       set file_size_limit = 1048576,
           allowed_mime_types = array['application/javascript']
     where id = 'tryon-assets';
  end if;
end
$$;
