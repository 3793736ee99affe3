-- Whether the submit that created an order answered it. A submit whose
-- COMMIT succeeded but whose answer was lost (the database or the process
-- stopped before the read-back) leaves it FALSE, so that the caller's retry
-- answers that order as its own success instead of "already exists".
-- Orders written before this column existed were answered.
ALTER TABLE travel_orders ADD COLUMN answered BOOLEAN NOT NULL DEFAULT TRUE;
