//! The integration tests of `toolgate-skills`, one binary (each module links once).

mod common;
mod depth;
mod guide;
mod load;
mod orchestrate;
mod props;
