//! Integration tests of openapi-import, one binary: the fitness API's own document round trip,
//! third-party documents kept as fixtures, and the cases that must be skipped or refused.

mod bodies;
mod budget;
mod cases;
mod common;
mod faithful;
mod files;
mod form;
mod hostile;
mod roundtrip;
mod swagger2;
mod targets;
mod third_party;
mod unions;
mod whole_bodies;
mod writes;
