//! Integration tests of http-tools, one binary: real backends on 127.0.0.1 (plain HTTP and
//! HTTPS with a test CA made in the test), real clients, no mocks.

mod binaries;
mod echoed;
mod encoding;
mod faithful;
mod faults;
mod form;
mod locations;
mod multipart;
mod problems;
mod progress;
mod properties;
mod recorder;
mod refused;
mod targets;
mod tls;
mod token;
mod whole;
mod wire_names;
