//! Discovery ranks by relevance over real imported documents: Swagger Petstore 3.0 and Train
//! Travel 3.1 (openapi-import's fixtures) and the Spotify Web API (tests/openapi, the
//! conformance corpus), imported as `toolgate import openapi` imports them, registered in one
//! gateway, and searched with paraphrased requests, as a model or the web page's
//! `/api/tools?text=` asks (`Gateway::search`, the ranking `get_tool_schema`'s `query` uses).
//! The right tool must be in the first three for at least 90 % of them.

use std::sync::Arc;

use toolgate_core::{Caller, FnTool, Tool, ToolOutput};
use toolgate_gateway::{Filter, Gateway};

const DOCUMENTS: [&str; 3] = [
    "../toolgate-openapi/tests/it/fixtures/petstore-3.0.json",
    "../toolgate-openapi/tests/it/fixtures/train-travel-3.1.yaml",
    "tests/openapi/spotify-fixed-open-api.yml",
];

/// A request in other words than the tool's name, and the tools that answer it.
const QUERIES: &[(&str, &[&str])] = &[
    // Petstore
    ("find the pets that are still available", &["query_pet"]),
    ("register a new pet in the shop", &["update_pet"]),
    ("place an order to buy a pet", &["update_store"]),
    ("look up a purchase order by its id", &["query_store"]),
    ("how many animals are in stock, by status", &["query_store"]),
    ("sign a customer in with username and password", &["query_user"]),
    ("create an account for somebody new", &["update_user"]),
    ("remove a customer account", &["update_user"]),
    // Train Travel
    ("which railway stations can I travel from", &["query_stations"]),
    ("timetable of train journeys between two stations", &["query_trips"]),
    ("reserve a seat on a train", &["update_bookings"]),
    ("cancel my reservation", &["update_bookings"]),
    ("show the bookings I already made", &["query_bookings"]),
    ("pay for my ticket with a card", &["update_payments"]),
    // Spotify
    ("what song is on right now", &["query_player"]),
    ("pause the music", &["update_player"]),
    ("jump to the next song", &["update_player"]),
    ("make the music louder", &["update_player"]),
    ("play my songs in random order", &["update_player"]),
    ("which speakers and phones can play", &["query_player"]),
    ("songs I listened to lately", &["query_player"]),
    ("put a song in the up next list", &["update_player"]),
    ("start a new playlist for my account", &["update_playlists"]),
    ("put some songs into a playlist", &["update_playlists"]),
    ("the songs on an album", &["query_albums"]),
    ("albums that just came out", &["query_albums"]),
    ("the most popular songs of a musician", &["query_artists"]),
    ("musicians similar to this one", &["query_artists"]),
    ("like a song so it is in my library", &["update_tracks", "update_library"]),
    ("podcast episodes I bookmarked", &["query_episodes"]),
    ("start following a musician", &["update_users"]),
    ("the performers I listen to the most", &["query_users"]),
    ("the chapters of an audio book", &["query_audiobooks", "query_chapters"]),
    ("countries where the service can be used", &["query_markets"]),
    ("look for songs by a keyword", &["query_search"]),
    ("browse the kinds of music on offer", &["query_categories", "query_genres"]),
    ("tempo and energy of a song", &["query_tracks"]),
    ("save a podcast to my collection", &["update_shows", "update_library"]),
    ("my profile details", &["query_users"]),
    ("change the name and description of a playlist", &["update_playlists"]),
];

fn gateway() -> Gateway {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    for doc in DOCUMENTS {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
        let import = toolgate_openapi::import_file(&path, &toolgate_openapi::Options::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for table in import.tables {
            let spec = table.spec().unwrap_or_else(|e| panic!("{}: {e}", table.tool));
            tools.push(Arc::new(FnTool::new(spec, |_ctx, _params| {
                Box::pin(async { Ok(ToolOutput::json(serde_json::json!({}))) })
            })));
        }
    }
    Gateway::builder().tools(tools).build().unwrap()
}

#[test]
fn paraphrased_requests_find_the_right_tool_in_the_first_three() {
    assert!(QUERIES.len() >= 30);
    let gateway = gateway();
    let caller = Caller::new("u", gateway.policy().hierarchy().highest());
    let registered = gateway.discover(&caller, &Filter::default());
    assert!(registered.len() > 30, "{} tools", registered.len());
    let mut misses = Vec::new();
    for (query, expected) in QUERIES {
        for name in *expected {
            assert!(registered.iter().any(|s| s.name == *name), "no tool {name} to expect");
        }
        let found: Vec<String> = gateway
            .search(&caller, &Filter::default().text(*query))
            .into_iter()
            .take(3)
            .map(|s| s.name)
            .collect();
        if !found.iter().any(|n| expected.contains(&n.as_str())) {
            misses.push(format!("{query:?}: expected {expected:?}, first three {found:?}"));
        }
    }
    let rate = 100.0 * (QUERIES.len() - misses.len()) as f64 / QUERIES.len() as f64;
    println!(
        "discovery: the right tool in the first three for {rate:.1} % of {} paraphrased requests over {} tools",
        QUERIES.len(),
        registered.len()
    );
    for miss in &misses {
        println!("  missed {miss}");
    }
    assert!(rate >= 90.0, "{rate:.1} %:\n{}", misses.join("\n"));
}

#[test]
fn a_request_no_tool_carries_every_word_of_is_still_found() {
    let gateway = gateway();
    let caller = Caller::new("u", gateway.policy().hierarchy().highest());
    let query = "book a seat on a train to Berlin";
    // Every word a substring, as `discover` filters: nothing has all of them.
    assert!(gateway.discover(&caller, &Filter::default().text(query)).is_empty());
    let found = gateway.search(&caller, &Filter::default().text(query));
    assert!(
        found.iter().take(3).any(|s| s.name == "update_bookings"),
        "{:?}",
        found.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    // The other filters still apply to the ranked list.
    let reads =
        gateway.search(&caller, &Filter::default().text(query).effect(toolgate_gateway::EffectFilter::Read));
    assert!(!reads.is_empty() && reads.iter().all(|s| s.effect.is_read()));
}
