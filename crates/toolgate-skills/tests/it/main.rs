//! The integration tests of `skills`, one binary (each module links once).

mod common;
mod depth;
mod guide;
mod load;
mod orchestrate;
mod props;
