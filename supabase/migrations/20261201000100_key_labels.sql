-- A key's label is a name people read in `keys list` and `keys show`, not a place to keep data: at most 200
-- characters, for keys made by tryon.create_api_key, by a rotation (which copies the label) or by hand. The admin CLI
-- refuses a longer one first, with its own message. A label made before this limit is cut to it.
update tryon.api_keys set label = left(label, 200) where char_length(label) > 200;

alter table tryon.api_keys add constraint api_keys_label_length check (char_length(label) <= 200);
