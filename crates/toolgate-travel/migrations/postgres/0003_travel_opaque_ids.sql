-- Order, approval and booking ids are opaque (time in milliseconds and
-- random bits, supplied by the insert) instead of a global counter that told
-- any traveller how many orders and bookings everyone made. Existing rows
-- keep their ids; an insert without an id now fails instead of counting.
ALTER TABLE travel_orders ALTER COLUMN id DROP IDENTITY;
ALTER TABLE travel_approvals ALTER COLUMN id DROP IDENTITY;
ALTER TABLE travel_bookings ALTER COLUMN id DROP IDENTITY;
