//! What both real-model tests share: the folder an environment variable names, and the texts
//! whose token ids and embeddings each test compares with its reference implementation's.

use toolgate_embed::Encoder;

/// The model in the folder `var` names; `None` (the test skipped) without it, unless
/// `TOOLGATE_REQUIRE_MODEL=1`, which `.ci/run` sets.
pub(crate) fn model(var: &str) -> Option<Encoder> {
    match std::env::var(var) {
        Ok(dir) => Some(Encoder::load(&dir).unwrap_or_else(|e| panic!("{dir}: {e}"))),
        Err(_) if std::env::var("TOOLGATE_REQUIRE_MODEL").is_ok_and(|v| v == "1") => {
            panic!("TOOLGATE_REQUIRE_MODEL=1 but {var} is not set")
        }
        Err(_) => {
            eprintln!("skipped: {var} is not set");
            None
        }
    }
}

/// A request, an operation's summary, accents and punctuation, and a summary with brackets.
pub(crate) const TEXTS: [&str; 5] = [
    "spin up a new virtual server",
    "Create a New Droplet",
    "Delete a domain record",
    "Café résumé, naïve façade!",
    "Playlists: add/remove items (up to 100)",
];
