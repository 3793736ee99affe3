//! The names an import gives: the suggested domain's, and each table's from its tag or path.

/// Longest suggested domain name, in characters.
const NAME_MAX: usize = 32;

/// `snake` cut to [`NAME_MAX`] at a word boundary (an underscore), so that no word is cut in
/// half; a first word longer than that is cut where the limit falls.
pub(crate) fn short_name(snake: &str) -> String {
    let snake = snake.trim_matches('_');
    if snake.chars().count() <= NAME_MAX {
        return snake.to_owned();
    }
    // The first NAME_MAX + 1 characters: an underscore right after the limit ends a whole word.
    let head: String = snake.chars().take(NAME_MAX + 1).collect();
    match head.rfind('_') {
        Some(cut) => head[..cut].trim_end_matches('_').to_owned(),
        None => head.chars().take(NAME_MAX).collect(),
    }
}

/// The leading words (each ending in `_`) that all of at least three distinct `domains` start
/// with, leaving none of them empty; empty when there are none.
pub(crate) fn shared_words<'a>(domains: impl Iterator<Item = &'a str>) -> String {
    let domains: std::collections::BTreeSet<&str> = domains.collect();
    let (Some(first), true) = (domains.first(), domains.len() >= 3) else { return String::new() };
    let mut shared = "";
    for (at, _) in first.match_indices('_') {
        let prefix = &first[..=at];
        if !domains.iter().all(|d| d.len() > prefix.len() && d.starts_with(prefix)) {
            break;
        }
        shared = prefix;
    }
    shared.to_owned()
}

pub(crate) fn first_segment(path: &str) -> String {
    path.split('/')
        .find(|s| !s.is_empty() && !s.starts_with('{') && !is_version(s) && *s != "api")
        .unwrap_or("root")
        .to_owned()
}

fn is_version(segment: &str) -> bool {
    segment.len() > 1 && segment.starts_with('v') && segment[1..].chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_every_tag_starts_with_is_shared_and_nothing_else() {
        let twilio = ["api20100401_call", "api20100401_call_recording", "api20100401_queue"];
        assert_eq!(shared_words(twilio.into_iter()), "api20100401_");
        // Two words shared, with a table of each kind (a name twice counts once).
        let two = ["pet_store_pets", "pet_store_orders", "pet_store_users", "pet_store_users"];
        assert_eq!(shared_words(two.into_iter()), "pet_store_");
        // A name that is the shared words alone keeps them all.
        assert_eq!(shared_words(["api_call", "api_queue", "api"].into_iter()), "");
        assert_eq!(shared_words(["api_call", "api_queue", "api_"].into_iter()), "");
        // Fewer than three tables, or nothing shared: nothing left out.
        assert_eq!(shared_words(["api_call", "api_queue"].into_iter()), "");
        assert_eq!(shared_words(["calls", "call_recordings", "queues"].into_iter()), "");
        assert_eq!(shared_words(std::iter::empty()), "");
    }
}
