-- The public bucket the storefront widget is served from (`npm run deploy:widget` uploads
-- tryon-widget/<version>/tryon-widget.js). Like the results bucket, it only exists where Supabase Storage does:
-- on plain Postgres and PGlite (dev stack, tests) there is no storage schema and this migration does nothing.
-- Public: any shop page loads the script by its URL. Only a secret (or service-role) key writes.
do $$
begin
  if to_regclass('storage.buckets') is null then
    return;
  end if;

  insert into storage.buckets (id, name, public)
  values ('tryon-assets', 'tryon-assets', true)
  on conflict (id) do update set public = true;

  -- Older Storage versions lack the per-bucket limits; where they exist, match supabase/config.toml.
  if exists (
    select 1 from information_schema.columns
     where table_schema = 'storage' and table_name = 'buckets' and column_name = 'allowed_mime_types'
  ) then
    update storage.buckets
       set file_size_limit = 1048576,
           allowed_mime_types = array['application/javascript']
     where id = 'tryon-assets';
  end if;
end
$$;
