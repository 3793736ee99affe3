-- When a key's role or scope last changed (`toolgate keys update`), so that
-- every instance's watcher finds changes made by other processes even when
-- their notification is lost (and on SQLite, which has none). NULL: never
-- changed. (Numbered 0015 after the issue, to stay clear of migrations
-- being written in parallel.)
ALTER TABLE toolgate_api_keys ADD COLUMN updated_at TEXT;
