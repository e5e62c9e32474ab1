-- What a roll does with a row field the sink's table lacks: reject the row (unknown_field, as
-- every sink did before) or add the field to the table as an optional column.
ALTER TABLE sinks
  ADD COLUMN unknown_fields text NOT NULL DEFAULT 'reject' CHECK (unknown_fields IN ('reject', 'add_columns'));
