//! How text becomes the terms the ranking compares: identifiers split
//! (`snake_case`, `camelCase`, `HTTPStatus`), lowercased, stop words and
//! single letters left out, and each word reduced to a stem by a light
//! Porter-like suffix stripping, so that `recordings`, `recorded` and
//! `recording` are one term, and `create`, `created` and `creation` another.
//!
//! Besides, the words an API and its users say for the same thing: a query
//! term also finds the other terms of its groups (see [`related`]).

use std::collections::HashMap;
use std::sync::OnceLock;

/// Words that say nothing about which tool is meant: articles, pronouns,
/// auxiliaries, conjunctions and the commonest prepositions. Words that can
/// name what is asked for (`up`, `out`, `off`, `next`, `new`, `top`,
/// `most`) are not among them.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been", "being", "both", "but",
    "by", "can", "could", "did", "do", "does", "doing", "each", "for", "from", "had", "has", "have",
    "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "itself", "just", "me", "might", "mine", "must", "my", "myself", "of", "on", "onto", "or", "our", "ours",
    "please", "shall", "she", "should", "so", "some", "than", "that", "the", "their", "theirs", "them",
    "then", "there", "these", "they", "this", "those", "to", "too", "us", "very", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "would", "you",
    "your", "yours",
];

/// General words of APIs for the same action: what an operation is named and
/// what its caller says for it (`fetch` or `show` for `get`, `remove` for
/// `delete`, `edit` for `update`).
const VERBS: &[&[&str]] = &[
    &["get", "fetch", "retrieve", "list", "show", "view"],
    &["create", "add", "new", "make", "insert", "register", "generate"],
    &["delete", "remove", "destroy", "erase", "purge", "cancel", "unfollow"],
    &["update", "change", "edit", "modify", "patch", "rename"],
];

/// Words of the domains the first query set of the discovery test covers
/// (`crates/toolgate/tests/it/discovery_rank.rs`: a pet shop, train travel,
/// music), written for that set: kept as they were, and not extended for the
/// held-out sets.
const RELATED: &[&[&str]] = &[
    &["user", "customer", "account", "person", "profile", "me"],
    &["booking", "reservation", "reserve", "book", "ticket"],
    &["track", "song", "tune", "music"],
    &["artist", "musician", "performer", "singer", "band"],
    &["playback", "player", "play", "listen", "listened", "music"],
    &["volume", "loud", "louder", "quieter"],
    &["shuffle", "random"],
    &["device", "speaker", "phone"],
    &["recent", "recently", "lately", "latest"],
    &["market", "country", "region"],
    &["search", "keyword", "find", "look"],
    &["save", "like", "bookmark", "bookmarked", "favorite", "favourite", "collection", "library"],
    &["order", "purchase", "buy"],
    &["pay", "payment", "charge", "card"],
    &["follow", "following", "subscribe"],
    &["top", "popular", "most"],
    &["related", "similar"],
    &["current", "currently", "now"],
    &["inventory", "stock"],
    &["login", "sign", "log"],
    &["feature", "tempo", "energy", "danceability"],
    &["podcast", "show", "episode"],
];

/// What a request's opening asks for: to read (a question, `show`, `list`) or to change
/// something (`delete`, `rename`, `send`). Politeness and framing before it (`please`, `can
/// you`, `I'd like to`), an article and an adverb (`permanently delete`) are skipped, and so is
/// an opening phrase up to its comma ("In Asana, open the template", "For recording RE12, show
/// its payloads"). A verb that takes its sense from the next word says it there (`get rid of`,
/// `give me`, `bring back`: see [`PHRASAL`]); a verb made with `re` or `un` is a change where the
/// verb is (`reinstall`, `unpause`). A request that opens otherwise and ends with a question
/// mark asks to read; any other ("older revisions of a file") says neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Intent {
    Read,
    Write,
}

/// Words skipped before a request's first telling word.
const FRAMING: &[&str] = &[
    "please", "kindly", "just", "can", "could", "would", "will", "you", "i", "id", "im", "want", "wanna",
    "need", "like", "to", "help", "me", "let", "lets", "us", "go", "ahead", "and", "hey", "ok", "okay",
    "now", "also", "quickly", "a", "an", "the", "this", "that", "these", "those", "some",
];

/// Words that open a question.
const QUESTIONS: &[&str] = &[
    "what", "whats", "which", "who", "whos", "whom", "whose", "how", "hows", "when", "where", "wheres",
    "why", "is", "isnt", "are", "arent", "am", "was", "were", "do", "dont", "does", "doesnt", "did", "didnt",
    "has", "hasnt", "have", "havent", "any",
];

/// Prepositions that open a phrase saying where or with what ("In Asana, …", "Using
/// gpt-4o, …"): skipped up to the first comma.
const PREPOSITIONS: &[&str] = &[
    "in", "on", "for", "from", "within", "inside", "at", "using", "with", "via", "through", "after",
    "before", "across", "under", "over", "into", "per",
];

/// Verbs that open a request to read, besides the `get` group of [`VERBS`] (but `get` itself:
/// see [`PHRASAL`]).
const READ_VERBS: &[&str] = &[
    "see",
    "find",
    "look",
    "check",
    "read",
    "search",
    "tell",
    "display",
    "download",
    "browse",
    "count",
    "know",
    "inspect",
    "preview",
    "export",
    "lookup",
    "describe",
    "chart",
    "graph",
    "plot",
    "print",
    "summarize",
    "summarise",
    "review",
    "audit",
    "compare",
    "open",
    "pull",
    "tally",
];

/// Verbs that open a request to change something, besides the create, delete and update groups
/// of [`VERBS`] (separated by white space).
const WRITE_VERBS: &str = "\
    set move copy send stop start assign unassign invite upload approve reject grant revoke \
    enable disable pause resume restore archive unarchive attach detach block unblock save \
    keep follow subscribe unsubscribe mark transfer reset rotate reboot restart resize \
    deploy trigger submit publish apply share unshare replace merge duplicate clear accept \
    decline terminate kill shut retry rerun run schedule buy purchase release lock unlock \
    pin unpin tag label link unlink connect disconnect import promote upgrade downgrade \
    scale turn put post kick allow deny ban mute unmute skip play seek queue shuffle reply \
    comment close reopen join leave book reserve order pay refund charge verify take drop \
    bookmark heart star unlike favorite favourite write install uninstall provision spin \
    launch power expire invalidate regenerate renew extend swap switch configure rollback \
    revert forward redirect dial call email notify remind hold dismiss resolve complete \
    finish snooze bump strip wipe tear raise increase decrease lower grow shrink hook point \
    push fix lift append convert end stick jump warn record define clone fork restrict \
    limit cap trash flag cut trim tweak adjust bind activate deactivate suspend freeze mint \
    issue exchange trade redeem ingest sync refresh rebuild train finetune translate \
    transcribe moderate classify embed answer ask grade evaluate score index";

/// A verb whose sense is in the next word: "get the invoice" reads and "get rid of it" changes;
/// "give me the details" reads and "give Sam access" changes.
struct Phrasal {
    verb: &'static str,
    /// The next words that make it a read or a change.
    senses: &'static [(&'static str, Intent)],
    /// What it is before any other word (`None`: neither).
    otherwise: Option<Intent>,
}

const PHRASAL: &[Phrasal] = &[
    Phrasal {
        verb: "get",
        senses: &[("rid", Intent::Write), ("notified", Intent::Write), ("alerted", Intent::Write)],
        otherwise: Some(Intent::Read),
    },
    Phrasal {
        verb: "give",
        senses: &[("me", Intent::Read), ("us", Intent::Read)],
        otherwise: Some(Intent::Write),
    },
    Phrasal { verb: "bring", senses: &[("back", Intent::Write)], otherwise: Some(Intent::Read) },
    Phrasal { verb: "break", senses: &[("down", Intent::Read)], otherwise: None },
    Phrasal { verb: "sign", senses: &[("up", Intent::Write)], otherwise: None },
    Phrasal { verb: "hand", senses: &[("over", Intent::Write)], otherwise: None },
];

/// `text`'s words as written, lowercased, apostrophes and hyphens dropped ("what's" is
/// "whats", "re-index" is "reindex").
fn written_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric() && !matches!(c, '\'' | '’' | '-'))
        .map(|w| w.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect::<String>())
        .filter(|w| !w.is_empty())
}

/// What `request`'s opening asks for ([`Intent`]), or `None` where it does not say.
pub(crate) fn intent(request: &str) -> Option<Intent> {
    static VERB_STEMS: OnceLock<(Vec<String>, Vec<String>)> = OnceLock::new();
    let (reads, writes) = VERB_STEMS.get_or_init(|| {
        let reads: Vec<String> =
            READ_VERBS.iter().chain(VERBS[0]).filter(|w| **w != "get").map(|w| stem(w)).collect();
        let writes: Vec<String> = WRITE_VERBS
            .split_whitespace()
            .chain(VERBS[1..].iter().flat_map(|g| g.iter().copied()))
            .map(stem)
            .filter(|w| !reads.contains(w))
            .collect();
        (reads, writes)
    });
    let request = request.trim();
    // An opening phrase ("In Asana, …") is skipped up to its comma.
    let opening = written_words(request).next().unwrap_or_default();
    let telling = match request.split_once(',') {
        Some((_, rest)) if PREPOSITIONS.contains(&opening.as_str()) => rest,
        _ => request,
    };
    let words: Vec<String> = written_words(telling).collect();
    let question = || request.ends_with('?').then_some(Intent::Read);
    for (at, word) in words.iter().enumerate() {
        if QUESTIONS.contains(&word.as_str()) {
            return Some(Intent::Read);
        }
        if FRAMING.contains(&word.as_str()) {
            continue;
        }
        if let Some(phrasal) = PHRASAL.iter().find(|p| p.verb == word) {
            let next = words.get(at + 1).map(String::as_str).unwrap_or_default();
            let by_next = phrasal.senses.iter().find(|(w, _)| *w == next).map(|(_, intent)| *intent);
            return by_next.or(phrasal.otherwise).or_else(question);
        }
        let stemmed = stem(word);
        if reads.contains(&stemmed) {
            return Some(Intent::Read);
        }
        let prefixed =
            ["re", "un"].iter().any(|p| word.strip_prefix(p).is_some_and(|v| writes.contains(&stem(v))));
        if writes.contains(&stemmed) || prefixed {
            return Some(Intent::Write);
        }
        // An adverb before the verb ("permanently delete", "only allow").
        if word.len() >= 4 && word.ends_with("ly") {
            continue;
        }
        break;
    }
    question()
}

/// The normalised terms of `text`, in order, stop words left out.
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |word| {
        let letter = word.chars().count() == 1 && !word.chars().all(char::is_numeric);
        if !letter && !STOP_WORDS.contains(&word) {
            out.push(stem(word));
        }
    });
    out
}

/// Each lowercased word of `text`: split on anything not a letter or digit,
/// and inside identifiers at a lower-to-upper change (`createTask`) and
/// before the last capital of a run followed by a lowercase letter
/// (`HTTPStatus` is `http status`).
fn for_each_word(text: &str, mut each: impl FnMut(&str)) {
    let chars: Vec<char> = text.chars().collect();
    let mut word = String::new();
    let mut flush = |word: &mut String| {
        if !word.is_empty() {
            each(word);
        }
        word.clear();
    };
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut word);
            continue;
        }
        if c.is_uppercase() && i > 0 {
            let previous = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if previous.is_lowercase() || previous.is_numeric() || (previous.is_uppercase() && next_lower) {
                flush(&mut word);
            }
        }
        word.extend(c.to_lowercase());
    }
    flush(&mut word);
}

fn has_vowel(s: &str) -> bool {
    s.bytes().any(|b| b"aeiouy".contains(&b))
}

/// A light stem of a lowercase word: plurals (`-s`, `-es`, `-ies`), `-ing`,
/// `-ed`, `-ly`, `-ment`, `-ation` (as `-ate`) and a final `e` stripped, a
/// doubled final consonant undoubled (`stopped` → `stop`). Short words, words
/// with digits and words not in ASCII are kept as they are.
pub(crate) fn stem(word: &str) -> String {
    if word.len() <= 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word.to_owned();
    }
    let mut w = word.to_owned();
    // Plurals.
    if w.ends_with("sses") {
        w.truncate(w.len() - 2);
    } else if w.len() > 4 && w.ends_with("ies") {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if ["xes", "ches", "shes", "zzes"].iter().any(|s| w.ends_with(s)) {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
        w.truncate(w.len() - 1);
    }
    // -ied, -ing, -ed: the stem keeps three letters and a vowel.
    if w.len() > 4 && w.ends_with("ied") {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if !w.ends_with("eed") {
        for suffix in ["ing", "ed"] {
            let stem_len = w.len().saturating_sub(suffix.len());
            if w.ends_with(suffix) && stem_len >= 3 && has_vowel(&w[..stem_len]) {
                w.truncate(stem_len);
                let b = w.as_bytes();
                let n = b.len();
                if n >= 2 && b[n - 1] == b[n - 2] && !b"aeioulsz".contains(&b[n - 1]) {
                    w.truncate(n - 1);
                }
                break;
            }
        }
    }
    // Derivations: -ly, -ment, -ation.
    if w.len() >= 6 && w.ends_with("ly") {
        w.truncate(w.len() - 2);
    } else if w.len() >= 8 && w.ends_with("ment") {
        w.truncate(w.len() - 4);
    } else if w.len() >= 8 && w.ends_with("ation") {
        w.truncate(w.len() - 3);
        w.push('e');
    }
    if w.len() >= 4 && w.ends_with('e') && !w.ends_with("ee") {
        w.truncate(w.len() - 1);
    }
    w
}

/// The terms a query term also finds, with the weight each counts for
/// against the term itself: the other words of its groups (stemmed).
pub(crate) fn related(term: &str) -> &'static [String] {
    static GROUPS: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    let groups = GROUPS.get_or_init(|| {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for group in VERBS.iter().chain(RELATED) {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            for s in &stems {
                let others = map.entry(s.clone()).or_default();
                for o in &stems {
                    if o != s && !others.contains(o) {
                        others.push(o.clone());
                    }
                }
            }
        }
        map
    });
    groups.get(term).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_split_lowercased_and_stop_words_left_out() {
        assert_eq!(terms("Create a Task on my file"), ["creat", "task", "fil"]);
        assert_eq!(
            terms("list_tasks, createTask; getHTTPStatus"),
            ["list", "task", "creat", "task", "get", "http", "status"]
        );
        assert!(terms("the of a to which").is_empty());
        assert_eq!(terms("été 2026 Zürich e-signature"), ["été", "2026", "zürich", "signatur"]);
        assert_eq!(
            terms("AvailablePhoneNumbers/Local.json"),
            ["availabl", "phon", "number", "local", "json"]
        );
    }

    #[test]
    fn inflections_share_a_stem() {
        for group in [
            &["recording", "recordings", "recorded", "record", "records"][..],
            &["create", "created", "creating", "creation", "creates"],
            &["delete", "deleted", "deleting", "deletes"],
            &["entry", "entries"],
            &["box", "boxes"],
            &["address", "addresses"],
            &["stop", "stopped", "stopping", "stops"],
            &["copy", "copies", "copied"],
            &["attach", "attachment", "attachments", "attached"],
            &["recent", "recently"],
            &["file", "files", "filed"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(stems.iter().all(|s| *s == stems[0]), "{group:?}: {stems:?}");
        }
        for kept in ["status", "access", "analysis", "use", "speed", "ring", "bill"] {
            assert_eq!(stem(kept), kept);
        }
    }

    #[test]
    fn a_requests_opening_says_whether_it_reads_or_writes() {
        for read in [
            "What's the current target of the 'Reduce churn' goal?",
            "which tasks are waiting on this one",
            "Can you show me my playlists",
            "I'd like to see the invoices",
            "Look up rate 7781",
            "Is this song in my library?",
            "list droplets",
            // A phrasal verb read by its next word, or by default.
            "Give me the details of webhook 12",
            "Get the transcription result XR12",
            "Bring up the audit log",
            "Break down my spend by product",
            // An opening phrase up to its comma, and articles, skipped.
            "In Asana, open up the 'Launch' template",
            "For recording RE55, show me its payloads",
            "I need a list of all teams",
            // A read verb beyond the `get` group.
            "Describe my VPC",
            // Neither opening, but a question mark.
            "Average CPU across my Droplets right now?",
        ] {
            assert_eq!(intent(read), Some(Intent::Read), "{read}");
        }
        for write in [
            "Please delete the old project",
            "Could you rename the 'In Review' option to 'QA'",
            "Kick Alex out of the project",
            "reboot my server",
            "Creating a task for Sam",
            "let's add a webhook",
            "get rid of this file",
            "Give the Data team access to the project",
            "Bring back the folder I deleted",
            "Sign up three customers",
            "Hand over my snapshot to the other team",
            "Permanently delete the old cluster",
            "Only allow my web Droplets in",
            "Using gpt-4o-mini, answer this question",
            // A verb made with `re` or `un`, hyphenated or not.
            "Reinstall Droplet 31 from a fresh image",
            "Un-mute the finding",
            "Re-index the knowledge base",
            "unpause my fine-tuning job",
            "Tear down the NAT gateway",
        ] {
            assert_eq!(intent(write), Some(Intent::Write), "{write}");
        }
        for neither in [
            "older revisions of a file",
            "pictures that came with a text",
            "sign a customer in",
            "In the projects",
            "Dana shouldn't get notifications anymore",
            "",
            "   ",
            ",",
        ] {
            assert_eq!(intent(neither), None, "{neither}");
        }
    }

    #[test]
    fn a_verb_finds_its_synonyms() {
        assert!(related(&stem("remove")).contains(&stem("delete")));
        assert!(related(&stem("fetch")).contains(&stem("get")));
        assert!(related(&stem("edit")).contains(&stem("update")));
        assert!(related("nothing").is_empty());
    }
}
