-- Local demo data only (`supabase db reset`): one test key with 100 credits.
-- The plaintext key is shown in the output of this statement and nowhere else.
select api_key, key_id, account_id, credits
  from tryon.create_api_key(p_credits => 100, p_mode => 'test', p_label => 'local demo');
