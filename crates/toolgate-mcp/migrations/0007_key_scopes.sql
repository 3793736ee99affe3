-- A key may carry a scope that narrows what its caller sees on every
-- surface: a named toolset (e.g. `read_only`) and a comma-separated list of
-- domains. NULL means no narrowing. (Numbered 0007 to leave room for other
-- key-store migrations being written in parallel.)
ALTER TABLE toolgate_api_keys ADD COLUMN toolset TEXT;
ALTER TABLE toolgate_api_keys ADD COLUMN domains TEXT;
