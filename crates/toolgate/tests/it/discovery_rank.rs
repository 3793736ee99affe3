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

/// The sentence encoder `TOOLGATE_TEST_MODEL_DIR` names (all-MiniLM-L6-v2, which `.ci/tools.sh`
/// unpacks from PyPI), loaded once; `None` without one, unless `TOOLGATE_REQUIRE_MODEL=1`.
fn model() -> Option<Arc<dyn toolgate_gateway::Embedder>> {
    static MODEL: std::sync::OnceLock<Option<Arc<toolgate_embed::Encoder>>> = std::sync::OnceLock::new();
    let model = MODEL.get_or_init(|| {
        let dir = crate::discovery_model::model_dir()?;
        Some(Arc::new(toolgate_embed::Encoder::load(&dir).unwrap_or_else(|e| panic!("{dir}: {e}"))))
    });
    model.clone().map(|m| m as Arc<dyn toolgate_gateway::Embedder>)
}

/// The tables of [`DOCUMENTS`], imported as `toolgate import openapi` imports them.
fn first_tables() -> Vec<toolgate_schema::RouteTable> {
    let mut tables = Vec::new();
    for doc in DOCUMENTS {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
        let import = toolgate_openapi::import_file(&path, &toolgate_openapi::Options::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        tables.extend(import.tables);
    }
    tables
}

/// A gateway of `tables`' tools (each answering `{}`), ranking by meaning too with `embedder`.
fn gateway_of(
    tables: &[toolgate_schema::RouteTable],
    embedder: Option<Arc<dyn toolgate_gateway::Embedder>>,
) -> Gateway {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    for table in tables {
        let spec = table.spec().unwrap_or_else(|e| panic!("{}: {e}", table.tool));
        tools.push(Arc::new(FnTool::new(spec, |_ctx, _params| {
            Box::pin(async { Ok(ToolOutput::json(serde_json::json!({}))) })
        })));
    }
    let builder = Gateway::builder().tools(tools);
    match embedder {
        Some(embedder) => builder.embedder(embedder),
        None => builder,
    }
    .build()
    .unwrap()
}

#[test]
fn a_request_no_tool_carries_every_word_of_is_still_found() {
    let gateway = gateway_of(&first_tables(), None);
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

/// (Held out until 2026-12-05, a development set since: see [`HELD_OUT_MODEL_FLOOR`].)
/// Held-out requests over two other documents of the corpus (Asana and Box), written from what
/// a user would ask before the ranker was run on them, and not used to tune it: each names the
/// operations that answer it (the right tool is the one holding one of them, however the
/// import named or split the tools).
const HELD_OUT: &[(&str, &[&str])] = &[
    // Asana
    ("make a new to-do item in my project", &["create_task"]),
    ("mark a task as done", &["update_task"]),
    ("break a task into smaller pieces", &["create_subtask_for_task"]),
    (
        "which tasks are waiting on this one to finish",
        &["get_dependents_for_task", "get_dependencies_for_task"],
    ),
    ("leave a comment on a task", &["create_story_for_task"]),
    ("attach a file to a task", &["create_attachment_for_object"]),
    ("label a task with a tag", &["add_tag_for_task"]),
    ("list the columns of a project board", &["get_sections_for_project"]),
    ("who is on this team", &["get_users_for_team", "get_team_memberships_for_team"]),
    ("copy an existing project", &["duplicate_project"]),
    (
        "post a weekly progress update for a project",
        &["create_project_status_for_project", "create_status_for_object"],
    ),
    ("set up a company objective for this quarter", &["create_goal"]),
    ("log two hours spent on a task", &["create_time_tracking_entry"]),
    ("who is out of office next week", &["get_ooo_entries"]),
    ("get notified when a project changes", &["create_webhook"]),
    (
        "find tasks assigned to me that are due this week",
        &["search_tasks_for_workspace", "get_tasks", "get_tasks_for_user_task_list"],
    ),
    ("add a dropdown field to a project", &["add_custom_field_setting_for_project", "create_custom_field"]),
    ("start a project from a template", &["instantiate_project"]),
    ("invite someone to the workspace", &["add_user_for_workspace"]),
    ("my favorite projects", &["get_favorites_for_user"]),
    ("delete a tag", &["delete_tag"]),
    (
        "what happened in the workspace recently",
        &["get_workspace_events", "get_events", "get_audit_log_events"],
    ),
    // Box
    ("share a file with a link anyone can open", &["put_files_id_add_shared_link"]),
    ("upload a document into a folder", &["post_files_content"]),
    ("download the contents of a file", &["get_files_id_content"]),
    ("what is inside this folder", &["get_folders_id_items"]),
    ("make a new directory", &["post_folders"]),
    ("give a coworker edit access to a folder", &["post_collaborations"]),
    ("leave a note on a document", &["post_comments"]),
    ("ask someone to review a file by a date", &["post_tasks", "post_task_assignments"]),
    ("older revisions of a file", &["get_files_id_versions"]),
    ("bring back a file I deleted", &["post_files_id"]),
    ("send a contract out for e-signature", &["post_sign_requests"]),
    ("look for documents mentioning invoice", &["get_search"]),
    ("who am I signed in as", &["get_users_me"]),
    ("add an employee to a group", &["post_group_memberships"]),
    ("stamp a watermark on a file", &["put_files_id_watermark"]),
    ("files I opened recently", &["get_recent_items"]),
    (
        "keep files from being deleted for seven years",
        &["post_retention_policies", "post_retention_policy_assignments"],
    ),
    ("preserve documents for a lawsuit", &["post_legal_hold_policies", "post_legal_hold_policy_assignments"]),
    ("get a small preview image of a file", &["get_files_id_thumbnail_id"]),
    ("bundle several files into one archive to download", &["post_zip_downloads"]),
    ("ask the AI a question about a document", &["post_ai_ask"]),
    ("change a user's profile picture", &["post_users_id_avatar"]),
];

/// The tables of a corpus document (`tests/openapi/`, a `.gz` unpacked first), with `name`.
fn corpus_tables<'a>(file: &str, name: &'a str) -> (Vec<toolgate_schema::RouteTable>, &'a str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openapi").join(file);
    let dir = tempfile::tempdir().unwrap();
    let packed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&packed[..]), &mut text).unwrap();
    let unpacked = dir.path().join(file.trim_end_matches(".gz"));
    std::fs::write(&unpacked, text).unwrap();
    let import = toolgate_openapi::import_file(&unpacked, &toolgate_openapi::Options::default())
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    (import.tables, name)
}

// Measured 47.7 % (21 of 44 requests missed) with the first ranker (BM25 over one document per
// tool), 56.8 % (19 missed) with BM25F over operations, stems and parameter text. Most misses
// share no word with the tool they want ("who is out of office" for `get_ooo_entries`,
// "lawsuit" for legal holds). The goal is 90 %, not met: this test holds the measured floor,
// so that a change of the ranker can only raise it (raise the floor with it).
// 61.4 % (17 missed) with the tables' `about` (their tags' first paragraphs) counted as their
// descriptions are, a variant chosen on this set among others (2026-12-05). 68.2 % (14 missed)
// with a tool that does the other thing than the request's opening asks (reads for "delete",
// writes for "which") counting 0.6, chosen on the four development sets (2026-12-06).
const HELD_OUT_FLOOR: f64 = 68.0;

// With the model (all-MiniLM-L6-v2), measured once per variant of what is embedded and how
// the rankings are fused, each variant chosen without this set: 72.7 % (12 of 44 missed) with
// each operation's name and summary, the rankings weighted 1:1 (chosen on the first set alone,
// where several variants tied at 100 %); 65.9 % (15 missed) with the tool's name before them
// and the semantic ranking weighted 2 (chosen on the first set and the OpenAI validation set,
// [`VALIDATION`]); 72.7 % (12 missed) with the tables' `about` (their OpenAPI tags'
// descriptions) embedded too, chosen on the same two sets, which the ranker uses.
// On 2026-12-05 this set and [`HELD_OUT_2`] became development sets: the tags' first paragraphs
// in place of their first lines, then (among 20 variants tried on these four sets) each
// sentence of them embedded on its own and their words counted: 77.3 %, then 81.8 % (8 missed).
// [`HELD_OUT_3`]'s parts are the held-out measure since. With the request's effect counted
// (see [`HELD_OUT_FLOOR`]): 86.4 % (6 missed). With the two rankings fused by their scores
// rather than by rank (chosen on a pool of the development sets and the first three draws of
// paraphrases, 2026-12-06): 90.9 % (4 missed).
const HELD_OUT_MODEL_FLOOR: f64 = 90.0;

/// A second held-out set, over DigitalOcean and Twilio (API 2010), written from the two
/// documents' operation lists in a user's words before the ranker was run on them, and kept
/// out of any tuning of it, as [`HELD_OUT`] is. An operation whose body is a union is imported
/// as one op per body form (`droplets_create_op_1943`): a request names the forms it means.
const HELD_OUT_2: &[(&str, &[&str])] = &[
    // DigitalOcean
    ("spin up a new virtual server", &["droplets_create_op_1943", "droplets_create_op_1944"]),
    ("get rid of a virtual machine for good", &["droplets_destroy"]),
    ("reboot my server", &["droplet_actions_post_droplet_action"]),
    (
        "point my website's name at a server's address",
        &["domains_create_record_domain_record_a", "domains_create_record_domain_record_aaaa"],
    ),
    ("which DNS entries does my website have", &["domains_list_records"]),
    ("set up a managed Postgres instance", &["databases_create_cluster"]),
    ("how much do I owe so far this month", &["balance_get", "invoices_list"]),
    ("download last month's bill as a PDF", &["invoices_get_pdf_by_uuid"]),
    ("upload my public key for passwordless login to servers", &["ssh_keys_create"]),
    (
        "only let HTTPS traffic reach my servers",
        &[
            "firewalls_create_inbound_rules",
            "firewalls_add_rules_inbound_rules",
            "firewalls_update_inbound_rules",
        ],
    ),
    (
        "spread web traffic across several servers",
        &["load_balancers_create_assign_droplets_by_id", "load_balancers_create_assign_droplets_by_tag"],
    ),
    ("the config file kubectl needs to reach my cluster", &["kubernetes_get_kubeconfig"]),
    (
        "add more worker machines to my k8s cluster",
        &["kubernetes_add_node_pool", "kubernetes_update_node_pool"],
    ),
    (
        "attach extra disk space to a server",
        &[
            "volumes_create_op_1000",
            "volumes_create_op_1001",
            "volume_actions_post_op_970",
            "volume_actions_post_by_id_op_970",
        ],
    ),
    (
        "a fixed public address I can move between servers",
        &["reserved_ips_create_assign_to_droplet", "floating_ips_create_assign_to_droplet"],
    ),
    ("how busy is the processor on my server", &["monitoring_get_droplet_cpu_metrics"]),
    ("email me when memory use goes above 90 percent", &["monitoring_create_alert_policy"]),
    ("which data centers can I deploy to", &["regions_list"]),
    ("what machine sizes and prices are offered", &["sizes_list"]),
    ("a private place to push my docker images", &["registry_create", "registries_create"]),
    ("deploy my code from a git repository", &["apps_create"]),
    ("go back to the previous release of my app", &["apps_create_rollback"]),
    ("ping my website every minute to see that it is up", &["uptime_create_check"]),
    ("clear the cached copies of my static files", &["cdn_purge_cache"]),
    ("an isolated private network for my servers", &["vpcs_create"]),
    // Twilio
    ("text someone on their mobile", &["create_message"]),
    ("ring a phone number from my app", &["create_call"]),
    ("hang up a call that is still going", &["update_call"]),
    ("history of the calls made last week", &["list_call"]),
    (
        "get a new number people can reach me on",
        &[
            "create_incoming_phone_number",
            "create_incoming_phone_number_local",
            "create_incoming_phone_number_mobile",
            "create_incoming_phone_number_toll_free",
        ],
    ),
    ("numbers I could rent in a given area code", &["list_available_phone_number_local"]),
    ("give back a number I no longer need", &["delete_incoming_phone_number"]),
    ("how much credit is left", &["fetch_balance"]),
    (
        "listen to the audio of a recorded conversation",
        &["fetch_recording", "fetch_call_recording", "list_call_recording", "list_recording"],
    ),
    (
        "the written text of a voicemail",
        &[
            "fetch_transcription",
            "list_transcription",
            "fetch_recording_transcription",
            "list_recording_transcription",
        ],
    ),
    ("start taping a call that is in progress", &["create_call_recording"]),
    ("pause the recording while a card number is read out", &["update_call_recording"]),
    ("remove a caller from a group call", &["delete_participant"]),
    ("mute one person on a conference line", &["update_participant"]),
    ("hold callers in line until an agent is free", &["create_queue"]),
    ("who is still waiting in line", &["list_member"]),
    // `create_payments` is not imported; `update_payments` is in the table it would be in.
    ("take a card payment over the phone", &["update_payments"]),
    ("pictures that came with a text", &["list_media", "fetch_media"]),
    ("stop a text from going out before it is delivered", &["update_message"]),
    ("erase a text from my history", &["delete_message"]),
    ("a separate sub-account for one of my clients", &["create_account"]),
    (
        "how many minutes did we use this month",
        &["list_usage_record_this_month", "list_usage_record", "list_usage_record_monthly"],
    ),
    ("warn me when spending passes a limit", &["create_usage_trigger"]),
    ("show my own office number when calling out", &["create_validation_request", "list_outgoing_caller_id"]),
    ("live captions of what is said on a call", &["create_realtime_transcription"]),
    ("send the call audio to my websocket server", &["create_stream"]),
    ("errors and warnings logged for my account", &["list_notification"]),
    (
        "only let these addresses place SIP calls",
        &["create_sip_ip_access_control_list", "create_sip_ip_address"],
    ),
];

// Measured 34.0 % (35 of 53 requests missed) when the set was written, with the first ranker;
// 32.1 % (36 missed) with BM25F over operations, which was tuned on the other two sets only and
// measured here once tuned. The configurations tried all score 17 to 19 of 53 here: the misses
// are words the documents do not use ("server" for a Droplet, "text" for a message, "credit"
// for the balance). The floor holds the figure, a little under it.
// 34.0 % (35 missed) with the tables' `about` counted as their descriptions are (2026-12-05);
// 35.8 % (34 missed) with the request's effect counted (2026-12-06).
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 35.8 % by words,
// 67.9 % with the model (17 missed): three fewer, among them "get a new number people can reach me
// on", which opens as a read (`get`) and asks to buy one.
const HELD_OUT_2_FLOOR: f64 = 35.0;

// With the model, the same three variants as for [`HELD_OUT_MODEL_FLOOR`]: 56.6 % (23 of 53
// missed), 66.0 % (18 missed), then 67.9 % (17 missed) with the variant the ranker uses.
// As development set (see [`HELD_OUT_MODEL_FLOOR`]): 71.7 %, then 73.6 % (14 missed), then
// 75.5 % (13 missed) with the request's effect counted; 73.6 % (14 missed) with the rankings
// fused by their scores, which found 7 more of the 493 requests of the development pool.
const HELD_OUT_2_MODEL_FLOOR: f64 = 67.0;

/// A third set of requests, over OpenAI's API, written from its operation list in a user's words
/// before the ranker was run on it, to choose between variants of the ranking with the model
/// (what is embedded, the fusion's constant and weights): the two held-out sets above were not
/// used for that. Being the set the variant was chosen on, its rate with the model is not a
/// measure of unseen requests; the held-out sets' are.
const VALIDATION: &[(&str, &[&str])] = &[
    ("turn this paragraph into spoken audio", &["create_speech"]),
    ("write down what is said in this recording", &["create_transcription"]),
    ("convert a French voice memo into English text", &["create_translation"]),
    ("draw a picture of a cat astronaut", &["create_image"]),
    ("change the background of my photo", &["create_image_edit"]),
    ("get a vector for semantic search of this sentence", &["create_embedding"]),
    ("is this comment hateful or violent", &["create_moderation"]),
    ("which models can I use", &["list_models"]),
    ("train a custom model on my examples", &["create_fine_tuning_job"]),
    ("stop a training job that is running", &["cancel_fine_tuning_job"]),
    ("progress messages of my training run", &["list_fine_tuning_events"]),
    ("upload a document for later use", &["create_file"]),
    ("download the contents of an uploaded file", &["download_file"]),
    ("run many requests offline at half price", &["create_batch"]),
    (
        "ask the model a question and get a reply",
        &["create_response", "create_chat_completion", "beta_create_response"],
    ),
    ("build a helper bot with custom instructions", &["create_assistant"]),
    ("start a new conversation thread", &["create_thread", "create_conversation"]),
    ("add a user message to a thread", &["create_message"]),
    ("how much did my organization spend this month", &["usage_costs"]),
    ("invite a colleague to my organization", &["invite_user"]),
    ("create a new project for my team", &["create_project"]),
    ("revoke an API key of a project", &["delete_project_api_key"]),
    ("a place to store documents for retrieval", &["create_vector_store"]),
    ("search my knowledge base for relevant passages", &["search_vector_store"]),
    ("who changed settings in my organization", &["list_audit_logs"]),
    ("how many tokens did we use for completions", &["usage_completions"]),
    ("make a short video clip from a description", &["create_video"]),
    ("set a maximum amount my organization can spend", &["updateorganizationspendlimit"]),
    ("warn me when a project spends too much", &["create_project_spend_alert"]),
    ("remove someone from my organization", &["delete_user"]),
    ("give a group admin rights", &["assign_group_role"]),
    ("count the tokens of a prompt before sending it", &["getinputtokencounts", "beta_getinputtokencounts"]),
    ("clone my voice for speech", &["create_voice"]),
    ("end a live voice call", &["hangup_realtime_call"]),
    ("archive an old project", &["archive_project"]),
    ("check whether an image was made by OpenAI", &["createcontentprovenancecheck"]),
];

// Measured: by words alone 66.7 % (12 of 36 missed); with the model, 86.1 % with the first
// variant, 91.7 % with the second and 94.4 % (2 missed) with the third, which the ranker uses.
// By words 72.2 % (10 missed) with the tables' `about` counted (2026-12-05); with the model
// unchanged. With the request's effect counted (2026-12-06): 75.0 % by words (9 missed), with
// the model unchanged. With the rankings fused by their scores (see [`HELD_OUT_MODEL_FLOOR`]):
// 88.9 % with the model (4 missed), two fewer on this set, seven more on the whole pool.
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 75.0 % by words,
// 91.7 % with the model (3 missed).
const VALIDATION_FLOOR: f64 = 75.0;
const VALIDATION_MODEL_FLOOR: f64 = 91.0;

/// A third held-out set, written after the ranker of 2026-12-04 and before any change of it was
/// measured on this set, by a helper who had read neither the ranker nor its tests: from the
/// operation lists of six documents (operations no earlier set asks for), in the words of a user
/// who does not know each API's vocabulary. It is kept out of any tuning: the sets above are
/// what variants are chosen on, this one is measured once per variant that lands. Its requests
/// are grouped by the gateway they are asked of.
const HELD_OUT_3_ASANA_BOX: &[(&str, &[&str])] = &[
    // Asana
    ("block out next week as my vacation", &["create_ooo_entry"]),
    (
        "this task can't start until that other one is finished",
        &["add_dependencies_for_task", "add_dependents_for_task"],
    ),
    ("how many of a project's tasks are finished and how many remain", &["get_task_counts_for_project"]),
    ("take someone off a team", &["remove_user_for_team"]),
    ("let in someone who asked to see my project", &["approve_access_request"]),
    ("record our latest progress number toward a company objective", &["update_goal_metric"]),
    ("nest an existing task under another one", &["set_parent_for_task"]),
    ("save this project's setup to reuse for future projects", &["project_save_as_template"]),
    ("reserve ten hours a week of someone's time for a project", &["create_allocation"]),
    ("add a new choice to a dropdown field", &["create_enum_option_for_custom_field"]),
    ("stop getting notified about changes to a task", &["remove_follower_for_task"]),
    ("write a one-page overview of what our project is about", &["create_project_brief"]),
    // Box
    ("what is sitting in my trash right now", &["get_folders_trash_items"]),
    (
        "go back to an older version of my document",
        &["put_files_id_versions_id", "post_files_id_versions_current"],
    ),
    ("make a copy of a whole folder and everything in it", &["post_folders_id_copy"]),
    ("stop people from moving or deleting a folder", &["post_folder_locks"]),
    ("give all of a departing employee's folders to their manager", &["put_users_id_folders_0"]),
    ("sign a user out of every device right now", &["post_users_terminate_sessions"]),
    (
        "pull the invoice number and total out of a scanned PDF",
        &["post_ai_extract", "post_ai_extract_structured"],
    ),
    ("downgrade someone from editor to viewer on a shared folder", &["put_collaborations_id"]),
    ("turn off the public link to a file", &["put_files_id_remove_shared_link"]),
    ("remind someone to sign the contract I sent them", &["post_sign_requests_id_resend"]),
    (
        "upload a 20 GB video in parts",
        &["post_files_upload_sessions", "post_files_id_upload_sessions", "put_files_upload_sessions_id"],
    ),
    ("give a user a second email address to log in with", &["post_users_id_email_aliases"]),
];

const HELD_OUT_3_DIGITALOCEAN_TWILIO: &[(&str, &[&str])] = &[
    // DigitalOcean
    (
        "give my server more memory and CPUs",
        &["droplet_actions_post_droplet_action_resize", "droplet_actions_post_droplet_action"],
    ),
    ("reset the password of a database login", &["databases_reset_auth"]),
    ("a read-only copy of my database for reporting queries", &["databases_create_replica"]),
    ("add or remove servers automatically as traffic changes", &["autoscalepools_create"]),
    ("route email for my domain to my mail provider", &["domains_create_record_domain_record_mx"]),
    ("free HTTPS certificate for my website", &["certificates_create_certificate_request_lets_encrypt"]),
    ("restart my web app", &["apps_restart"]),
    (
        "what is my app printing to its console",
        &[
            "apps_get_logs_active_deployment",
            "apps_get_logs_active_deployment_aggregate",
            "apps_get_logs",
            "apps_get_logs_aggregate",
        ],
    ),
    ("let two private networks talk to each other", &["vpc_peerings_create", "vpcs_create_peerings"]),
    ("upgrade my kubernetes cluster to a newer version", &["kubernetes_upgrade_cluster"]),
    ("let servers with no public address reach the internet", &["vpcnatgateways_create"]),
    ("a shared network drive several servers can mount", &["nfs_create"]),
    (
        "free up space in my docker image registry",
        &["registries_run_garbage_collection", "registry_run_garbage_collection"],
    ),
    ("how much free disk space is left on my server", &["monitoring_get_droplet_filesystem_free_metrics"]),
    // Twilio
    ("dial one more person into a conference call in progress", &["create_participant"]),
    ("change what happens when someone calls my number", &["update_incoming_phone_number"]),
    ("register my business address for a phone number abroad", &["create_address"]),
    ("create a new API key for my backend", &["create_new_key", "create_new_signing_key"]),
    ("suspend a client's sub-account", &["update_account"]),
    ("who is on the conference line right now", &["list_participant"]),
    ("end a conference call for everyone", &["update_conference"]),
    ("TURN server credentials for my browser video calls", &["create_token"]),
    ("delete an old voicemail recording", &["delete_recording", "delete_call_recording"]),
    (
        "phone numbers I already own",
        &[
            "list_incoming_phone_number",
            "list_incoming_phone_number_local",
            "list_incoming_phone_number_mobile",
            "list_incoming_phone_number_toll_free",
        ],
    ),
    ("connect the next caller waiting on hold to an agent", &["update_member"]),
    ("report that the customer actually used the code we texted", &["create_message_feedback"]),
];

const HELD_OUT_3_OPENAI: &[(&str, &[&str])] = &[
    // OpenAI
    ("make a few variations of this picture", &["create_image_variation"]),
    ("pause my training run for now", &["pause_fine_tuning_job"]),
    ("delete a custom model I trained", &["delete_model"]),
    ("upload a 5 GB file in several pieces", &["create_upload", "add_upload_part"]),
    ("shrink a long chat history so it fits", &["compactconversation", "beta_compactconversation"]),
    ("give a teammate access to one project", &["create_project_user"]),
    ("make my generated video clip a few seconds longer", &["create_video_extend"]),
    ("how many pictures did we generate this month", &["usage_images"]),
];

const HELD_OUT_3_SPOTIFY: &[(&str, &[&str])] = &[
    // Spotify
    ("play the music on my kitchen speaker instead", &["transfer_a_users_playback"]),
    (
        "what song is playing right now",
        &["get_the_users_currently_playing_track", "get_information_about_the_users_current_playback"],
    ),
    ("songs I've been listening to most lately", &["get_users_top_tracks"]),
    ("take a song off my workout playlist", &["remove_items_playlist", "remove_tracks_playlist"]),
    ("put my own picture on a playlist", &["upload_custom_playlist_cover"]),
    ("heart this song so I can find it later", &["save_tracks_user", "save_library_items"]),
];

/// Paraphrases of operations drawn at random (seed 20261205, 16 to 24 per deployment, from the
/// operations no earlier set asks for), the measure the goal names: each written as a user would
/// ask for the operation, in other words than its summary, by a helper who had read neither the
/// ranker nor its tests, and measured once as written. A request names the drawn operation first,
/// then the others that answer it as well (a twin path, the library-wide form of a Spotify save).
const PARAPHRASES_SPOTIFY: Requests = &[
    // Spotify
    ("Do I already have these songs, an album and a podcast in my library?", &["check_library_contains"]),
    (
        "Have I already got this podcast in my library?",
        &["check_users_saved_shows", "check_library_contains"],
    ),
    ("Take these podcast episodes out of my library", &["remove_episodes_user", "remove_library_items"]),
    (
        "Get rid of a couple of audiobooks from my Spotify library",
        &["remove_audiobooks_user", "remove_library_items"],
    ),
    ("Which podcasts do I have in my Spotify library?", &["get_users_saved_shows"]),
    ("Show me the playlists under the workout section of Browse", &["get_a_categories_playlists"]),
    (
        "Pull up details on this podcast, like its publisher and description",
        &["get_a_show", "get_multiple_shows"],
    ),
    ("List all the songs in this playlist", &["get_playlists_tracks", "get_playlists_items"]),
    ("Show me this playlist's name, owner and follower count", &["get_playlist"]),
    ("What artwork is shown on this playlist?", &["get_playlist_cover"]),
    ("Fetch info on three different podcasts in one go", &["get_multiple_shows"]),
    ("List every episode of this podcast", &["get_a_shows_episodes"]),
    ("What playlists do I have on my account?", &["get_a_list_of_current_users_playlists"]),
    (
        "Bookmark this podcast episode in my library so I can listen later",
        &["save_episodes_user", "save_library_items"],
    ),
    ("Add this album to my library", &["save_albums_user", "save_library_items"]),
    ("Keep this audiobook in my Spotify collection", &["save_audiobooks_user", "save_library_items"]),
];

const PARAPHRASES_ASANA_BOX: Requests = &[
    // Asana
    (
        "Make a new \"urgent\" label in Asana that I can put on tasks",
        &["create_tag", "create_tag_for_workspace"],
    ),
    ("Change the due date and owner of this Asana goal", &["update_goal"]),
    ("Spin up a new task from our bug report task template", &["instantiate_task"]),
    ("Find projects in my workspace due before March and owned by Priya", &["search_projects_for_workspace"]),
    ("Has the background job that is duplicating my project finished yet?", &["get_job"]),
    (
        "Who belongs to this Asana workspace, and which of them are admins or guests?",
        &["get_workspace_memberships_for_workspace"],
    ),
    ("Let portfolio members automatically get access to this project", &["update_project_portfolio_setting"]),
    ("Delete the status update I posted on our quarterly goal", &["delete_status"]),
    ("Which Asana workspaces and organizations do I have access to?", &["get_workspaces"]),
    ("Change the name of our Asana workspace", &["update_workspace"]),
    ("Which projects is this task part of?", &["get_projects_for_task"]),
    // Box
    ("Which e-signature templates do we have available in Box?", &["get_sign_templates"]),
    (
        "Show details for one outside domain we permit people to collaborate with",
        &["get_collaboration_whitelist_entries_id"],
    ),
    ("Which integrated app items is this Box file linked to?", &["get_files_id_app_item_associations"]),
    ("Show me the Box sharing invitations I haven't accepted yet", &["get_collaborations"]),
    (
        "Rename an information barrier segment in Box and change its description",
        &["put_shield_information_barrier_segments_id"],
    ),
    ("Delete a file from the Box trash for good so it can't be restored", &["delete_files_id_trash"]),
    (
        "Rename one level in our Box metadata taxonomy hierarchy",
        &["patch_metadata_taxonomies_id_id_levels_id"],
    ),
    (
        "Show how one retention rule is applied, like which folder it covers",
        &["get_retention_policy_assignments_id"],
    ),
    ("Stamp a watermark on everything inside this Box folder", &["put_folders_id_watermark"]),
    (
        "Open one storage policy assignment record to see who it covers",
        &["get_storage_policy_assignments_id"],
    ),
    (
        "Stop allowing collaboration with an outside email domain in Box",
        &["delete_collaboration_whitelist_entries_id"],
    ),
    (
        "Show the fields defined in a Box metadata template, looked up by its key",
        &["get_metadata_templates_id_id_schema"],
    ),
    ("Rename this file in Box and update its description", &["put_files_id"]),
];

const PARAPHRASES_DIGITALOCEAN_TWILIO: Requests = &[
    // DigitalOcean
    ("Change the fallback models used by my AI model router", &["genai_update_model_router"]),
    (
        "Delete this droplet along with every volume, snapshot and IP attached to it",
        &["droplets_destroy_with_associated_resources_dangerous"],
    ),
    ("Show all the schemas registered for my Kafka database", &["databases_list_kafka_schemas"]),
    (
        "Turn this paragraph into spoken audio with a hosted generative media model",
        &["inference_create_async_invoke"],
    ),
    (
        "Move my NFS share to a faster performance tier",
        &["nfs_create_action_nfs_action_switch_performance_tier"],
    ),
    ("Which instances is my App Platform app running right now?", &["apps_get_instances"]),
    ("Take the content safety guardrail off my AI agent", &["genai_detach_agent_guardrail"]),
    (
        "Send this app's alert notifications to a new email and Slack webhook",
        &["apps_assign_alert_destinations"],
    ),
    (
        "Rename a Spaces key and change which buckets it can access",
        &["spaces_key_update", "spaces_key_patch"],
    ),
    ("Accept the custom image another account sent over to me", &["images_post_account_transfer_accept"]),
    ("Email me when the uptime check on my website starts failing", &["uptime_create_alert"]),
    ("Permanently remove one of my GenAI agents", &["genai_delete_agent"]),
    ("Swap in a new Anthropic key for the one stored for my agents", &["genai_update_anthropic_api_key"]),
    (
        "How many packets is the firewall in front of my load balancer blocking?",
        &["monitoring_get_lb_frontend_firewall_dropped_packets"],
    ),
    ("Download the CA cert so my app can connect to the managed database over TLS", &["databases_get_ca"]),
    (
        "What plans and regions can I choose from for a container registry?",
        &["registries_get_options", "registry_get_options"],
    ),
    ("Remove an old SSL certificate from my DigitalOcean account", &["certificates_delete"]),
    ("Set up a new workspace to organize my AI agents", &["genai_create_workspace"]),
    ("Add a nameserver record to my domain's DNS", &["domains_create_record_domain_record_ns"]),
    (
        "Get credentials so I can docker login to my container registry",
        &["registry_get_docker_credentials", "registries_get_docker_credentials"],
    ),
    // Twilio
    ("Delete a Twilio call queue that no longer has anyone waiting in it", &["delete_queue"]),
    (
        "Stop listening for custom app messages sent during this call",
        &["delete_user_defined_message_subscription"],
    ),
    (
        "Look up one IP allowlist mapping attached to my SIP domain",
        &["fetch_sip_ip_access_control_list_mapping", "fetch_sip_auth_calls_ip_access_control_list_mapping"],
    ),
    ("Which Twilio phone numbers rely on this address?", &["list_dependent_phone_number"]),
];

const PARAPHRASES_OPENAI: Requests = &[
    // OpenAI
    ("Who has been invited to our OpenAI organization but hasn't joined yet?", &["list_invites"]),
    ("Show every run that has been executed for this evaluation", &["get_eval_runs"]),
    ("Look up a saved conversation and its metadata", &["get_conversation"]),
    ("Turn off a few mTLS certificates for just one project", &["deactivate_project_certificates"]),
    ("Pick up an incoming phone call to my realtime voice agent", &["accept_realtime_call"]),
    ("Get rid of a custom role we made for the whole organization", &["delete_role"]),
    ("Upload my own clip and have it altered so the sky turns purple", &["create_video_edit"]),
    ("What files are stored inside this code interpreter container?", &["list_container_files"]),
    ("Take the organization-level role away from this user", &["unassign_user_role"]),
    ("Give a teammate one of our custom roles inside a specific project", &["assign_project_user_role"]),
    ("Get rid of an evaluation I no longer need", &["delete_eval"]),
    ("How many file search tool calls did our organization make this month?", &["usage_file_search_calls"]),
    ("Who owns this model and what are its basic details?", &["retrieve_model"]),
    ("Look up the details of one user group in our organization", &["retrieve_group"]),
    ("Download the finished video file I generated", &["retrieve_video_content"]),
    ("Let another project use my fine-tuned model checkpoint", &["create_fine_tuning_checkpoint_permission"]),
];

// Measured once, as written (at 2546344): 81.2 % by words (15 of 80 missed), 88.8 % with the
// model (9 missed), under the goal of 90 %. Four of the nine misses with the model are
// Spotify's: a user's "podcast" for what the document calls a show, and "is it in my library"
// for its `contains` checks; the others pick a neighbouring table (`query_group_users` for a
// group, `query_workspaces` for its memberships, `update_new_key` for an agent's Anthropic key,
// shared links for Box's pending collaborations). The floors hold the figures. With the
// request's effect counted (2026-12-06), an idea the second draw's misses gave, not this set's:
// 87.5 % by words (10 missed), 92.5 % with the model (6 missed). With the rankings fused by
// their scores (see [`HELD_OUT_MODEL_FLOOR`]): 95.0 % with the model (4 missed).
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 91.2 % by words (7
// missed), 95.0 % with the model.
const PARAPHRASES_FLOOR: f64 = 91.0;
const PARAPHRASES_MODEL_FLOOR: f64 = 95.0;

/// A second draw of paraphrases (seed 20261206, 120 operations drawn uniformly from those no
/// earlier set asks for, in all eight documents), made because 80 requests measure a rate to
/// about ±7 points: written the same way, by a helper who had read neither the ranker nor its
/// tests, and measured once as written. The goal is judged on both draws together (200
/// requests, the set "paraphrases, both draws").
const PARAPHRASES_2_SPOTIFY: Requests = &[
    // Spotify
    ("What albums have I saved in my library?", &["get_users_saved_albums"]),
    ("Find artists similar to Radiohead", &["get_an_artists_related_artists"]),
    (
        "Is 'Project Hail Mary' already in my saved audiobooks?",
        &["check_users_saved_audiobooks", "check_library_contains"],
    ),
    ("List the podcast episodes I've saved for later", &["get_users_saved_episodes"]),
    ("Which countries is Spotify available in?", &["get_available_markets"]),
    ("What speakers and phones can I play Spotify on right now?", &["get_a_users_available_devices"]),
    ("How danceable and energetic is this track?", &["get_audio_features", "get_several_audio_features"]),
    ("Skip to the next song, please", &["skip_users_playback_to_next_track"]),
    ("Resume playing my music where I left off", &["start_a_users_playback"]),
];

const PARAPHRASES_2_ASANA_BOX: Requests = &[
    // Asana
    ("Pull up how much of Dana's time is booked to Apollo (allocation 4412)", &["get_allocation"]),
    ("Which projects and sub-goals feed into our Q4 growth goal?", &["get_goal_relationships"]),
    ("What's the current target and owner of the 'Reduce churn' goal?", &["get_goal"]),
    (
        "List all the progress reports posted on the Website Redesign project",
        &["get_project_statuses_for_project", "get_statuses_for_object"],
    ),
    ("Look up rate 7781 - what hourly cost does it set for Jordan?", &["get_rate"]),
    ("Open status update 90210 and tell me what it says", &["get_status"]),
    ("What fields and followers does our bug report task template set up?", &["get_task_template"]),
    ("Get rid of the budget attached to the Marketing Q2 project", &["delete_budget"]),
    ("Rename the 'In Review' dropdown choice on our Stage field to 'QA'", &["update_enum_option"]),
    ("Change how much the Mobile App project counts toward our revenue goal", &["update_goal_relationship"]),
    ("Take Sam off the collaborators of the hiring goal", &["remove_followers"]),
    ("Rewrite the overview text in the Apollo project's brief", &["update_project_brief"]),
    ("Permanently remove the old Holiday Campaign 2021 project", &["delete_project"]),
    ("Kick Alex and Jamie out of the Finance Audit project", &["remove_members_for_project"]),
    ("Rename our custom 'Contractor' workspace role and adjust what it can do", &["update_role"]),
    ("Approve Maria's submitted timesheet for last week", &["update_timesheet_approval_status"]),
    // Box
    ("What collections do I have in Box, like Favorites?", &["get_collections"]),
    (
        "Show me exemption 3381 that lets a user bypass our allowed-domain rule",
        &["get_collaboration_whitelist_exempt_targets_id"],
    ),
    (
        "Which file versions are currently frozen under legal hold policy 552?",
        &["get_file_version_legal_holds"],
    ),
    ("What user groups exist in our company's Box account?", &["get_groups"]),
    (
        "Who and what has the litigation hold policy 552 been applied to?",
        &["get_legal_hold_policy_assignments"],
    ),
    (
        "What values are filled in for the contract template on file 8123?",
        &["get_files_id_metadata_id_id", "get_files_id_metadata"],
    ),
    ("Show me our 'Geography' taxonomy used for tagging files in Box", &["get_metadata_taxonomies_id_id"]),
    ("Which data-residency zone does storage policy 12 correspond to?", &["get_storage_policies_id"]),
    (
        "Which users have accepted or rejected our terms of service 44?",
        &["get_terms_of_service_user_statuses"],
    ),
    (
        "Which chunks of my big video upload have already been received?",
        &["get_files_upload_sessions_id_parts"],
    ),
    (
        "Set up our very first security labels: Public, Internal, and Confidential",
        &["post_metadata_templates_schema_classifications"],
    ),
    ("Delete the Box group for the disbanded Design Contractors team", &["delete_groups_id"]),
    ("Tag file 4471 with our invoice template: vendor Acme, amount 1200", &["post_files_id_metadata_id_id"]),
    (
        "Make the existing shared link on budget.xlsx expire at month end",
        &["put_files_id_update_shared_link", "put_files_id"],
    ),
    (
        "Turn off public link access to the Q3 Reports folder",
        &["put_folders_id_remove_shared_link", "put_folders_id"],
    ),
    (
        "Switch our storage region assignment over to the EU zone policy",
        &["put_storage_policy_assignments_id"],
    ),
    ("Delete the review task I put on the proposal file", &["delete_tasks_id"]),
    ("Bring back the Archive folder I deleted by mistake yesterday", &["post_folders_id"]),
    ("Remove the departed employee jsmith from our Box enterprise", &["delete_users_id"]),
    ("Change Lisa's job title and phone number in Box", &["put_users_id"]),
];

const PARAPHRASES_2_DIGITALOCEAN_TWILIO: Requests = &[
    // DigitalOcean
    ("Give me a console URL to shell into the web component of deployment 7f3a", &["apps_get_exec"]),
    ("Did the attach operation 889 on my storage volume finish?", &["volume_actions_get"]),
    ("Show the settings of the CDN in front of my static-assets Space", &["cdn_get_endpoint"]),
    ("Show info about the 'orders' database inside my Postgres cluster", &["databases_get"]),
    (
        "What username and password do I use to scrape my database clusters' metrics?",
        &["databases_get_cluster_metrics_credentials"],
    ),
    (
        "Show partition count and config for the 'events' topic on my Kafka cluster",
        &["databases_get_kafka_topic"],
    ),
    ("Which of my Droplets are sharing the same physical host?", &["droplets_list_neighbors_ids"]),
    ("What snapshots have I taken of my web-01 Droplet?", &["droplets_list_snapshots"]),
    ("Which floating IPs do I currently hold?", &["floating_ips_list", "reserved_ips_list"]),
    ("Look up the Anthropic key I registered for my DigitalOcean agents", &["genai_get_anthropic_api_key"]),
    ("What API keys do I have for calling the serverless inference models?", &["genai_list_model_api_keys"]),
    (
        "Which foundation models can I pick from when building an agent?",
        &["genai_list_models", "genai_list_model_catalog"],
    ),
    ("Show the config of the OpenSearch log destination I set up", &["monitoring_get_destination"]),
    ("Which resources are currently forwarding logs, and to where?", &["monitoring_list_sinks"]),
    (
        "Chart how many Droplets my autoscale pool has had running today",
        &["monitoring_get_droplet_autoscale_current_instances"],
    ),
    (
        "Show total disk size metrics for Droplet 123 over the past day",
        &["monitoring_get_droplet_filesystem_size_metrics"],
    ),
    (
        "Are the Droplets behind my load balancer passing health checks lately?",
        &["monitoring_get_lb_droplets_health_checks"],
    ),
    ("Show details of my shared network file system in nyc1", &["nfs_get"]),
    ("Which Droplet does my reserved IPv6 address 2604:a880::1 point to?", &["reserved_ipv6_get"]),
    ("Show me the bucket permissions on Spaces access key DO00ABC123", &["spaces_key_get"]),
    ("What are the settings for the latency alert on my homepage uptime check?", &["uptime_get_alert"]),
    (
        "Get rid of the old March snapshot of my block storage volume",
        &["volume_snapshots_delete_by_id", "snapshots_delete"],
    ),
    ("Change the cache TTL on my CDN endpoint to one hour", &["cdn_update_endpoints"]),
    (
        "Is the name 'acme-images' available for a new container registry?",
        &["registries_validate_name", "registry_validate_name"],
    ),
    (
        "Register an Avro schema for the 'orders-value' subject on my Kafka cluster",
        &["databases_create_kafka_schema"],
    ),
    ("Drop the 'staging' database from my MySQL cluster", &["databases_delete"]),
    ("Cancel the ongoing live migration into my Postgres cluster", &["databases_delete_online_migration"]),
    (
        "Begin migrating my self-hosted Postgres into the managed cluster without downtime",
        &["databases_update_online_migration"],
    ),
    (
        "Point my database cluster's rsyslog log forwarding to a new server address",
        &["databases_update_logsink"],
    ),
    (
        "Increase the retention period on the 'clicks' Kafka topic to 7 days",
        &["databases_update_kafka_topic"],
    ),
    (
        "Switch Droplet 5521 to boot with a different kernel version",
        &["droplet_actions_post_droplet_action_change_kernel"],
    ),
    ("Generate a new access key for my serverless functions namespace", &["functions_access_key_create"]),
    ("Change the nightly cleanup function trigger to run at 3am instead", &["functions_update_trigger"]),
    (
        "Stop the automatic nightly re-indexing schedule on my knowledge base",
        &["genai_delete_scheduled_indexing"],
    ),
    (
        "Bring my fine-tuned Llama weights from Hugging Face into DigitalOcean GenAI",
        &["genai_import_custom_model"],
    ),
    ("Update the description and tags on my imported custom model", &["genai_update_custom_model_metadata"]),
    ("Change the instructions and temperature for my support chatbot agent", &["genai_update_agent"]),
    ("Remove the outdated product docs knowledge base entirely", &["genai_delete_knowledge_base"]),
    (
        "Remove the staging k8s cluster but keep its volumes and load balancers",
        &["kubernetes_delete_cluster"],
    ),
    ("Replace all the worker nodes in pool 'workers' with fresh ones", &["kubernetes_recycle_node_pool"]),
    (
        "Reconfigure my load balancer to route to every Droplet tagged 'web'",
        &["load_balancers_update_assign_droplets_by_tag"],
    ),
    (
        "Make my load balancer also forward HTTPS on port 443 to 8443",
        &["load_balancers_add_forwarding_rules"],
    ),
    ("Remove the log forwarding sink I made for the api Droplets", &["monitoring_delete_sink"]),
    ("Disconnect my NFS share from the default VPC", &["nfs_create_action_nfs_action_detach"]),
    ("Just rename my DigitalOcean project 'Sandbox' to 'Playground'", &["projects_patch", "projects_update"]),
    (
        "Attach my reserved IPv6 address to Droplet web-02",
        &["reserved_ipv6_actions_post_reserved_ipv6_action_assign"],
    ),
    ("Create a new key so my app can read from the backups bucket", &["spaces_key_create"]),
    ("Rename my vector DB instance to 'embeddings-prod'", &["vector_databases_update"]),
    // Twilio
    ("Show me all the subaccounts under my Twilio account", &["list_account"]),
    ("Get the transcription add-on result XR12 for recording RE34", &["fetch_recording_add_on_result"]),
    (
        "Which credential lists authenticate device registrations on my SIP domain?",
        &["list_sip_auth_registrations_credential_list_mapping"],
    ),
    ("Show the IP allowlist AL123 used for my SIP setup", &["fetch_sip_ip_access_control_list"]),
    ("How long has call CA99 been waiting in the support queue?", &["fetch_member"]),
    ("Show me the texts sent and received on my account today", &["list_message"]),
    ("Show the details of error log entry NO555 on my account", &["fetch_notification"]),
    ("Pause the recording on the board meeting conference call", &["update_conference_recording"]),
    ("Remove the Connect app CN77 we no longer use", &["delete_connect_app"]),
    ("Change the voice URL for my SIP domain to our new webhook", &["update_sip_domain"]),
    ("Stop sending call CA42's audio to our SIPREC recorder", &["update_siprec"]),
];

const PARAPHRASES_2_OPENAI: Requests = &[
    // OpenAI
    ("What's the status of assistant run run_abc in thread thread_123?", &["get_run"]),
    ("Show me what happened in step step_9 of that assistant run", &["get_run_step"]),
    ("Print out the whole message history of thread thread_xyz", &["list_messages"]),
    ("Get the info on file cfile_12 inside my code interpreter container", &["retrieve_container_file"]),
    ("Show everything said so far in conversation conv_456", &["list_conversation_items"]),
    ("Which models is the Research project allowed to use?", &["retrieve_project_model_permissions"]),
    ("Check what role alice has in the Chatbot project", &["retrieve_project_user"]),
    ("Fetch the output of response resp_789 I generated earlier", &["get_response", "beta_get_response"]),
    ("What roles exist across our OpenAI organization?", &["list_roles"]),
    ("How many web searches did our org's models make last month?", &["usage_web_search_calls"]),
    ("Erase the consent recording Mark submitted for his cloned voice", &["delete_voice_consent"]),
    ("Rename the 'ML Interns' group to 'ML Fellows'", &["update_group"]),
    ("Give the Data Science group access to the Forecasting project", &["add_project_group"]),
    ("Clear the model restrictions on the Sandbox project", &["delete_project_model_permissions"]),
    (
        "Stop the background response resp_321 that's still generating",
        &["beta_cancel_response", "cancel_response"],
    ),
    ("Take video vid_55 and redo it with a sunset instead of noon", &["create_video_remix"]),
];

// Measured once, as written (at f110ffb): 84.2 % by words (19 of 120 missed), 83.3 % with the
// model (20 missed); both draws together 83.0 % by words (34 of 200 missed) and 85.5 % with the
// model (29 missed), under the goal of 90 %. Nine of the twenty misses with the model have the
// right table's other half in the first three (`update_goals` for "what's the current target of
// this goal", `update_member` for "how long has this call been waiting in the queue"): the
// request reads, the tool found writes. Which gave the idea of counting the request's effect
// (a tool that does the other thing than the request's opening asks counts 0.6, chosen on the
// four development sets): then 90.0 % by words (12 missed), 93.3 % with the model (8 missed);
// both draws 89.0 % (22 of 200 missed) and 93.0 % (14 missed). Both draws had been seen when
// that was written, so these are no held-out figures: the third draw is. With the rankings fused
// by their scores (see [`HELD_OUT_MODEL_FLOOR`]): 94.2 % with the model (7 missed); both draws
// 94.5 % (11 missed).
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 92.5 % by words (9
// missed), 96.7 % with the model (4 missed); both draws 92.0 % (16 missed) and 96.0 % (8 missed).
const PARAPHRASES_2_FLOOR: f64 = 92.0;
const PARAPHRASES_2_MODEL_FLOOR: f64 = 96.0;
const PARAPHRASES_BOTH_FLOOR: f64 = 92.0;
const PARAPHRASES_BOTH_MODEL_FLOOR: f64 = 96.0;

/// A third draw of paraphrases (seed 20261207, 120 operations drawn uniformly from those no
/// earlier set asks for), written the same way as the first two, by a helper who had read
/// neither the ranker, its tests nor the earlier draws, before the request's effect counted in
/// the ranking (chosen on the four development sets), and measured once as written, with it and
/// without: the held-out measure of that change.
const PARAPHRASES_3_SPOTIFY: Requests = &[
    // Spotify
    (
        "Are these three albums already in my library?",
        &["check_users_saved_albums", "check_library_contains"],
    ),
    ("Get info on this audiobook chapter: 0IsXVP0JmcB2adSE338GkK", &["get_a_chapter"]),
    ("What songs have I played recently?", &["get_recently_played"]),
    ("Remove Abbey Road from my saved albums", &["remove_albums_user", "remove_library_items"]),
    ("Jump to 1:30 in the song that's playing", &["seek_to_position_in_currently_playing_track"]),
];

const PARAPHRASES_3_ASANA_BOX: Requests = &[
    // Asana
    ("What files are attached to the 'Vendor contract review' task?", &["get_attachments_for_object"]),
    (
        "Who does portfolio membership 1204558812 belong to, and which portfolio?",
        &["get_portfolio_membership"],
    ),
    ("Which portfolios does Priya have access to in our workspace?", &["get_portfolio_memberships"]),
    ("Pull up activity entry 1209934 from that task's history", &["get_story"]),
    ("List everything in the Website Relaunch project", &["get_tasks_for_project", "get_tasks"]),
    ("what goal periods like FY25 Q3 are set up in our org?", &["get_time_periods"]),
    ("Which workspaces is user 4412 a member of?", &["get_workspace_memberships_for_user"]),
    ("Track the Grow ARR goal as a dollar number with a $2M target", &["create_goal_metric"]),
    ("Give the Engineering team editor access to the Platform Migration project", &["create_membership"]),
    (
        "Add Tom and Lisa to the Leadership Initiatives portfolio",
        &["add_members_for_portfolio", "create_membership"],
    ),
    ("Rename project Website Redesign to Website 2.0 and push its due date to June 30", &["update_project"]),
    ("Make a copy of the onboarding checklist task, including subtasks", &["duplicate_task"]),
    ("Change my logged time on entry 7781 to 90 minutes", &["update_time_tracking_entry"]),
    (
        "Set Jordan's Department field to Finance in our workspace profile",
        &["update_user_for_workspace", "update_user"],
    ),
    ("Stop webhook 55012 from sending us any more events", &["delete_webhook"]),
    ("Kick the contractor alex@vendor.com out of our Asana organization", &["remove_user_for_workspace"]),
    // Box
    (
        "Which security label is on the Legal Contracts folder?",
        &[
            "get_folders_id_metadata_enterprise_security_classification_6_vmv",
            "get_folders_id_metadata_id_id",
        ],
    ),
    ("Show all the devices pinned to Box apps across our company", &["get_enterprises_id_device_pinners"]),
    ("What groups is user 18822 part of?", &["get_users_id_memberships"]),
    ("Show how our Microsoft Teams channels map to Box folders", &["get_integration_mappings_teams"]),
    ("what taxonomies exist in our enterprise metadata namespace?", &["get_metadata_taxonomies_id"]),
    ("Show me the details of ethical wall 4021", &["get_shield_information_barriers_id"]),
    (
        "What skill insights like transcripts and keywords are on file 9981?",
        &["get_files_id_metadata_global_box_skills_cards", "get_files_id_metadata_id_id"],
    ),
    ("Which terms of service agreements do we have set up in Box?", &["get_terms_of_services"]),
    ("Show me the external-user terms of service, ID 3310", &["get_terms_of_services_id"]),
    ("Look up info on file 77120 that's sitting in the trash", &["get_files_id_trash"]),
    ("Show details of the bookmark link I deleted, ID 4410", &["get_web_links_id_trash"]),
    ("download the profile picture of Box user 2291", &["get_users_id_avatar"]),
    ("Fix the typo in my comment 5561 on the budget spreadsheet", &["put_comments_id"]),
    (
        "Let jane@partner.com collaborate despite our allowed-domain restrictions",
        &["post_collaboration_whitelist_exempt_targets"],
    ),
    ("Delete file 88213 from Box", &["delete_files_id"]),
    ("Duplicate the file Q3 report.xlsx into the Archive folder", &["post_files_id_copy"]),
    ("Remove the Old Projects folder and everything inside it", &["delete_folders_id"]),
    ("Make Ravi an admin in the Design group, membership 6652", &["put_group_memberships_id"]),
    ("Get rid of the legal hold policy 'Smith v. Acme 2021'", &["delete_legal_hold_policies_id"]),
    ("Rename the Regions taxonomy's display name to Sales Regions", &["patch_metadata_taxonomies_id_id"]),
    (
        "Set the shared link on folder Marketing Assets to expire next Friday",
        &["put_folders_id_update_shared_link"],
    ),
    ("stop sharing the public link on bookmark 3321", &["put_web_links_id_remove_shared_link"]),
    (
        "Lift segment restriction 901 between the Sales and Research barrier groups",
        &["delete_shield_information_barrier_segment_restrictions_id"],
    ),
    (
        "Remove storage policy assignment 6612 so that user goes back to the default zone",
        &["delete_storage_policy_assignments_id"],
    ),
    ("Create new terms of service that external collaborators must accept", &["post_terms_of_services"]),
];

const PARAPHRASES_3_DIGITALOCEAN_TWILIO: Requests = &[
    // DigitalOcean
    ("What has happened recently on my App Platform app, deploys included?", &["apps_list_events"]),
    ("Break down my DigitalOcean spend by item from January 1 to March 31", &["billing_insights_list"]),
    ("Show the SSL cert with ID 892a56d2 and when it expires", &["certificates_get"]),
    ("which container registries does my team have?", &["registries_list"]),
    (
        "Show the advanced config parameters, like max_connections, of my Postgres cluster",
        &["databases_get_config"],
    ),
    ("What backups are available for my main database cluster?", &["databases_list_backups"]),
    ("How is my web-tier autoscale pool configured?", &["autoscalepools_get"]),
    (
        "Before I delete Droplet 3164444, what volumes and snapshots are attached to it?",
        &["droplets_list_associated_resources"],
    ),
    ("How many tokens has my support chatbot agent consumed this week?", &["genai_get_agent_usage"]),
    ("Show me details of my product-docs knowledge base", &["genai_get_knowledge_base"]),
    ("what datasets have I uploaded for agent evaluations?", &["genai_list_evaluation_datasets"]),
    (
        "Which load balancers and volumes would go away if I delete cluster k8s-prod?",
        &["kubernetes_list_associated_resources"],
    ),
    (
        "What's the CPU load on my MySQL database over the past hour?",
        &["monitoring_get_database_mysql_cpu_usage"],
    ),
    (
        "Average CPU right now across my autoscale pool Droplets?",
        &["monitoring_get_droplet_autoscale_current_cpu_utilization_yml"],
    ),
    (
        "Show p99 HTTP response times for the Droplets behind my load balancer",
        &["monitoring_get_lb_droplets_http_response_time_99p"],
    ),
    ("Show NFS snapshot nfs-snap-2231 details", &["nfs_get_snapshot"]),
    ("List my NFS file shares in nyc1", &["nfs_list"]),
    ("Look up reserved IP 45.55.96.47 and which Droplet it's on", &["reserved_ips_get", "floating_ips_get"]),
    ("How did security scan 7781 go? Show the results", &["security_get_scan"]),
    ("Show me Droplet snapshot 6372321 details", &["snapshots_get"]),
    ("How many resources are tagged 'production'?", &["tags_get"]),
    ("Give me the admin password for my vector database", &["vector_databases_get_credentials"]),
    ("List the backups of vector database vdb-search-01", &["vector_databases_list_backups"]),
    ("Set my Valkey cluster to evict the least recently used keys", &["databases_update_eviction_policy"]),
    (
        "Take a snapshot of every Droplet tagged web-servers",
        &[
            "droplet_actions_post_by_tag_droplet_action_snapshot",
            "droplet_actions_post_by_tag_droplet_action",
        ],
    ),
    (
        "Reinstall Droplet 3164450 from a fresh Ubuntu 24.04 image",
        &["droplet_actions_post_droplet_action_rebuild"],
    ),
    ("Change the name of Droplet 3164450 to api-prod-2", &["droplet_actions_post_droplet_action_rename"]),
    ("Destroy all Droplets tagged staging", &["droplets_destroy_by_tag"]),
    ("Delete my serverless functions namespace fn-test-01", &["functions_delete_namespace"]),
    ("Abort the model evaluation that's currently running", &["genai_cancel_model_evaluation_run"]),
    ("Re-index the help-center knowledge base now", &["genai_create_indexing_job"]),
    ("Get rid of my custom 'tone-check' evaluation metric", &["genai_delete_custom_evaluation_metric"]),
    ("Delete the agent workspace called Experiments", &["genai_delete_workspace"]),
    ("Point my logging destination at the new OpenSearch endpoint", &["monitoring_update_destination"]),
    (
        "Rename the peering between my VPC and the analytics VPC",
        &["vpcs_patch_peerings", "vpc_peerings_patch"],
    ),
    // Twilio
    ("Show the add-on analysis results for call recording RE123", &["list_recording_add_on_result"]),
    ("List all the TwiML apps on my account", &["list_application"]),
    (
        "Which IP allowlists authenticate calls on SIP domain SD123?",
        &["list_sip_auth_calls_ip_access_control_list_mapping", "list_sip_ip_access_control_list_mapping"],
    ),
    ("Look up error notification NO456 from call CA123", &["fetch_call_notification", "fetch_notification"]),
    ("Show the details of my Connect app CN789", &["fetch_connect_app"]),
    ("What SIP credential lists do I have?", &["list_sip_credential_list"]),
    ("Show the configuration of SIP domain SD555", &["fetch_sip_domain"]),
    ("How much usage did my account rack up last month?", &["list_usage_record_last_month"]),
    ("Show details of short code SC321, like its SMS URL", &["fetch_short_code"]),
    ("List the signing keys on my account", &["list_signing_key"]),
    ("What are the settings of usage alert UT901?", &["fetch_usage_trigger"]),
    ("Remove the customer address AD555 from my account", &["delete_address"]),
    ("Change the street on address AD555 to 42 Main St", &["update_address"]),
    ("Set up a new TwiML app that points voice calls to my webhook", &["create_application"]),
    (
        "Allow SIP phones to register on domain SD123 using credential list CL77",
        &["create_sip_auth_registrations_credential_list_mapping"],
    ),
    ("Stop the live transcription on call CA999", &["update_realtime_transcription"]),
    (
        "Delete recording RE654 from yesterday's conference call CF321",
        &["delete_conference_recording", "delete_recording"],
    ),
    ("Change the homepage URL on Connect app CN789", &["update_connect_app"]),
    ("Delete the SIP user 'frontdesk' from credential list CL77", &["delete_sip_credential"]),
    ("Rename the IP allowlist AL100 to Office IPs", &["update_sip_ip_access_control_list"]),
    ("Rename API key SK123 to prod-backend", &["update_key"]),
    ("Delete the image attached to text message MM456", &["delete_media"]),
    ("Delete transcription TR789 from my account", &["delete_transcription"]),
    ("Send a custom event to the Voice SDK app on call CA123", &["create_user_defined_message"]),
    (
        "Listen for messages from the Voice SDK during call CA123",
        &["create_user_defined_message_subscription"],
    ),
];

const PARAPHRASES_3_OPENAI: Requests = &[
    // OpenAI
    ("Show my saved chat completions from gpt-4o", &["list_chat_completions"]),
    ("Pull up the details of eval eval_67abc", &["get_eval"]),
    ("Has the invite invite-abc123 been accepted yet?", &["retrieve_invite"]),
    ("Show the Data Science group's access to project proj_789", &["retrieve_project_group"]),
    ("What permissions does the custom 'Reviewer' role in project proj_42 have?", &["retrieve_project_role"]),
    (
        "Show me the extracted text of file file-xyz in vector store vs_123",
        &["retrieve_vector_store_file_content"],
    ),
    ("Delete Assistants conversation thread thread_abc123", &["delete_thread"]),
    ("Score this model answer against the reference with my string-check grader", &["run_grader"]),
    ("Take user user_55 out of the Contractors group", &["remove_group_user"]),
    ("Upload this zip as a new skill for my project", &["create_skill"]),
    ("Publish an updated version of skill skill_88 from this bundle", &["create_skill_version"]),
    ("Warn me when our organization's monthly spend hits $5,000", &["create_organization_spend_alert"]),
    ("Give user user_abc the Billing Admin role in our organization", &["assign_user_role"]),
    ("Detach file file-123 from vector store vs_456 but keep the file", &["delete_vector_store_file"]),
];

// Measured once, as written: without the request's effect 80.0 % by words (24 of 120 missed)
// and 80.0 % with the model (24 missed); with it 85.0 % (18 missed) and 85.8 % (17 missed),
// under the goal of 90 %. The floors hold the figures. This draw was then part of the pool the
// fusion by scores was chosen on (see [`HELD_OUT_MODEL_FLOOR`]): 90.0 % with the model (12
// missed), no held-out figure.
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 87.5 % by words (15
// missed), 91.7 % with the model (10 missed).
const PARAPHRASES_3_FLOOR: f64 = 87.0;
const PARAPHRASES_3_MODEL_FLOOR: f64 = 91.0;

/// A fourth draw of paraphrases (seed 20261208, 120 operations drawn uniformly from those no
/// earlier set asks for, none whose id another document of its deployment has too), written the
/// same way by a helper who had read neither the ranker, its tests nor the earlier draws, after
/// the request's effect counted in the ranking: the held-out measure of the ranker as it was.
const PARAPHRASES_4_SPOTIFY: Requests = &[
    // Spotify
    ("What albums just came out this week?", &["get_new_releases"]),
    ("Which playlists is Spotify spotlighting right now?", &["get_featured_playlists"]),
    ("Add the Serial podcast to my library", &["save_shows_user", "save_library_items"]),
    // Petstore
    ("which pets are still up for sale?", &["find_pets_by_status"]),
    ("Find me pets tagged fluffy or small", &["find_pets_by_tags"]),
    ("List a new puppy named Rex in the shop", &["add_pet"]),
    ("Cancel my purchase, order number 5", &["delete_order"]),
];

const PARAPHRASES_4_ASANA_BOX: Requests = &[
    // Asana
    ("Who has asked to be let into the Roadmap 2025 project?", &["get_access_requests"]),
    ("show me how the 'Bug report' custom type is set up", &["get_custom_type"]),
    ("Pull up the details of out-of-office record 88120 for Sam", &["get_ooo_entry"]),
    (
        "Which portfolios include the Website Redesign project, and do their members inherit access?",
        &["get_project_portfolio_settings_for_project"],
    ),
    (
        "list every project in our Acme workspace, including archived ones",
        &["get_projects", "get_projects_for_workspace"],
    ),
    ("What color and name does tag 4421 have?", &["get_tag"]),
    (
        "which teams is Priya part of, and is she an admin on any?",
        &["get_team_memberships_for_user", "get_team_memberships"],
    ),
    ("I need a list of all teams in our company organization", &["get_teams_for_workspace"]),
    ("What categories can people log their hours under in our workspace?", &["get_time_tracking_categories"]),
    (
        "Remove the overview write-up from the Apollo launch project, we don't need it",
        &["delete_project_brief"],
    ),
    ("Make Dana and Luis follow the Q4 campaign project so they get updates", &["add_followers_for_project"]),
    (
        "Dana shouldn't get notifications about the Q4 campaign project anymore",
        &["remove_followers_for_project"],
    ),
    ("Set Jordan's billable rate to 150 dollars an hour on the Atlas project", &["create_rate"]),
    ("rename our 'blocked' label to 'on hold' and make it red", &["update_tag"]),
    (
        "Take task 8812 out of the Marketing Backlog project but keep it elsewhere",
        &["remove_project_for_task"],
    ),
    ("Get rid of the 'Internal meetings' category for logging time", &["delete_time_tracking_category"]),
    ("Change the filters on webhook 551 so it only fires when tasks are completed", &["update_webhook"]),
    // Box
    (
        "Is the Contracts folder linked to any Box Hubs or other app items?",
        &["get_folders_id_app_item_associations"],
    ),
    ("Show me the settings of the upload request 9988 we sent to clients", &["get_file_requests_id"]),
    (
        "which Slack channels are connected to Box folders for storing their files?",
        &["get_integration_mappings_slack"],
    ),
    ("Who or what is covered by legal hold assignment 445?", &["get_legal_hold_policy_assignments_id"]),
    ("Does the Q2 board deck have a watermark applied?", &["get_files_id_watermark"]),
    ("How far along is the zip archive I asked you to prepare?", &["get_zip_downloads_id_status"]),
    ("set up a new custom Box AI assistant that answers HR policy questions", &["post_ai_agents"]),
    (
        "Label the Finance folder as Confidential under our security classifications",
        &["post_folders_id_metadata_enterprise_security_classification_6_vm"],
    ),
    ("Let our users collaborate with people from partnerco.com", &["post_collaboration_whitelist_entries"]),
    ("Cancel and delete the tax-documents upload request we sent out", &["delete_file_requests_id"]),
    (
        "Point our Microsoft Teams channel link at a different Box folder",
        &["put_integration_mappings_teams_id"],
    ),
    ("Strip the 'Project Info' template values off the Legal folder", &["delete_folders_id_metadata_id_id"]),
    ("I want a new hierarchical taxonomy called Regions for tagging content", &["post_metadata_taxonomies"]),
    ("drop the bottom City level from our Regions taxonomy", &["post_metadata_taxonomies_id_id_levels_trim"]),
    (
        "Define a new invoice template with vendor, amount and due date fields",
        &["post_metadata_templates_schema"],
    ),
    ("Please remove the seven-year retention policy entirely", &["delete_retention_policies_id"]),
    (
        "Set up an ethical wall in our enterprise to keep deal teams apart",
        &["post_shield_information_barriers"],
    ),
    (
        "Fix the transcript on the skill card attached to video file 771",
        &["put_files_id_metadata_global_box_skills_cards"],
    ),
    ("Push the due date of the review task on the contract file to Friday", &["put_tasks_id"]),
    (
        "Record that new hire Maria has accepted our terms of service",
        &["post_terms_of_service_user_statuses"],
    ),
    ("Notify my endpoint whenever a file gets uploaded to the Inbox folder", &["post_webhooks"]),
    ("kick off the contract approval Relay workflow on these two files", &["post_workflows_id_start"]),
];

const PARAPHRASES_4_DIGITALOCEAN_TWILIO: Requests = &[
    // DigitalOcean
    ("What marketplace add-ons have I provisioned on my account?", &["addons_list"]),
    ("Show me details of event 7f3a on my web app, like what triggered it", &["apps_get_event"]),
    ("how much CPU and memory does the apps-s-1vcpu-1gb size give me?", &["apps_get_instance_size"]),
    ("Download last month's invoice as a spreadsheet file", &["invoices_get_csv_by_uuid"]),
    ("Give me the size, region and attachments of block storage volume 506f78a4", &["volumes_get"]),
    (
        "Is a cleanup of unused layers running on my container registry right now?",
        &["registries_get_garbage_collection", "registry_get_garbage_collection"],
    ),
    ("Show the role and password for the app_rw login on my Postgres cluster", &["databases_get_user"]),
    ("what topics exist in my managed Kafka cluster?", &["databases_list_kafka_topics"]),
    ("Who has login accounts on my managed MySQL database?", &["databases_list_users"]),
    ("Show me the backup schedule of every Droplet I have", &["droplets_list_backup_policies"]),
    (
        "history of everything done to floating IP 45.55.96.47",
        &["floating_ips_action_list", "reserved_ips_actions_list"],
    ),
    (
        "What scheduled triggers are configured in my serverless functions namespace?",
        &["functions_list_triggers"],
    ),
    ("How did model evaluation run 3c1e turn out?", &["genai_get_model_evaluation_run"]),
    ("Show all the AI agents I've built on DigitalOcean", &["genai_list_agents"]),
    ("What operations have been performed on my custom image 7555620?", &["image_actions_list"]),
    ("Where are my logs being forwarded to? List the configured targets", &["monitoring_list_destinations"]),
    (
        "CPU usage of my App Platform app over the last 24 hours",
        &["monitoring_get_app_cpupercentage_metrics"],
    ),
    (
        "Graph the 15-minute load average for Droplet 1234 over the past week",
        &["monitoring_get_droplet_load15_metrics"],
    ),
    (
        "How many 2xx vs 5xx responses are the backend Droplets behind my load balancer returning?",
        &["monitoring_get_lb_droplets_http_responses"],
    ),
    (
        "Median HTTP session time for the Droplets behind load balancer web-lb",
        &["monitoring_get_lb_droplets_http_session_duration_50p"],
    ),
    (
        "What's the max TLS connection cap on my load balancer's front end over time?",
        &["monitoring_get_lb_frontend_tls_connections_limit"],
    ),
    ("what resources are sitting in my default project?", &["projects_list_resources_default"]),
    ("Show me the past security posture scans run on my account", &["security_list_scans"]),
    ("List all the peering links between my private networks", &["vpc_peerings_list"]),
    (
        "Start advertising my bring-your-own IP block 203.0.113.0/24 to the internet",
        &["byoip_prefixes_patch"],
    ),
    (
        "Remove the v1.2 tag from the web-app image in my container registry",
        &["registries_delete_repository_tag", "registry_delete_repository_tag"],
    ),
    (
        "Upgrade my container registry plan to the professional tier",
        &["registries_update_subscription", "registry_update_subscription"],
    ),
    (
        "switch my Docker image registry down to the basic plan",
        &["registry_update_subscription", "registries_update_subscription"],
    ),
    ("Permanently delete the old staging Postgres cluster", &["databases_destroy_cluster"]),
    (
        "Add db.example.com as a custom hostname on my database cluster's TLS certificate",
        &["databases_update_do_settings"],
    ),
    ("Only allow my web Droplets to connect to the orders database", &["databases_update_firewall_rules"]),
    (
        "Set BACKWARD compatibility for the orders-value subject in my Kafka schema registry",
        &["databases_update_kafka_schema_subject_config"],
    ),
    ("Move my database cluster over to the Frankfurt fra1 region", &["databases_update_region"]),
    (
        "Add a TXT record on example.com for Google site verification",
        &["domains_create_record_domain_record_txt"],
    ),
    (
        "Tear down my autoscale pool along with all the Droplets it created",
        &["autoscalepools_delete_dangerous"],
    ),
    ("Stop the knowledge base indexing that's currently running", &["genai_cancel_indexing_job"]),
    (
        "I need my knowledge base re-indexed automatically every night at 2am",
        &["genai_create_scheduled_indexing"],
    ),
    ("delete the model router I set up for cheap-vs-smart routing", &["genai_delete_model_router"]),
    (
        "Rename my AI agent workspace to 'Support Bots' and update its description",
        &["genai_update_workspace"],
    ),
    (
        "Let my support agent call a serverless function to look up order status",
        &["genai_attach_agent_function"],
    ),
    ("Disconnect the FAQ knowledge base from my support agent", &["genai_detach_knowledge_base"]),
    (
        "Hand over my snapshot image to our other team's account",
        &["images_post_account_transfer_create_transfer_to_team"],
    ),
    ("Purge the CDN cache on my global load balancer", &["load_balancers_delete_cache"]),
    ("Create a new project called Staging to group my resources", &["projects_create"]),
    ("Reserve a new static IPv6 address in the nyc3 region", &["reserved_ipv6_create"]),
    (
        "Detach my reserved IPv6 address from the Droplet it's on",
        &["reserved_ipv6_actions_post_reserved_ipv6_action_unassign"],
    ),
    ("Mark the open-port finding on Droplet web-01 as a false positive", &["security_create_scan_rule"]),
    ("Turn this paragraph into a vector using one of the serverless models", &["inference_create_embedding"]),
    ("delete the 'legacy' tag from my account", &["tags_delete"]),
    // Twilio
    ("Show all the conference calls held on my account today", &["list_conference"]),
    (
        "Get the actual transcript data the add-on produced for recording RE123",
        &["fetch_recording_add_on_result_payload_data"],
    ),
    ("How is my number +1 415 555 0100 configured?", &["fetch_incoming_phone_number"]),
    ("Find IoT SIM-style numbers I could buy in Sweden", &["list_available_phone_number_machine_to_machine"]),
    ("Show the details of one IP entry in my SIP allow list", &["fetch_sip_ip_address"]),
    (
        "Stop using the office IP list to authenticate calls on my SIP domain",
        &[
            "delete_sip_auth_calls_ip_access_control_list_mapping",
            "delete_sip_ip_access_control_list_mapping",
        ],
    ),
    (
        "Unlink the staff credential list used for phone registration on my SIP domain",
        &["delete_sip_auth_registrations_credential_list_mapping"],
    ),
    ("delete the SIP domain acme.sip.twilio.com", &["delete_sip_domain"]),
    ("Rename my signing key SK123 to 'backend-prod'", &["update_signing_key"]),
    ("Change the address on one entry in my SIP IP allow list to 203.0.113.5", &["update_sip_ip_address"]),
    ("Start forking the audio of this live call to our SIPREC recorder", &["create_siprec"]),
];

const PARAPHRASES_4_OPENAI: Requests = &[
    // OpenAI
    ("What's the status of my code sandbox cntr_123?", &["retrieve_container"]),
    ("How long is data kept for our Atlas project?", &["retrieve_project_data_retention"]),
    ("What's the hard spending cap on our OpenAI organization?", &["getorganizationspendlimit"]),
    ("Check the role the data-science group holds in project Atlas", &["retrieve_project_group_role"]),
    ("Download the packaged files of my pdf-parser skill", &["get_skill_content"]),
    ("which versions of the pdf-parser skill have been published?", &["list_skill_versions"]),
    ("Show me the details of the org-level role Alice was given", &["retrieve_user_role"]),
    ("Rename certificate cert_abc to 'prod mTLS'", &["modify_certificate"]),
    ("Spin up a fresh sandbox container for running code", &["create_container"]),
    ("Set up a test suite to grade how well models answer our support questions", &["create_eval"]),
    ("Revoke the organization admin key key_xyz", &["admin_api_keys_delete"]),
    (
        "I need a short-lived token so my browser app can use realtime voice",
        &["create_realtime_session", "create_realtime_client_secret"],
    ),
    ("Raise the threshold on our org budget alert to 5000 dollars", &["update_organization_spend_alert"]),
    (
        "Add these five uploaded files to my knowledge vector store in one go",
        &["create_vector_store_file_batch_file_ids", "create_vector_store_file_batch_files"],
    ),
];

// Measured once, as written: 86.7 % by words (16 of 120 missed), 89.2 % with the model (13
// missed), one request under the goal of 90 %. Measured at the same time, a variant chosen on
// the development sets and the first three draws (words with two digits or more, ids, left out
// of a request: 443 of their 493 requests with the model against 441) found one fewer here
// (85.8 % / 88.3 %), and did not land. The floors hold the figures. With the rankings fused by
// their scores (see [`HELD_OUT_MODEL_FLOOR`], whose weight was chosen on the pool, not here):
// 91.7 % with the model (10 missed). Its figures for the weights tried had been printed with
// the pool's, so the fifth draw is the clean measure.
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 87.5 % by words (15
// missed), 92.5 % with the model (9 missed).
const PARAPHRASES_4_FLOOR: f64 = 87.0;
const PARAPHRASES_4_MODEL_FLOOR: f64 = 92.0;

/// A fifth draw of paraphrases (seed 20261209, 120 operations drawn uniformly from those no
/// earlier set asks for, none whose id another document of its deployment has too), written the
/// same way by a helper who had read neither the ranker, its tests nor the earlier draws.
const PARAPHRASES_5_SPOTIFY: Requests = &[
    ("What songs are on the album with Spotify id 4aawyAB9vmqN3uQ7FjRGTy?", &["get_an_albums_tracks"]),
    (
        "Tell me about the artist with Spotify id 0TnOYISbd1XYRBk9myaseg - genres, followers, popularity.",
        &["get_an_artist"],
    ),
    (
        "Have I already saved podcast episodes 77o6BIVlYM3msb4MMIL1jH and 0Q86acNRm6V9GYx55SXKwf to my library?",
        &["check_users_saved_episodes", "check_library_contains"],
    ),
    ("Give me the info for song 11dFghVXANMlKmJXsNCbNl on Spotify.", &["get_track"]),
    ("Queue up spotify:track:4iV5W9uYEdYUVa79Axb7Rh to play next.", &["add_to_queue"]),
    ("Put the current song on loop.", &["set_repeat_mode_on_users_playback"]),
];

const PARAPHRASES_5_ASANA_BOX: Requests = &[
    (
        "Who has access to the file 'Q3_budget.xlsx' (file id 1123581321) in Box? List everyone it's been shared with and their roles.",
        &["get_files_id_collaborations"],
    ),
    (
        "For legal hold assignment 255473, show me which older file versions are being preserved under it.",
        &["get_legal_hold_policy_assignments_id_file_versions_on_hold"],
    ),
    (
        "Pull up the Box metadata template with id f7a9891f-3e2a-4b17-9d6c-2e1fba0b4b2c so I can see its fields.",
        &["get_metadata_templates_id"],
    ),
    (
        "Can you fetch the status update with gid 1204938812345 from our Asana project so I can read what was posted?",
        &["get_project_status"],
    ),
    (
        "List the billing rates we've set up in Asana for workspace 1199887766 so I can review people's hourly costs.",
        &["get_rates"],
    ),
    (
        "I have this Box shared link https://app.box.com/s/8x2kfq93lm - which app item does it point to?",
        &["get_shared_items_app_items"],
    ),
    (
        "Show me all the reports generated for our Box information barrier 11446498.",
        &["get_shield_information_barrier_reports"],
    ),
    ("What tags exist in my Asana workspace 1201122334455?", &["get_tags", "get_tags_for_workspace"]),
    (
        "Give me every Asana task labeled with the 'urgent-bug' tag (gid 1203344556677).",
        &["get_tasks_for_tag"],
    ),
    (
        "Which Asana teams is Maria (user gid 1187654321) a member of in organization 1200000001?",
        &["get_teams_for_user"],
    ),
    (
        "Quick lookup in Asana workspace 1201122334455: find projects whose names start with 'Mark' as I type.",
        &["typeahead_for_workspace"],
    ),
    (
        "Look up user 1187654321 in our Asana organization 1200000001 and show me their profile there.",
        &["get_user_for_workspace", "get_user"],
    ),
    ("Set up a new Asana budget for project 1205566778899 tracking billable hours.", &["create_budget"]),
    (
        "Add a new security classification label called 'Restricted - Legal' with a red color to our Box enterprise.",
        &["put_metadata_templates_enterprise_security_classification_6_vmvo"],
    ),
    (
        "Stop cascading metadata down folder 'Contracts' in Box - delete cascade policy 6fd4ff89-8fc1-42cf-8b29-1890dedd26d7.",
        &["delete_metadata_cascade_policies_id"],
    ),
    (
        "Attach the enterprise 'projectInfo' metadata template to Box folder 4815162342 with client set to 'Acme' and status 'Active'.",
        &["post_folders_id_metadata_id_id"],
    ),
    (
        "In the Box taxonomy 'geography' under namespace enterprise_123456, get rid of the node 14d3d433-c77f-49c5-b146-9dea370f6e32 for 'Atlantis'.",
        &["delete_metadata_taxonomies_id_id_nodes_id"],
    ),
    (
        "Append a new 'City' level at the bottom of the 'geography' metadata taxonomy in namespace enterprise_123456 in Box.",
        &["post_metadata_taxonomies_id_id_levels_append"],
    ),
    (
        "Permanently delete the enterprise metadata template 'oldInvoiceData' from our Box account.",
        &["delete_metadata_templates_id_id_schema"],
    ),
    ("Kick off a full data export of our Asana organization 1200000001.", &["create_organization_export"]),
    (
        "Put project 1206677889900 into my Asana portfolio 'Q4 Launches' (gid 1207788990011).",
        &["add_item_for_portfolio"],
    ),
    ("Get rid of the Asana portfolio 1207788990011, we don't use it anymore.", &["delete_portfolio"]),
    (
        "Take the 'Budget Owner' custom field (gid 1208899001122) off Asana portfolio 1207788990011.",
        &["remove_custom_field_setting_for_portfolio"],
    ),
    (
        "Delete the Asana billing rate 1209900112233 that was set up for the contractor by mistake.",
        &["delete_rate"],
    ),
    (
        "Move Asana task 1201234567890 into the 'In Review' section (gid 1209876543210) of the board.",
        &["add_task_for_section"],
    ),
    (
        "Enable the Box information barrier 1910967 by switching its status to pending.",
        &["post_shield_information_barriers_change_status"],
    ),
    (
        "Wipe all the Box Skills cards (transcripts, keywords) attached to file 3141592653.",
        &["delete_files_id_metadata_global_box_skills_cards"],
    ),
    (
        "Post a comment on Asana goal 1202468013579 saying 'On track, revenue up 12% this month'.",
        &["create_story_for_goal"],
    ),
    (
        "I accidentally trashed the Box bookmark with id 9988776655, can you bring it back?",
        &["post_web_links_id"],
    ),
];

const PARAPHRASES_5_DIGITALOCEAN_TWILIO: Requests = &[
    (
        "What configuration metadata does the DigitalOcean add-on 'mailgun' expect when I provision it?",
        &["addons_get_app_metadata"],
    ),
    (
        "Show me the deployment history for my DigitalOcean App Platform app 4f6c71e2-1e90-4762-9fee-6cc4a0a9f2cf.",
        &["apps_list_deployments"],
    ),
    (
        "On Twilio SIP domain SD27f0288630a668bdfbf177f8e22f5ccc, show the details of the call-authentication credential list mapping CL7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d.",
        &["fetch_sip_auth_calls_credential_list_mapping"],
    ),
    (
        "For Twilio SIP domain SD27f0288630a668bdfbf177f8e22f5ccc, get the registration-auth credential list mapping CL1122334455667788990011223344aabb.",
        &["fetch_sip_auth_registrations_credential_list_mapping"],
    ),
    ("Which countries can I buy Twilio phone numbers in?", &["list_available_phone_number_country"]),
    (
        "Give me the summary for my DigitalOcean invoice 22737513-0ea7-4206-8ceb-98a575af7681 - totals, taxes, that kind of thing.",
        &["invoices_get_summary_by_uuid"],
    ),
    (
        "Show me the details of my bring-your-own-IP prefix f47ac10b-58cc-4372-a567-0e02b2c3d479 on DigitalOcean.",
        &["byoip_prefixes_get"],
    ),
    ("What SSL certificates do I have uploaded to my DigitalOcean account?", &["certificates_list"]),
    (
        "Look up credential CR0f1e2d3c4b5a69788796a5b4c3d2e1f0 in Twilio SIP credential list CL7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d.",
        &["fetch_sip_credential"],
    ),
    (
        "Fetch version 3 of the 'orders-value' schema from the schema registry on my Kafka cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30.",
        &["databases_get_kafka_schema_version"],
    ),
    (
        "How's the online migration going into my DigitalOcean database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30?",
        &["databases_get_migration_status"],
    ),
    ("Show me every managed database cluster I have on DigitalOcean.", &["databases_list_clusters"]),
    (
        "Pull up the event log for DigitalOcean database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 - I want to see recent maintenance and resizes.",
        &["databases_list_events_logs"],
    ),
    (
        "What indexes exist on my OpenSearch cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30?",
        &["databases_list_opeasearch_indexes"],
    ),
    ("Show me DNS record 3352896 on my domain example.com in DigitalOcean.", &["domains_get_record"]),
    (
        "What has been done to droplet 3164444 lately? List its action history (reboots, resizes, etc.).",
        &["droplet_actions_list"],
    ),
    ("Which backups are available for my droplet 3164444?", &["droplets_list_backups"]),
    ("List all the cloud firewalls on my DigitalOcean account.", &["firewalls_list"]),
    (
        "Get the details of the 'nightly-cleanup' trigger in my DigitalOcean Functions namespace fn-b90faf52-2b42-49c2-9792-75edfbb6f397.",
        &["functions_get_trigger"],
    ),
    (
        "Show me the OpenAI key I registered in DigitalOcean's GenAI platform with uuid 8f0b2c7e-71d4-4a0e-9c1f-2b3a4c5d6e7f.",
        &["genai_get_openai_api_key"],
    ),
    (
        "Which API keys have been issued for my GenAI agent 1b418231-b7d6-11ef-bf8f-4e013e2ddde4?",
        &["genai_list_agent_api_keys"],
    ),
    (
        "Show all the evaluation runs that have been executed against test case 5c3d2e1f-0a9b-4c8d-8e7f-6a5b4c3d2e1f on DigitalOcean GenAI.",
        &["genai_list_evaluation_runs_by_test_case"],
    ),
    (
        "Can you list my model evaluation runs on the DigitalOcean GenAI platform?",
        &["genai_list_model_evaluation_runs"],
    ),
    (
        "I need the kubeconfig credentials for my DOKS cluster bd5f5959-5e1e-4205-a714-a914373942af.",
        &["kubernetes_get_credentials"],
    ),
    (
        "Show me the 'workers-large' node pool cccb6f4b-9e29-4c1d-9cd3-0e0a6a45a8d2 in Kubernetes cluster bd5f5959-5e1e-4205-a714-a914373942af.",
        &["kubernetes_get_node_pool"],
    ),
    ("What Kubernetes clusters am I running on DigitalOcean?", &["kubernetes_list_clusters"]),
    (
        "Which regions, node sizes and Kubernetes versions can I pick from when creating a DOKS cluster?",
        &["kubernetes_list_options"],
    ),
    (
        "Show me query latency per schema for my MySQL database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 over the last 6 hours.",
        &["monitoring_get_database_mysql_schema_latency"],
    ),
    (
        "What's the average CPU target my droplet autoscale pool 0d3db13e-a604-4944-9827-7ec2642d32ac is aiming for over the past day?",
        &["monitoring_get_droplet_autoscale_target_cpu_utilization"],
    ),
    (
        "Graph the 1-minute load average for droplet 3164444 from yesterday 09:00 to 17:00.",
        &["monitoring_get_droplet_load1_metrics"],
    ),
    (
        "What's the maximum frontend connection cap on my load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 over the last week?",
        &["monitoring_get_lb_frontend_connections_limit"],
    ),
    (
        "How many bytes has the firewall on load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 been dropping at the frontend today?",
        &["monitoring_get_lb_frontend_firewall_dropped_bytes"],
    ),
    (
        "Show UDP traffic throughput on the frontend of load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 for the last 24 hours.",
        &["monitoring_get_lb_frontend_network_throughput_udp"],
    ),
    (
        "How many TLS connections per second is load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 handling on its frontend right now?",
        &["monitoring_get_lb_frontend_tls_connections_current"],
    ),
    (
        "List the access points configured on NFS share 0a1e3f6a-52d4-4b7c-9a11-ba12f3a4e5c6.",
        &["nfs_list_access_points"],
    ),
    (
        "What's the current BGP auth key on my partner interconnect attachment 5a4981aa-9653-4bd1-bef5-d6bff52042e4?",
        &["partner_attachments_get_bgp_auth_key"],
    ),
    (
        "I need the service key for partner network connect attachment 5a4981aa-9653-4bd1-bef5-d6bff52042e4 so I can give it to our provider.",
        &["partner_attachments_get_service_key"],
    ),
    (
        "Which remote routes are advertised on partner attachment 5a4981aa-9653-4bd1-bef5-d6bff52042e4?",
        &["partner_attachments_list_remote_routes"],
    ),
    (
        "How many callers are waiting in my Twilio queue QU5ef8732a3c49700934481addd5ce1659 and what's its max size?",
        &["fetch_queue"],
    ),
    ("Show me all the call queues on my Twilio account.", &["list_queue"]),
    (
        "Which models can I call through DigitalOcean's serverless inference endpoint?",
        &["inference_list_models"],
    ),
    (
        "Find me some shared-cost phone numbers I could buy in Belgium on Twilio.",
        &["list_available_phone_number_shared_cost"],
    ),
    (
        "Show me the details of my DigitalOcean vector database 7c1e2a3b-4d5e-6f70-8192-a3b4c5d6e7f8.",
        &["vector_databases_get"],
    ),
    ("List the vector databases I have on DigitalOcean.", &["vector_databases_list"]),
    (
        "Stop the in-progress deployment 3aa4d20e-5527-4c22-8a6d-7f7e8d8a6b1b of my app 4f6c71e2-1e90-4762-9fee-6cc4a0a9f2cf, I pushed the wrong commit.",
        &["apps_cancel_deployment"],
    ),
    (
        "Attach block storage volume 7724db7c-e098-11e5-b522-000f53304e51 to droplet 11612190 in nyc1.",
        &["volume_actions_post_by_id_op_971"],
    ),
    (
        "Link Twilio credential list CL7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d to my SIP domain SD27f0288630a668bdfbf177f8e22f5ccc.",
        &["create_sip_credential_list_mapping", "create_sip_auth_calls_credential_list_mapping"],
    ),
    (
        "Remove the 'reporting_ro' user from my DigitalOcean database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30.",
        &["databases_delete_user"],
    ),
    (
        "Tear down my dedicated inference endpoint 2f3e4d5c-6b7a-4981-a2b3-c4d5e6f7a8b9 on DigitalOcean, it's costing too much.",
        &["dedicated_inferences_delete"],
    ),
    (
        "Add an SRV record on example.com for _sip._tcp pointing to sip.example.com port 5060, priority 10, weight 5.",
        &["domains_create_record_domain_record_srv"],
    ),
    (
        "Turn on automatic backups for droplet 3164444, weekly on Sundays.",
        &["droplet_actions_post_droplet_action_enable_backups"],
    ),
    (
        "The deletion of droplet 3164444 and its volumes and snapshots failed partway - please try it again.",
        &["droplets_destroy_retry_with_associated_resources"],
    ),
    ("Release the floating IP 45.55.96.47, I don't need it anymore.", &["floating_ips_delete"]),
    (
        "Delete the model evaluation preset 9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d from my GenAI account.",
        &["genai_delete_model_evaluation_preset"],
    ),
    (
        "Change the function route 'get_weather' (uuid 6e5d4c3b-2a19-4f8e-9d7c-6b5a4f3e2d1c) on agent 1b418231-b7d6-11ef-bf8f-4e013e2ddde4 to point at my new faas function.",
        &["genai_update_agent_function"],
    ),
    (
        "Convert the backup image 7938269 of my droplet into a regular snapshot.",
        &["image_actions_post_image_action_base"],
    ),
    (
        "Import a custom Ubuntu image into DigitalOcean from https://example.com/images/ubuntu-22.04-custom.qcow2 into region nyc3.",
        &["images_create_custom"],
    ),
    (
        "Reject the incoming image transfer for image 7938291, I didn't ask for it.",
        &["images_post_account_transfer_decline"],
    ),
    ("Rename my snapshot image 7938291 to 'web-base-2024' and update its description.", &["images_update"]),
    (
        "Hook my DigitalOcean container registry up to Kubernetes clusters bd5f5959-5e1e-4205-a714-a914373942af and 3a1b2c4d-5e6f-4789-a0b1-c2d3e4f5a6b7 so they can pull images.",
        &["kubernetes_add_registry", "kubernetes_add_registries"],
    ),
    (
        "Run the clusterlint diagnostics on my DOKS cluster bd5f5959-5e1e-4205-a714-a914373942af.",
        &["kubernetes_run_cluster_lint"],
    ),
    (
        "Update load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 config: keep name 'web-lb' in nyc3 with the HTTP 80 forwarding rule, and set its backends to droplets 3164444 and 3164445.",
        &["load_balancers_update_assign_droplets_by_id"],
    ),
    ("Delete NFS access point 8b7c6d5e-4f3a-4b2c-9d1e-0f9a8b7c6d5e.", &["nfs_delete_access_point"]),
    (
        "Grow my NFS share 0a1e3f6a-52d4-4b7c-9a11-ba12f3a4e5c6 to 200 GiB.",
        &["nfs_create_action_nfs_action_resize"],
    ),
    (
        "Set up a new partner interconnect to Megaport in nyc with 1 Gbps bandwidth, connected to my VPC 5a4981aa-9653-4bd1-bef5-d6bff52042e4.",
        &["partner_attachments_create"],
    ),
    (
        "Delete transcription TR8c61027b709ffb038236612dc5af8723 from Twilio recording RE557ce644e5ab84fa21cc21112e22c485.",
        &["delete_recording_transcription"],
    ),
    (
        "Point my Twilio short code SC6b20cb705c1e8f00210049b20b70fce2 at https://example.com/sms-handler for incoming messages.",
        &["update_short_code"],
    ),
    ("Apply the 'production' tag to droplets 3164444 and 3164445.", &["tags_assign_resources"]),
    (
        "Spin up a new vector database on DigitalOcean called 'support-embeddings' in tor1.",
        &["vector_databases_create"],
    ),
    (
        "Replace the tags on vector database 7c1e2a3b-4d5e-6f70-8192-a3b4c5d6e7f8 with 'rag' and 'staging'.",
        &["vector_databases_update_tags"],
    ),
];

const PARAPHRASES_5_OPENAI: Requests = &[
    ("What assistants have I created in my OpenAI account?", &["list_assistants"]),
    ("Pull up the voice consent recording cons_68a2f1c3 that we stored with OpenAI.", &["get_voice_consent"]),
    (
        "Show me output item outputitem_67e5796c28e081909917bf79f6e6214d from run evalrun_67e57965b480819094274e3a32235e4c of eval eval_67e579652b548190aaa83ada4b125f47.",
        &["get_eval_run_output_item"],
    ),
    ("Download the zip bundle for version 3 of skill skill_abc123.", &["get_skill_version_content"]),
    ("Which videos have I generated recently in this OpenAI project?", &["list_videos"]),
    ("Stop OpenAI batch job batch_6781a2f9c3d8 that's running right now.", &["cancel_batch"]),
    ("End the ChatKit session cksess_123 that is still active.", &["cancel_chat_session_method"]),
    (
        "Using gpt-3.5-turbo-instruct, complete the prompt 'Once upon a time in Lisbon' with up to 50 tokens (legacy completions, not chat).",
        &["create_completion"],
    ),
    (
        "Delete the OpenAI conversation conv_689667905b048191b4740501625afd940c7533ace33a2dab.",
        &["delete_conversation"],
    ),
    (
        "Remove run evalrun_67e57965b480819094274e3a32235e4c from eval eval_67e579652b548190aaa83ada4b125f47.",
        &["delete_eval_run"],
    ),
    ("Unpause my fine-tuning job ftjob-abc123 so it keeps training.", &["resume_fine_tuning_job"]),
    (
        "Create a service account named 'ci-bot' in OpenAI project proj_abc123.",
        &["create_project_service_account"],
    ),
    (
        "Change the role of service account svc_acct_abc in project proj_abc123 to owner.",
        &["update_project_service_account"],
    ),
    (
        "Generate an ephemeral client key for a realtime English-to-Spanish translation session I want to open from the browser.",
        &["create_realtime_translation_client_secret"],
    ),
    ("Delete version 2 of skill skill_abc123.", &["delete_skill_version"]),
];

// Measured once, as written, with the ranker as it was and with the rankings fused by their
// scores (see [`HELD_OUT_MODEL_FLOOR`]; weight chosen on the pool before this draw was written):
// 94.2 % by words (7 of 120 missed) either way; with the model 92.5 % (9 missed) before, 91.7 %
// (10 missed) with the fusion by scores. The floors hold the figures.
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 95.8 % by words (5
// missed), 93.3 % with the model (8 missed).
const PARAPHRASES_5_FLOOR: f64 = 95.0;
const PARAPHRASES_5_MODEL_FLOOR: f64 = 93.0;

/// A sixth draw of paraphrases (seed 20261210, 120 operations drawn uniformly from those no
/// earlier set asks for, none whose id another document of its deployment has too), written the
/// same way by a helper who had read neither the ranker, its tests nor the earlier draws, after
/// the fusion by scores landed: the held-out measure of the ranker as it was.
const PARAPHRASES_6_SPOTIFY: Requests = &[
    ("Look up the pet store customer account for username 'jdoe42'.", &["get_user_by_name"]),
    (
        "Stick 'Blinding Lights' (spotify:track:0VjIjW4GlUZAMYd2vXMi3b) onto my Spotify playlist 3cEYpjA9oz9GiPac4AsH4n.",
        &["add_tracks_to_playlist", "add_items_to_playlist"],
    ),
    (
        "Make me a new private Spotify playlist called 'Road Trip 2025'.",
        &["create_playlist", "create_playlist_for_user"],
    ),
    (
        "Register a new pet store account for username 'mlopez' with email maria@example.com.",
        &["create_user"],
    ),
    (
        "Sign up these three pet store customers in one go: alice, bob and carol, with their emails.",
        &["create_users_with_array_input", "create_users_with_list_input"],
    ),
];

const PARAPHRASES_6_ASANA_BOX: Requests = &[
    (
        "Can you pull up the setup of our Box AI Studio agent 1234567 so I can see which model and instructions it uses?",
        &["get_ai_agents_id"],
    ),
    (
        "Show me the details for the Asana attachment 1209876543210123, I need its file name and download link.",
        &["get_attachment"],
    ),
    (
        "Who has been invited to the Box folder 'Q3 Contracts' (folder id 245981734), and with what access level?",
        &["get_folders_id_collaborations"],
    ),
    (
        "Look up Box collection 926489 and tell me its name and what kind of collection it is.",
        &["get_collections_id"],
    ),
    ("What's sitting in my Box Favorites collection (id 926489) right now?", &["get_collections_id_items"]),
    (
        "For Box retention record 3424234, which policy is keeping that file version around and when does it expire?",
        &["get_file_version_retentions_id"],
    ),
    (
        "Which metadata templates are set to automatically flow down to everything inside Box folder 318842210?",
        &["get_metadata_cascade_policies"],
    ),
    (
        "In our enterprise Box template 'productInfo', what values can people pick for the taxonomy-backed field 'region'?",
        &["get_metadata_templates_id_id_fields_id_options"],
    ),
    (
        "Show me every custom metadata template our company has defined in Box.",
        &["get_metadata_templates_enterprise"],
    ),
    (
        "Pull up Asana portfolio 1201234567890123 for me, I want to see its owner, color and due date.",
        &["get_portfolio"],
    ),
    (
        "Who belongs to the 'Investment Banking' ethical wall segment (segment id 4573820) in our Box enterprise?",
        &["get_shield_information_barrier_segment_members"],
    ),
    ("What's the comment and activity history on Asana task 1204455667788990?", &["get_stories_for_task"]),
    (
        "In Box, who is task assignment 11446498 given to, and have they finished it yet?",
        &["get_task_assignments_id"],
    ),
    ("What's the status, assignee and due date of Asana task 1206543210987654?", &["get_task"]),
    (
        "Pull up the review task 11446500 that someone left on a file in Box, what does it say and when is it due?",
        &["get_tasks_id"],
    ),
    (
        "List all the hours people have logged under the 'Client Meetings' time category (gid 1207000000000011) in Asana.",
        &["get_time_tracking_entries_for_time_tracking_category"],
    ),
    (
        "How much time has been logged against Asana task 1205555123456789? Break it down entry by entry.",
        &["get_time_tracking_entries_for_task", "get_time_tracking_entries"],
    ),
    (
        "Give me the details of Asana webhook 1208888777766665, like its target URL and whether it's still active.",
        &["get_webhook"],
    ),
    ("Which Box Relay automations can be kicked off from folder 129384756?", &["get_workflows"]),
    (
        "Have Box AI write a polite follow-up email to the vendor based on the contract in Box file 987654321.",
        &["post_ai_text_gen"],
    ),
    (
        "Remove resource allocation 1209900112233445 in Asana, Priya is no longer staffed on that project.",
        &["delete_allocation"],
    ),
    (
        "Kill the Box access token our old integration was using so it can't be used anymore.",
        &["post_oauth2_revoke"],
    ),
    (
        "My Box access token expired, can you trade in this refresh token for a fresh one?",
        &["post_oauth2_token_refresh", "post_oauth2_token"],
    ),
    (
        "Call off the Box Sign e-signature request 22a990ce-4e24-463b-b2f4-124820fe161a for the Acme NDA, the deal fell through.",
        &["post_sign_requests_id_cancel"],
    ),
    ("Bump the Asana budget 1204444333322221 up to 500 hours.", &["update_budget"]),
    (
        "Rename our Box security label 'Internal Only' to 'Company Confidential' and refresh its description.",
        &[
            "put_metadata_templates_enterprise_security_classification_6__2",
            "put_metadata_templates_id_id_schema",
        ],
    ),
    (
        "Get rid of old version 456456 of Box file 12345, it had the wrong numbers in it.",
        &["delete_files_id_versions_id"],
    ),
    (
        "Link Slack channel C12378991223 to Box folder 1234567 so files shared in that channel get stored there.",
        &["post_integration_mappings_slack"],
    ),
    ("Cancel my Asana out-of-office entry 1207777666655554, my vacation got moved.", &["delete_ooo_entry"]),
    (
        "Make a copy of the Asana portfolio 'FY24 Initiatives' (1201111222233334) and call it 'FY25 Initiatives'.",
        &["duplicate_portfolio"],
    ),
    (
        "Set up a new Asana project called 'Website Redesign' under the Marketing team (team gid 1203333444455556).",
        &["create_project_for_team", "create_project"],
    ),
    (
        "Take member 7815 out of its Box information barrier segment.",
        &["delete_shield_information_barrier_segment_members_id"],
    ),
    (
        "Attach a keyword skill card listing 'pricing', 'renewal' and 'SLA' to Box file 12345.",
        &["post_files_id_metadata_global_box_skills_cards"],
    ),
    ("Delete the comment 1206666555544443 that I posted by mistake on an Asana task.", &["delete_story"]),
    ("Start a new Asana team called 'Data Platform' in our organization 1200000000000001.", &["create_team"]),
    (
        "Switch off the external-user terms of service 1234 in Box and swap in the revised 2025 wording.",
        &["put_terms_of_services_id"],
    ),
    (
        "Rename the Asana time tracking category 1207000000000011 from 'Meetings' to 'Client Meetings' and make it blue.",
        &["update_time_tracking_category"],
    ),
];

const PARAPHRASES_6_DIGITALOCEAN_TWILIO: Requests = &[
    ("What's my DigitalOcean droplet limit, and is my account email verified?", &["account_get"]),
    (
        "Look up Twilio account AC1234567890abcdef1234567890abcdef and tell me its friendly name and whether it's active or suspended.",
        &["fetch_account"],
    ),
    (
        "Show me a history of every event that's been run across my whole DigitalOcean account.",
        &["actions_list"],
    ),
    (
        "I need a console URL to shell into the 'api' component of my App Platform app 4f6c71e2-1e90-4762-9fee-6cc4a0a9f2cf.",
        &["apps_get_exec_active_deployment"],
    ),
    (
        "What container sizes can I choose from on DigitalOcean App Platform, and what do they cost?",
        &["apps_list_instance_sizes"],
    ),
    (
        "Which snapshots have been taken of my block storage volume 7724db7c-e098-11e5-b522-000f53304e51?",
        &["volume_snapshots_list"],
    ),
    (
        "What's the current state of Twilio conference CFbbe46ff1274e283f7e3ac1df0072ab39, is it still in progress?",
        &["fetch_conference"],
    ),
    (
        "What image repos are in my DigitalOcean container registry 'example-registry'?",
        &["registry_list_repositories", "registry_list_repositories_v2", "registries_list_repositories_v2"],
    ),
    (
        "Page through the repositories in my DO container registry 'acme-images' 20 at a time, using the newer token-based paging.",
        &["registry_list_repositories_v2", "registries_list_repositories_v2"],
    ),
    (
        "Show me the Twilio SIP credential list CL32a3c49700934481addd5ce1659f04d2 and its friendly name.",
        &["fetch_sip_credential_list"],
    ),
    (
        "What's the global compatibility level on the schema registry of my Kafka cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30?",
        &["databases_get_kafka_schema_config"],
    ),
    (
        "Which PgBouncer pools are set up on my Postgres cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30?",
        &["databases_list_connection_pools"],
    ),
    (
        "Does my managed database 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 have any read replicas, and where are they?",
        &["databases_list_replicas"],
    ),
    (
        "For DigitalOcean dedicated inference endpoints, which models can run on which GPU types?",
        &["dedicated_inferences_get_gpu_model_config"],
    ),
    ("Give me the details of droplet 3164444: its IP, size and whether it's running.", &["droplets_get"]),
    (
        "Which sub-agents does my GenAI agent 1b418231-b7d6-11ef-bf8f-4e013e2ddde4 hand requests off to?",
        &["genai_get_agent_children"],
    ),
    (
        "Get me a link to download the detailed report for knowledge base indexing job 6e0d1f52-b7d6-11ef-bf8f-4e013e2ddde4.",
        &["genai_get_indexing_job_details_signed_url"],
    ),
    (
        "Show me the catalog card for the model 'llama3.3-70b-instruct' on DigitalOcean's Gradient AI platform.",
        &["genai_get_model_catalog_card"],
    ),
    (
        "I want to download the results of model evaluation run 5f2c8a10-1d3e-4b6f-9a7c-2e8d4f6b1a90, can you get me a link?",
        &["genai_get_model_evaluation_run_results_download_url"],
    ),
    (
        "Which of my Gradient agents are using the OpenAI key 3f8e2b10-b7d6-11ef-bf8f-4e013e2ddde4?",
        &["genai_list_agents_by_openai_key"],
    ),
    (
        "Show me all the knowledge base indexing jobs that have run on my DigitalOcean account.",
        &["genai_list_indexing_jobs"],
    ),
    ("What OpenAI keys have I hooked up to DigitalOcean's GenAI platform?", &["genai_list_openai_api_keys"]),
    (
        "Has the transfer action 36805527 on my custom image 7938391 finished yet?",
        &["image_actions_get", "actions_get"],
    ),
    (
        "Show every IP allowlist I've set up for SIP traffic on my Twilio account.",
        &["list_sip_ip_access_control_list"],
    ),
    (
        "Show me how my DigitalOcean monitoring alert 78b3da62-27e5-49ba-ac70-5db0b5935c64 is configured.",
        &["monitoring_get_alert_policy"],
    ),
    (
        "How many times has my App Platform app 2db3c021-15ad-4088-bfe8-99dc972b9cf6 restarted over the past 24 hours?",
        &["monitoring_get_app_restart_count_metrics_yml"],
    ),
    (
        "Show the read/write throughput for the 'orders' schema on my managed MySQL cluster over the last 6 hours.",
        &["monitoring_get_database_mysql_schema_throughput"],
    ),
    (
        "Chart how much available memory droplet 3164444 has had over the last day.",
        &["monitoring_get_droplet_memory_available_metrics"],
    ),
    (
        "What's the trend of completely unused RAM on droplet 3164444 since yesterday morning?",
        &["monitoring_get_droplet_memory_free_metrics"],
    ),
    (
        "How many requests have been waiting in queue at the backend droplets of load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 in the last hour?",
        &["monitoring_get_lb_droplets_queue_size"],
    ),
    (
        "Break down the 2xx, 4xx and 5xx response rates my load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 has been returning over the past 6 hours.",
        &["monitoring_get_lb_frontend_http_responses"],
    ),
    (
        "How many TLS connections did load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 close today because clients went over the rate limit?",
        &["monitoring_get_lb_frontend_tls_connections_exceeding_rate_limit"],
    ),
    ("List my NFS share snapshots in the nyc1 region.", &["nfs_list_snapshot"]),
    ("What marketplace one-click apps can I install on a droplet?", &["one_clicks_list"]),
    ("Which teams are in my DigitalOcean organization?", &["organizations_list_teams"]),
    (
        "Show me all my private interconnects to partner networks on DigitalOcean.",
        &["partner_attachments_list"],
    ),
    ("Which IPv6 addresses have I reserved on DigitalOcean?", &["reserved_ipv6_list"]),
    ("Which SSH public keys are saved on my DigitalOcean account?", &["ssh_keys_list"]),
    (
        "Find me some US 1-800 style numbers I could buy on Twilio, ideally ones containing 'FLOWER'.",
        &["list_available_phone_number_toll_free"],
    ),
    (
        "Pull up the settings of my DigitalOcean uptime monitor 4de7ac8b-495b-4884-9a69-1050c6793cd6.",
        &["uptime_get_check"],
    ),
    (
        "Are there any VoIP numbers in the UK that I can buy through Twilio?",
        &["list_available_phone_number_voip"],
    ),
    ("List the NAT gateways I've got attached to my VPCs.", &["vpcnatgateways_list"]),
    ("Tear down my App Platform app 4f6c71e2-1e90-4762-9fee-6cc4a0a9f2cf completely.", &["apps_delete"]),
    ("Purge the record of Twilio call CA42ed11f93dc08b952027ffbc406d0868 from my logs.", &["delete_call"]),
    (
        "Upload my own SSL cert for shop.example.com to DigitalOcean, here are the private key, leaf certificate and chain.",
        &["certificates_create_certificate_request_custom"],
    ),
    (
        "Add a SIP login 'frontdesk' with password 'S3cureP@ss2025' to Twilio credential list CL32a3c49700934481addd5ce1659f04d2.",
        &["create_sip_credential"],
    ),
    (
        "Set up a new Twilio SIP auth list called 'Office Phones' that I can put desk phone logins into.",
        &["create_sip_credential_list"],
    ),
    (
        "Turn on storage auto-scaling for database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30, growing by 10 GB whenever it hits 80% full.",
        &["databases_update_autoscale"],
    ),
    (
        "Change the default time zone to UTC and the connect_timeout to 20 seconds on my MySQL cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30.",
        &["databases_patch_config"],
    ),
    (
        "Stop shipping logs from database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 to our Datadog sink 50484ec3-19d6-4cd3-b56f-3b0381c289a6, remove it.",
        &["databases_delete_logsink"],
    ),
    (
        "Switch droplet 3164444's backups to weekly, on Sundays at 8pm.",
        &["droplet_actions_post_droplet_action_change_backup_policy"],
    ),
    (
        "I need upload links so I can push 'eval_prompts.csv' as a dataset for a model evaluation on Gradient.",
        &["genai_create_model_eval_dataset_upload_presigned_urls"],
    ),
    (
        "Set up a model router called 'cost-saver' that sends simple prompts to llama3-8b-instruct and harder ones to openai-gpt-4o.",
        &["genai_create_model_router"],
    ),
    (
        "Get rid of model evaluation run 5f2c8a10-1d3e-4b6f-9a7c-2e8d4f6b1a90, we don't need it anymore.",
        &["genai_delete_model_evaluation_run"],
    ),
    (
        "Rotate API key 9a6e3975-b0c6-11ef-bf8f-4e013e2ddde4 on my GenAI agent 1b418231-b7d6-11ef-bf8f-4e013e2ddde4, it leaked.",
        &["genai_regenerate_agent_api_key"],
    ),
    (
        "Make my GenAI agent 1b418231-b7d6-11ef-bf8f-4e013e2ddde4 reachable by the public instead of private.",
        &["genai_update_agent_deployment_visibility"],
    ),
    (
        "Give me upload URLs so I can add 'handbook.pdf' (about 2 MB) as a source file for my knowledge base.",
        &["genai_create_data_source_file_upload_presigned_urls"],
    ),
    ("Copy my custom image 7938391 over to the sfo3 region.", &["image_actions_post_image_action_transfer"]),
    (
        "Put droplets 3164444 and 3164445 behind load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 as well.",
        &["load_balancers_add_droplets"],
    ),
    ("Remove the NFS share 0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d, we're done with it.", &["nfs_delete"]),
    (
        "Rename verified caller ID PNe905d7e6b410746a0fb08c57e5a186f3 on Twilio to 'Main Office Line'.",
        &["update_outgoing_caller_id"],
    ),
    (
        "Change the BGP peering IPs and auth key on my partner interconnect attachment 5a4981aa-9653-4bd1-bef5-d6bff52042e4.",
        &["partner_attachments_patch_bgp"],
    ),
    (
        "Un-mute security finding suppression 4f1c2e9a-7b3d-4d8e-9a10-2c5b6e7f8a90 so that issue shows up in my scans again.",
        &["security_delete_suppression"],
    ),
    (
        "Use DigitalOcean serverless inference with openai-gpt-image-1 to make a picture of a watercolor lighthouse at sunset.",
        &["inference_create_image"],
    ),
    (
        "Ask anthropic-claude-sonnet-4 through DO serverless inference for its next reply in this chat, capped at 512 tokens.",
        &["inference_create_messages", "inference_create_chat_completion", "inference_create_response"],
    ),
    ("Tear down NAT gateway 70e1b58d-cdec-4e95-b3ee-2d4d95feff51 in my VPC.", &["vpcnatgateways_delete"]),
];

const PARAPHRASES_6_OPENAI: Requests = &[
    (
        "Which speaker permission recordings have we uploaded on OpenAI for making custom voices?",
        &["list_voice_consents"],
    ),
    ("What's the size, purpose and upload date of OpenAI file file-abc123?", &["retrieve_file"]),
    (
        "Which intermediate model snapshots were saved during fine-tune job ftjob-abc123, and what were their step metrics?",
        &["list_fine_tuning_job_checkpoints"],
    ),
    ("Which user groups have been granted into OpenAI project proj_abc123?", &["list_project_groups"]),
    (
        "What roles does user-abc123 hold inside OpenAI project proj_xyz789?",
        &["list_project_user_role_assignments"],
    ),
    (
        "How far along is batch vsfb_abc123 that's loading files into vector store vs_abc123, how many are done?",
        &["get_vector_store_file_batch"],
    ),
    ("Get rid of my OpenAI assistant asst_abc123, I don't use it anymore.", &["delete_assistant"]),
    (
        "Kick off assistant asst_abc123 on thread thread_abc123 so it responds to the latest message.",
        &["create_run"],
    ),
    (
        "Turn on the mTLS certificates cert_abc and cert_def for OpenAI project proj_abc123.",
        &["activate_project_certificates"],
    ),
    ("Erase the stored chat completion chatcmpl-abc123 from OpenAI.", &["delete_chat_completion"]),
    (
        "Wipe ChatKit conversation cthr_abc123 along with all its messages and attachments.",
        &["delete_thread_method"],
    ),
    ("Kick user-abc123 out of OpenAI project proj_abc123.", &["delete_project_user"]),
];

// Measured once, as written: 86.7 % by words (16 of 120 missed), 85.8 % with the model (17
// missed; 85.0 % with the fusion by rank it replaced). Three misses are Petstore's user
// operations asked for as a "pet store customer account", which the pet and store tables take.
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 87.5 % by words (15
// missed), 88.3 % with the model (14 missed).
const PARAPHRASES_6_FLOOR: f64 = 87.0;
const PARAPHRASES_6_MODEL_FLOOR: f64 = 88.0;

/// A seventh draw of paraphrases (seed 20261211), drawn and written as the sixth was, before
/// either was measured: the second held-out measure of the ranker as it was then.
const PARAPHRASES_7_SPOTIFY: Requests = &[
    (
        "Fetch the Spotify profiles for these artists in one go: 0TnOYISbd1XYRBk9myaseg, 3TVXtAsR1Inumwj472S9r4, 1Xyo4u8uXC1ZmMpatF05PJ.",
        &["get_multiple_artists"],
    ),
    (
        "Get me info on these three Spotify audiobooks: 18yVqkdbdRvS24c0Ilj2ci, 1HGw3J3NxZO1TP1BTtVhpZ, 7iHfbu1YPACw6oZPAFJtqe.",
        &["get_multiple_audiobooks"],
    ),
    (
        "Look up these podcast episodes on Spotify together: 77o6BIVlYM3msb4MMIL1jH and 0Q86acNRm6V9GYx55SXKwf.",
        &["get_multiple_episodes"],
    ),
    ("what songs are lined up to play next on my Spotify?", &["get_queue"]),
    ("Are there any trains from Berlin Hbf to Paris Gare du Nord on 2024-06-14 after 8am?", &["get_trips"]),
    (
        "Am I following Radiohead (4Z8W4fKeB5YxbusRsdQVPb) and Bjork (7w29UYBi0qsHi5RTcv3lmA) on Spotify?",
        &["check_current_user_follows"],
    ),
    ("Do I already follow the Spotify playlist 37i9dQZF1DXcBWIGoYBM5M?", &["check_if_user_follows_playlist"]),
];

const PARAPHRASES_7_ASANA_BOX: Requests = &[
    (
        "Can you pull up the details of our Box Sign template 'NDA-2024', id 4f1c9a2e-77b3-4d1a-9c55-0e2a6b8d3f10?",
        &["get_sign_templates_id"],
    ),
    (
        "Show me the metadata for Box file 1290345678 - size, owner, when it was last modified.",
        &["get_files_id"],
    ),
    (
        "What entries are in the 'regions' classification tree under the enterprise_48213 namespace in Box?",
        &["get_metadata_taxonomies_id_id_nodes"],
    ),
    (
        "In Asana, open up the 'Product Launch' project template (gid 1205566778899001) so I can see what it contains.",
        &["get_project_template"],
    ),
    (
        "What's the public share URL for my Box folder 'Q3 Reports' (id 88231456)?",
        &["get_folders_id_get_shared_link", "get_folders_id"],
    ),
    (
        "Someone sent me this Box link https://app.box.com/s/7hxk2lq9bookmark - which bookmark does it point to?",
        &["get_shared_items_web_links"],
    ),
    ("Which labels are attached to Asana task 1204987712345678?", &["get_tags_for_task"]),
    (
        "List the child items under the Asana task 'Prepare onboarding deck' (gid 1206001122334455).",
        &["get_subtasks_for_task"],
    ),
    ("How far along is my chunked Box upload, session D5E3F7A2B1C94E8F?", &["get_files_upload_sessions_id"]),
    (
        "Revoke Jamie's access to the shared folder in Box - the collaboration id is 790012345.",
        &["delete_collaborations_id"],
    ),
    (
        "Get rid of the Asana goal 'Increase NPS to 60' (gid 1203344556677889), we dropped it.",
        &["delete_goal"],
    ),
    (
        "Detach the 'Confidence' custom field from our Asana goal 1203344556677890.",
        &["remove_custom_field_setting_for_goal"],
    ),
    (
        "Rename the Box group 'Contractors' (id 551234) to 'External Partners' and update its description.",
        &["put_groups_id"],
    ),
    (
        "Change the description on Box legal hold policy 314159 to 'Smith v. Acme litigation - retain all'.",
        &["put_legal_hold_policies_id"],
    ),
    (
        "We no longer need the 'cost_centers' taxonomy in the enterprise_48213 namespace in Box - please delete it.",
        &["delete_metadata_taxonomies_id_id"],
    ),
    (
        "My vacation got extended - push the end date of my Asana out-of-office entry 1207788990011223 to 2024-08-23.",
        &["update_ooo_entry"],
    ),
    (
        "Take the 'Budget' field off the Asana project 'Website Redesign' (gid 1201122334455667).",
        &["remove_custom_field_setting_for_project"],
    ),
    (
        "Make the Box bookmark 44129876 shareable with anyone who has the link.",
        &["put_web_links_id_add_shared_link", "put_web_links_id_update_shared_link", "put_web_links_id"],
    ),
    (
        "Put user 22334455 in Box onto storage policy 7 so their data lives in the EU zone.",
        &["post_storage_policy_assignments"],
    ),
    (
        "Task 1209988776655443 in Asana is no longer blocked by task 1209988776655440 - drop that dependency.",
        &["remove_dependencies_for_task"],
    ),
    (
        "Strip the 'urgent' tag (gid 1200000000000123) from Asana task 1204455667788990.",
        &["remove_tag_for_task"],
    ),
    (
        "Put priya@acme.com on the Marketing team in Asana (team gid 1201212121212121).",
        &["add_user_for_team"],
    ),
    (
        "I logged time on the wrong task in Asana - erase time entry 1208877665544332.",
        &["delete_time_tracking_entry"],
    ),
    (
        "Purge the Box folder 'Old Drafts' (id 66778899) from the trash for good, no recovery.",
        &["delete_folders_id_trash"],
    ),
    (
        "Abort the chunked Box upload with session id 9A8B7C6D5E4F3210, I picked the wrong file.",
        &["delete_files_upload_sessions_id"],
    ),
    ("Turn off watermarking on Box folder 12345098 'Client Previews'.", &["delete_folders_id_watermark"]),
];

const PARAPHRASES_7_DIGITALOCEAN_TWILIO: Requests = &[
    (
        "What third-party add-ons does DigitalOcean's marketplace offer that I could provision?",
        &["addons_get_app"],
    ),
    (
        "How much Twilio usage have I racked up since I opened the account, broken down by category?",
        &["list_usage_record_all_time", "list_usage_record"],
    ),
    (
        "How much bandwidth did my App Platform app 4f6c71e2-1e90-4762-9fee-6cc4a0a9f2cf use per day recently?",
        &["apps_get_metrics_bandwidth_daily", "apps_list_metrics_bandwidth_daily"],
    ),
    ("Show me every App Platform app I have deployed on DigitalOcean.", &["apps_list"]),
    (
        "Which Twilio marketplace add-ons are hooked up to my number PN3f2a1b4c5d6e7f8091a2b3c4d5e6f708?",
        &["list_incoming_phone_number_assigned_add_on"],
    ),
    ("Pull up my past DigitalOcean charges and payments.", &["billing_history_list"]),
    (
        "Get me the details of Twilio call CA42ed11f93dc08b952027ffbc406d0868 - duration, status, who it was to.",
        &["fetch_call"],
    ),
    (
        "Were any recordings made of Twilio conference CFbbe46ff1274e283f7e3ac1df0072ab39? List them.",
        &["list_conference_recording"],
    ),
    (
        "What image tags exist for the 'api-server' repo in my DigitalOcean container registry 'acme-images'?",
        &["registries_list_repository_tags", "registry_list_repository_tags"],
    ),
    (
        "Is storage autoscaling turned on for my managed database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30, and what are its thresholds?",
        &["databases_get_autoscale"],
    ),
    (
        "Give me the status, engine version and connection info for my DigitalOcean database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30.",
        &["databases_get_cluster"],
    ),
    (
        "Show the settings of the PgBouncer pool 'backend-pool' on Postgres cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30.",
        &["databases_get_connection_pool"],
    ),
    (
        "Which logical databases live inside my managed cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30?",
        &["databases_list"],
    ),
    (
        "Where is my database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 shipping its logs? List the configured log destinations.",
        &["databases_list_logsink"],
    ),
    (
        "What engines, versions, regions and node sizes can I pick from when spinning up a managed database on DigitalOcean?",
        &["databases_list_options"],
    ),
    (
        "Show me GPU accelerator acc-77d1 on my dedicated inference endpoint di-5521f0.",
        &["dedicated_inferences_get_accelerator"],
    ),
    (
        "What GPU size options are available for a DigitalOcean dedicated inference deployment?",
        &["dedicated_inferences_list_sizes"],
    ),
    (
        "Which access tokens have been issued for my dedicated inference endpoint di-5521f0?",
        &["dedicated_inferences_list_tokens"],
    ),
    (
        "Did the resize (action 36804758) on droplet 3164444 finish yet?",
        &["droplet_actions_get", "actions_get"],
    ),
    (
        "I asked DigitalOcean to tear down droplet 3164450 along with its volumes and snapshots - is that cleanup done?",
        &["droplets_get_destroy_associated_resources_status"],
    ),
    (
        "Show the revision history of my GenAI agent 1b418231-b7d6-11ef-bf8f-4e013e2ddde4.",
        &["genai_list_agent_versions"],
    ),
    (
        "Which Claude provider keys have I registered with the DigitalOcean GenAI platform?",
        &["genai_list_anthropic_api_keys"],
    ),
    ("In which regions can I run GenAI agents on DigitalOcean?", &["genai_list_datacenter_regions"]),
    (
        "What scoring metrics can I use when evaluating my DigitalOcean AI agents?",
        &["genai_list_evaluation_metrics"],
    ),
    (
        "What built-in task presets are there for configuring a model router on DigitalOcean's AI platform?",
        &["genai_list_model_router_task_presets"],
    ),
    ("list all the API keys on my Twilio account", &["list_key"]),
    (
        "Which newer Kubernetes versions can my DOKS cluster bd5f5959-5e1e-4205-a714-a914373942af be moved to?",
        &["kubernetes_get_available_upgrades"],
    ),
    (
        "Give me the details of Kubernetes cluster bd5f5959-5e1e-4205-a714-a914373942af - version, node pools, state.",
        &["kubernetes_get_cluster"],
    ),
    (
        "What monitoring alerts have I set up across my droplets on DigitalOcean?",
        &["monitoring_list_alert_policy"],
    ),
    (
        "Chart the number of active connections from load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 to its backend droplets over the last 6 hours.",
        &["monitoring_get_lb_droplets_connections"],
    ),
    (
        "Find me some national (non-geographic) phone numbers I could buy in GB on Twilio.",
        &["list_available_phone_number_national"],
    ),
    (
        "Look up the verified caller ID PNe905d7e6b410746a0fb08c57e5a186f3 on my Twilio account.",
        &["fetch_outgoing_caller_id"],
    ),
    (
        "For recording RE557ce644e5ab84fa21cc21112e22c485, show me the payloads attached to add-on result XR1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d.",
        &["list_recording_add_on_result_payload"],
    ),
    (
        "What droplets, volumes and other stuff are assigned to my DigitalOcean project 4e1bfbc3-dc3e-41f2-a18f-1b4d7ba71679?",
        &["projects_list_resources"],
    ),
    (
        "Which of my resources are impacted by finding f12ab-99 in security scan 5e2a8b7c?",
        &["security_list_scan_finding_affected_resources"],
    ),
    ("Show me my current DigitalOcean security scanning configuration.", &["security_list_settings"]),
    (
        "Can you get the details of Twilio signing key SKd1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6?",
        &["fetch_signing_key"],
    ),
    (
        "Describe my VPC 5a4981aa-9653-4bd1-bef5-d6bff52042e4 - IP range, region, default status.",
        &["vpcs_get"],
    ),
    (
        "Wipe the transcription add-on output XR0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d and all its data from Twilio recording RE557ce644e5ab84fa21cc21112e22c485.",
        &["delete_recording_add_on_result"],
    ),
    (
        "Point the voice webhook of my Twilio TwiML app AP2a0747eba6abf96b7e3c3ff0b4530f6e at https://example.com/voice.",
        &["update_application"],
    ),
    (
        "Upload a JSONL input file called prompts.jsonl so I can run a batch inference job on DigitalOcean.",
        &["inference_create_batch_file"],
    ),
    (
        "Delete my DigitalOcean container registry named 'legacy-builds' entirely.",
        &["registries_delete", "registry_delete"],
    ),
    (
        "Cancel the running garbage collection eff0feee-49c7-4e8f-ba5c-a320c109c8a8 on my registry 'acme-images'.",
        &["registries_update_garbage_collection", "registry_update_garbage_collection"],
    ),
    (
        "Drop the 'reporting-pool' connection pool from Postgres cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30.",
        &["databases_delete_connection_pool"],
    ),
    (
        "Make read replica 'read-nyc3-01' of cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 a standalone primary database.",
        &["databases_promote_replica"],
    ),
    (
        "Change the basic-auth username and password used to scrape my DigitalOcean database metrics endpoints to 'prom' / 'S3cure!pass'.",
        &["databases_update_cluster_metrics_credentials"],
    ),
    (
        "Scale my database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 up to db-s-4vcpu-8gb with 3 nodes.",
        &["databases_update_cluster_size"],
    ),
    (
        "Bump the 'backend-pool' PgBouncer pool on cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 to size 25 in transaction mode.",
        &["databases_update_connection_pool"],
    ),
    (
        "Set the default compatibility level of the schema registry on my Kafka cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 to BACKWARD.",
        &["databases_update_kafka_schema_config"],
    ),
    (
        "Start forwarding the logs of database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 to my rsyslog server at logs.example.com:514.",
        &["databases_create_logsink"],
    ),
    (
        "Invalidate token tok-88a2 on dedicated inference endpoint di-5521f0 - it leaked.",
        &["dedicated_inferences_delete_tokens"],
    ),
    (
        "Change the egress rules on cloud firewall bb4b2611-3d72-467b-8602-280330ecd65c so droplets can only reach out on TCP 443 and UDP 53.",
        &["firewalls_update_outbound_rules"],
    ),
    (
        "Attach floating IP 45.55.96.47 to droplet 758604968.",
        &[
            "floating_ips_action_post_floating_ip_action_assign",
            "reserved_ips_actions_post_reserved_ip_action_assign",
        ],
    ),
    (
        "Set up a new evaluation dataset named 'support-qa-v2' from the file I uploaded, for testing my DigitalOcean agents.",
        &["genai_create_evaluation_dataset"],
    ),
    (
        "Revoke key 5c7e8f90-aa11 on my DigitalOcean agent 1b418231-b7d6-11ef-bf8f-4e013e2ddde4.",
        &["genai_delete_agent_api_key"],
    ),
    (
        "I changed my mind - stop the pending transfer of snapshot image 7938391 to the other account.",
        &["images_post_account_transfer_cancel"],
    ),
    (
        "Unhook my container registry from Kubernetes clusters bd5f5959-5e1e-4205-a714-a914373942af and 7c1a33e2-90af-4d15-8bf2-22e7a4f1b3c9.",
        &["kubernetes_remove_registry"],
    ),
    (
        "Just rename my default DigitalOcean project to 'Production' and leave everything else alone.",
        &["projects_patch_default", "projects_update_default"],
    ),
    (
        "point reserved IP 104.131.186.241 at droplet 758604968",
        &[
            "reserved_ips_actions_post_reserved_ip_action_assign",
            "floating_ips_action_post_floating_ip_action_assign",
        ],
    ),
    ("Kill the Spaces access key DOO1A2B3C4D5E6F7G8H9 - it's no longer used.", &["spaces_key_delete"]),
    ("Relabel my SSH key 512189 on DigitalOcean as 'laptop-2024'.", &["ssh_keys_update"]),
    (
        "Change uptime alert 17f0f0ae-b7e5-4ef6-86e3-aa569db58284 on check 4de7ac8b-495b-4884-9a69-1050c6793cd6 to email me when latency goes over 500ms for 5 minutes.",
        &["uptime_update_alert"],
    ),
    (
        "Roll my vector database vdb-3391 back to backup bk-20240601.",
        &["vector_databases_post_restore_backup"],
    ),
    (
        "Tear down the VPC peering 5a4981aa-9653-4bd1-bef5-d6bff52042e4 between staging and prod.",
        &["vpc_peerings_delete"],
    ),
];

const PARAPHRASES_7_OPENAI: Requests = &[
    ("Which mTLS certificates have been uploaded to our OpenAI org?", &["list_organization_certificates"]),
    ("Show me all the messages and events in ChatKit thread cthr_68a1b2c3d4.", &["list_thread_items_method"]),
    (
        "Pull up item msg_abc123 from OpenAI conversation conv_689667905b048191b4740501625afd940c7533ace33a2dab.",
        &["get_conversation_item"],
    ),
    (
        "What are our OpenAI organization's current data retention settings?",
        &["retrieve_organization_data_retention"],
    ),
    ("Show me the evals we've set up in this OpenAI project.", &["list_evals"]),
    (
        "Which projects have been granted access to my fine-tuned checkpoint ft:gpt-4o-mini-2024-07-18:acme::9xYz:ckpt-step-1200?",
        &["list_fine_tuning_checkpoint_permissions"],
    ),
    ("list every group in our OpenAI organization", &["list_groups"]),
    ("What API keys exist under OpenAI project proj_abc123?", &["list_project_api_keys"]),
    (
        "Which bot/service accounts are set up in OpenAI project proj_abc123?",
        &["list_project_service_accounts"],
    ),
    ("Give me a rundown of all the projects in our OpenAI org.", &["list_projects"]),
    ("Show details for OpenAI project proj_abc123 - name, status, creation date.", &["retrieve_project"]),
    ("What roles are defined for OpenAI project proj_abc123?", &["list_project_roles"]),
    (
        "Show me the org-level spending alert alert_7f3e9 we set up on OpenAI.",
        &["retrieve_organization_spend_alert"],
    ),
    ("Look up the OpenAI org member user-abc123 - their email, role, when they joined.", &["retrieve_user"]),
    ("What's the status and file count of my vector store vs_abc123?", &["get_vector_store"]),
    ("Did file-abc123 finish processing in vector store vs_abc123?", &["get_vector_store_file"]),
    ("Remove the expired certificate cert_abc from our OpenAI organization.", &["delete_certificate"]),
    (
        "Stop sharing checkpoint ft:gpt-4o-mini-2024-07-18:acme::9xYz:ckpt-step-1200 with that project - revoke permission cp_zc4Q7MP6XxulcVzj4MZdwsAB.",
        &["delete_fine_tuning_checkpoint_permission"],
    ),
    (
        "I need a short-lived client token for a browser app that does live speech-to-text with gpt-4o-transcribe.",
        &["create_realtime_transcription_session", "create_realtime_client_secret"],
    ),
    (
        "Turn down the incoming SIP call rtc_u1_9c6574da8b8a41a18da9308f4ad974ce with a 486 busy.",
        &["reject_realtime_call"],
    ),
    ("Get rid of spend alert alert_9a2 on OpenAI project proj_abc123.", &["delete_project_spend_alert"]),
    (
        "Raise the threshold of spend alert alert_9a2 in project proj_abc123 to $500.",
        &["update_project_spend_alert"],
    ),
    ("Delete vector store vs_abc123, I don't need it anymore.", &["delete_vector_store"]),
];

// Measured once, as written: 89.2 % by words (13 of 120 missed), 89.2 % with the model (13
// missed; 83.3 % with the fusion by rank it replaced).
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 90.0 % by words (12
// missed), 92.5 % with the model (9 missed).
const PARAPHRASES_7_FLOOR: f64 = 90.0;
const PARAPHRASES_7_MODEL_FLOOR: f64 = 92.0;

/// An eighth draw of paraphrases (seed 20261212), drawn and written as the sixth and seventh
/// were, after the request's effect was read from more openings and the semantic spread given a
/// floor: the held-out measure of the ranker as it is.
const PARAPHRASES_8_SPOTIFY: Requests = &[
    (
        "What albums has Radiohead released? Their Spotify artist id is 4Z8W4fKeB5YxbusRsdQVPb.",
        &["get_an_artists_albums"],
    ),
    ("show me all my train bookings", &["get_bookings"]),
    ("What browse categories does Spotify have, like mood, workout and so on?", &["get_categories"]),
    (
        "Have I already liked these songs on Spotify? 7ouMYWpwJ422jRcDASZB7P and 4VqPOruhp5EdPBeR92t6lQ",
        &["check_users_saved_tracks", "check_library_contains"],
    ),
    ("go back to the song before this one", &["skip_users_playback_to_previous_track"]),
    (
        "Rename my Spotify playlist 3cEYpjA9oz9GiPac4AsH4n to Sunday Chill and make it private.",
        &["change_playlist_details"],
    ),
    ("I'd like to buy pet 10 from the pet store - one of them, shipping on 2025-06-01.", &["place_order"]),
    (
        "I'm done with Today's Top Hits (37i9dQZF1DXcBWIGoYBM5M), stop following it on my Spotify.",
        &["unfollow_playlist", "remove_library_items"],
    ),
];

const PARAPHRASES_8_ASANA_BOX: Requests = &[
    (
        "Can you pull up all the Box Sign signature requests I've sent out? I want to see which contracts are still waiting on signatures.",
        &["get_sign_requests"],
    ),
    (
        "In Box, show me collaboration 791293 - who was invited and what access level did they get?",
        &["get_collaborations_id"],
    ),
    (
        "Which Box folders and files has the Finance group (group id 57645) been given access to?",
        &["get_groups_id_collaborations"],
    ),
    (
        "I need the details of version 456456 of Box file 12345 - who uploaded that version and when?",
        &["get_files_id_versions_id"],
    ),
    ("list every legal hold policy we have in Box", &["get_legal_hold_policies"]),
    (
        "Is the Asana organization export 1208455667 I kicked off yesterday finished yet? If so, where do I download it?",
        &["get_organization_export"],
    ),
    (
        "What does the Asana role 1209933412 look like? Give me its name and what it's allowed to do.",
        &["get_role"],
    ),
    (
        "Which storage policy is our Box enterprise 1910967 assigned to? I need to confirm where our data is stored.",
        &["get_storage_policy_assignments"],
    ),
    ("What task templates are set up in Asana project 1204553298765?", &["get_task_templates"]),
    (
        "list everything sitting in the In Review column of our Asana board - that's section 1207789011223",
        &["get_tasks_for_section", "get_tasks"],
    ),
    (
        "Asana: when does time period 917392 start and end? It's the one our Q3 goals are tied to.",
        &["get_time_period"],
    ),
    (
        "Pull up Asana time entry 1206677889900 - how many minutes were logged, on which day, and by whom?",
        &["get_time_tracking_entry"],
    ),
    (
        "Whose My Tasks list is Asana user task list 1201234567890, and which workspace does it belong to?",
        &["get_user_task_list"],
    ),
    (
        "Look up Box user 33445566 for me: email, account status and how much storage they're using.",
        &["get_users_id"],
    ),
    (
        "Is there a watermark applied to the Box folder Board Decks (folder id 98765432)?",
        &["get_folders_id_watermark"],
    ),
    (
        "Get me Asana workspace membership 12045678901 - is that person an admin, a member or a guest?",
        &["get_workspace_membership"],
    ),
    (
        "What's the name of Asana workspace 1100223344, and which email domains are tied to it?",
        &["get_workspace"],
    ),
    ("Delete my comment 191969 on that Box file, I posted it by mistake.", &["delete_comments_id"]),
    (
        "In Asana, link the Launch mobile app project (1203334445556) as supporting work for our goal 1209988776655 Grow MAU 20%.",
        &["add_supporting_relationship"],
    ),
    (
        "Add Priya (Asana user 1200456789012) as a collaborator on goal 1209876543210 so she gets the updates.",
        &["add_followers"],
    ),
    (
        "Hook up Box folder 4455667788 to our Microsoft Teams channel 19:a1b2c3d4@thread.tacv2 in team 7e1f0c2a-3b4d-4e5f-8a9b-0c1d2e3f4a5b (tenant 1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f2a1b) so the channel's files get stored there.",
        &["post_integration_mappings_teams"],
    ),
    (
        "Some older files are missing the metadata from cascade policy 6fd4ff89-8fc1-42cf-8b29-1890dedd26d7. Force it to re-run on the whole folder and overwrite any conflicting values.",
        &["post_metadata_cascade_policies_id_apply"],
    ),
    (
        "Create a new Asana project called Q4 Hiring Plan in workspace 1122334455.",
        &["create_project_for_workspace", "create_project"],
    ),
    (
        "Set up a custom role in our Asana workspace 1122334455 named Contractor - limited access.",
        &["create_role"],
    ),
    (
        "Take Marco off the Box review task - remove task assignment 11446500, he shouldn't be reviewing that file anymore.",
        &["delete_task_assignments_id"],
    ),
    (
        "Mark my Box task assignment 11446498 as completed with the note Looks good, approved.",
        &["put_task_assignments_id"],
    ),
];

const PARAPHRASES_8_DIGITALOCEAN_TWILIO: Requests = &[
    (
        "Show me the details of DigitalOcean add-on resource 0b8e1a2c-4f3d-4a6e-9c3b-7d2f5e8a1b90 - which plan it's on, its state and config.",
        &["addons_get"],
    ),
    (
        "Did last night's cron job actually run? Show me the recent job runs for my App Platform app 4f6c71e2-1e90-4762-9fee-6cc4a0a9f2cf.",
        &["apps_list_job_invocations"],
    ),
    (
        "On Twilio number PN2a0747eba6abf96b7e3c3ff0b4530f6e, give me the details of the installed add-on XB4bd0b9c0ad7f1b9a1b1a5f1e8c3d7e21.",
        &["fetch_incoming_phone_number_assigned_add_on"],
    ),
    (
        "For Twilio number PN2a0747eba6abf96b7e3c3ff0b4530f6e and its add-on XB4bd0b9c0ad7f1b9a1b1a5f1e8c3d7e21, is extension XF8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f enabled? Show me that extension.",
        &["fetch_incoming_phone_number_assigned_add_on_extension"],
    ),
    (
        "how big is volume snapshot fbe805e8-866b-11e6-96bf-000f53315a41 and when was it taken?",
        &["volume_snapshots_get_by_id", "snapshots_get"],
    ),
    (
        "Were any errors or warnings logged during Twilio call CA1f3a9b2c4d5e6f708192a3b4c5d6e7f8? List them.",
        &["list_call_notification"],
    ),
    (
        "Show me the history of garbage collection runs on my container registry acme-registry.",
        &["registries_list_garbage_collections", "registry_list_garbage_collections"],
    ),
    (
        "List all the image digests in the api-server repository of my DigitalOcean registry acme-registry, I want to see what's taking up space.",
        &["registry_list_repository_manifests", "registries_list_repository_manifests"],
    ),
    (
        "Twilio: on SIP domain SD27f0288630a668bdfbf177f8e22f5ccc, show me the credential list mapping CL32a3c49700934481addd5ce1659f04d2.",
        &["fetch_sip_credential_list_mapping"],
    ),
    (
        "What happens when my Valkey cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 runs out of memory - which keys does it evict?",
        &["databases_get_eviction_policy", "databases_get_config"],
    ),
    (
        "Which IPs and droplets are allowed to connect to database cluster 2f6c1a8e-77b4-4d2e-9c1f-5a3b8e0d4f71?",
        &["databases_list_firewall_rules"],
    ),
    ("What droplet autoscale pools do I have running?", &["autoscalepools_list"]),
    ("list all my droplets", &["droplets_list"]),
    (
        "What's the status of action 68212728 on floating IP 45.55.96.47 - did the reassignment finish?",
        &["floating_ips_action_get", "reserved_ips_actions_get", "actions_get"],
    ),
    (
        "Give me the details of my DO Functions namespace fn-d4b9e2a1-5c6f-4a3e-8b7d-2e1f0c9a8b76 - its region and API host.",
        &["functions_get_namespace"],
    ),
    ("Which serverless functions namespaces do I have on DigitalOcean?", &["functions_list_namespaces"]),
    (
        "Show me the custom model I imported into DigitalOcean GenAI, uuid 3f2a9c1e-6b7d-4e8f-a0b1-c2d3e4f5a6b7 - is it ready to use?",
        &["genai_get_custom_model"],
    ),
    (
        "Give me the per-prompt scores and outputs from evaluation run 8a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d on my agent.",
        &["genai_get_evaluation_run_results"],
    ),
    (
        "Pull up model evaluation preset 5c7d9e1f-2a3b-4c5d-8e6f-7a8b9c0d1e2f - which metrics and settings does it use?",
        &["genai_get_model_evaluation_preset"],
    ),
    (
        "Which GenAI agents are in workspace 2e4f6a8b-1c3d-4e5f-9a7b-0c2d4e6f8a1b?",
        &["genai_list_agents_by_workspace"],
    ),
    (
        "list all the evaluation test cases we've created for our DO GenAI agents",
        &["genai_list_evaluation_test_cases"],
    ),
    (
        "What ready-made presets can I pick from when setting up a model router on DigitalOcean GenAI?",
        &["genai_list_model_router_presets"],
    ),
    (
        "Show me the node pools in my k8s cluster bd5f5959-5e1e-4205-a714-a914373942af with their droplet sizes and node counts.",
        &["kubernetes_list_node_pools", "kubernetes_get_cluster"],
    ),
    (
        "Give me the config of load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 - forwarding rules, health check and which droplets are behind it.",
        &["load_balancers_get"],
    ),
    (
        "For our managed MySQL cluster 7f3e2d1c-0b9a-4c8d-9e7f-6a5b4c3d2e1f, how many reads used indexes versus full table scans over the last 6 hours?",
        &["monitoring_get_database_mysql_index_vs_sequential_reads"],
    ),
    (
        "What has the load average looked like on MySQL cluster 7f3e2d1c-0b9a-4c8d-9e7f-6a5b4c3d2e1f since 06:00 UTC today?",
        &["monitoring_get_database_mysql_load"],
    ),
    (
        "How many client connections have been open on MySQL cluster 7f3e2d1c-0b9a-4c8d-9e7f-6a5b4c3d2e1f over the past 24 hours? I suspect we're hitting the connection cap.",
        &["monitoring_get_database_mysql_threads_connected"],
    ),
    (
        "What's the average memory usage across the droplets in autoscale pool 0d3db13e-a604-4944-9827-7ec2642d32ac over the last hour?",
        &["monitoring_get_droplet_autoscale_current_memory_utilization"],
    ),
    (
        "Show me the public outbound bandwidth for droplet 3164444 over the last 24 hours.",
        &["monitoring_get_droplet_bandwidth_metrics"],
    ),
    (
        "How hard is load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 working? Give me its frontend CPU percentage for the past 12 hours.",
        &["monitoring_get_lb_frontend_cpu_utilization"],
    ),
    (
        "Chart the requests per second hitting load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 between 2025-03-01 00:00 and 2025-03-02 00:00 UTC.",
        &["monitoring_get_lb_frontend_http_requests_per_second"],
    ),
    (
        "What's the UDP traffic throughput on our network load balancer 1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d for the last 3 hours?",
        &["monitoring_get_lb_frontend_nlb_udp_network_throughput"],
    ),
    ("What projects do I have in my DigitalOcean account?", &["projects_list"]),
    ("Show me every snapshot on my DO account, droplet and volume ones alike.", &["snapshots_list"]),
    (
        "How much Twilio usage have we racked up so far today? Break it down by category.",
        &["list_usage_record_today", "list_usage_record", "list_usage_record_daily"],
    ),
    (
        "Get VPC NAT gateway 70e1b58d-cdec-4e95-b3ee-2d4d95feff51 - what public IPs does it have and is it active?",
        &["vpcnatgateways_get"],
    ),
    (
        "Give me our Twilio usage broken out per year so I can compare 2023, 2024 and 2025.",
        &["list_usage_record_yearly"],
    ),
    (
        "Rename the DigitalOcean add-on 0b8e1a2c-4f3d-4a6e-9c3b-7d2f5e8a1b90 to prod-email-sendgrid.",
        &["addons_patch"],
    ),
    (
        "Kick off a fresh deploy of app 4f6c71e2-1e90-4762-9fee-6cc4a0a9f2cf and force a clean rebuild.",
        &["apps_create_deployment"],
    ),
    (
        "Before I do anything: can app 4f6c71e2-1e90-4762-9fee-6cc4a0a9f2cf safely be rolled back to deployment 3aa4d20e-5527-4c36-8f6b-3d6e0f7a1b2c? Any warnings?",
        &["apps_validate_rollback"],
    ),
    ("Delete the block storage volume named old-logs in region nyc1.", &["volumes_delete_by_name"]),
    ("Attach the volume called pg-data in nyc1 to droplet 3164494.", &["volume_actions_post_op_971"]),
    (
        "Apply the pending maintenance updates on database cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 right now instead of waiting for the maintenance window.",
        &["databases_install_update"],
    ),
    (
        "Set the SQL modes on MySQL cluster 7f3e2d1c-0b9a-4c8d-9e7f-6a5b4c3d2e1f to ANSI,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION,STRICT_ALL_TABLES.",
        &["databases_update_sql_mode", "databases_patch_config"],
    ),
    (
        "Add a CAA record to example.com so only letsencrypt.org is allowed to issue certificates for it.",
        &["domains_create_record_domain_record_caa"],
    ),
    (
        "Change DNS record 3352896 on example.com so it points at 162.10.66.0 instead.",
        &["domains_update_record", "domains_patch_record"],
    ),
    (
        "The update broke droplet 3164444 - restore it from backup image 12389723.",
        &["droplet_actions_post_droplet_action_restore"],
    ),
    (
        "Take droplets 49696269 and 49696270 out of firewall bb4b2611-3d72-467b-8602-280330ecd65c.",
        &["firewalls_delete_droplets"],
    ),
    (
        "I need upload URLs so I can push my evaluation dataset file support_qa.csv (about 2 MB) to DigitalOcean GenAI for agent evaluations.",
        &["genai_create_evaluation_dataset_file_upload_presigned_urls"],
    ),
    (
        "Register my OpenAI key sk-proj-9fQ2xLr7TbW3 with DigitalOcean GenAI under the name openai-prod so my agents can use GPT models.",
        &["genai_create_openai_api_key"],
    ),
    (
        "Move agents 1b418231-b7d6-11ef-bf8f-4e013e2ddde4 and 2c5a7e90-b7d6-11ef-bf8f-4e013e2ddde4 into GenAI workspace 9d8e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a.",
        &["genai_update_agents_workspace"],
    ),
    (
        "Set it up so agent 1b418231-b7d6-11ef-bf8f-4e013e2ddde4 hands billing questions off to agent 2c5a7e90-b7d6-11ef-bf8f-4e013e2ddde4; call the route billing-handoff.",
        &["genai_attach_agent"],
    ),
    (
        "Node 478247f8-b1bb-4f7a-8db9-2a5f8d4b8f8f in pool cdda885e-7663-40c8-bc74-3a036c66545d of cluster bd5f5959-5e1e-4205-a714-a914373942af is misbehaving. Drain it and delete it, no replacement.",
        &["kubernetes_delete_node"],
    ),
    (
        "Get rid of node pool cdda885e-7663-40c8-bc74-3a036c66545d in cluster bd5f5959-5e1e-4205-a714-a914373942af entirely.",
        &["kubernetes_delete_node_pool"],
    ),
    (
        "Tear down Kubernetes cluster bd5f5959-5e1e-4205-a714-a914373942af together with all of its load balancers and volumes - everything goes.",
        &["kubernetes_destroy_associated_resources_dangerous"],
    ),
    (
        "Rename my k8s cluster bd5f5959-5e1e-4205-a714-a914373942af to prod-cluster-02 and turn on automatic upgrades.",
        &["kubernetes_update_cluster"],
    ),
    (
        "We're not using load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 anymore, delete it.",
        &["load_balancers_delete"],
    ),
    (
        "Pull droplets 3164446 and 3164447 out of rotation on load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6.",
        &["load_balancers_remove_droplets"],
    ),
    (
        "Move our NFS share 0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d in atl1 off VPC 5a4981aa-9653-4bd1-bef5-d6bff52042e4 and onto VPC c140286f-e6ce-4131-8b7b-df4590ce8d6a.",
        &["nfs_create_action_nfs_action_reassign"],
    ),
    (
        "Rename partner attachment 5a4981aa-9653-4bd1-bef5-d6bff52042e4 to megaport-primary.",
        &["partner_attachments_patch_name"],
    ),
    (
        "Change which VPCs partner interconnect attachment 5a4981aa-9653-4bd1-bef5-d6bff52042e4 connects to: it should be c140286f-e6ce-4131-8b7b-df4590ce8d6a and 994a2735-dc84-11e8-b3c1-3cfdfea9f160.",
        &["partner_attachments_patch_vpc_ids"],
    ),
    (
        "Release the reserved IPv6 address 2409:40d0:fa:27dd:9b24:7074:7b85:eee6, we don't need it.",
        &["reserved_ipv6_delete"],
    ),
    (
        "Switch our DigitalOcean security scanning to the paid tier plan so we get full coverage.",
        &["security_update_settings_plan"],
    ),
    (
        "Vector database 3e8f4a6b-2c1d-4e5f-9a0b-7c6d5e4f3a2b is running out of memory - bump it up to the db-s-4vcpu-8gb size.",
        &["vector_databases_post_resize"],
    ),
];

const PARAPHRASES_8_OPENAI: Requests = &[
    (
        "Which organization roles does the group group_01J1F8ABCDXYZ have in our OpenAI org?",
        &["list_group_role_assignments"],
    ),
    (
        "Is user-abc123 a member of group group_01J2K9MNPQRST? Show me their membership.",
        &["retrieve_group_user"],
    ),
    (
        "Pull up the assignment of project role role_01J3VIEWER to user user-abc123 in project proj_abc123 - is it actually there?",
        &["retrieve_project_user_role"],
    ),
    (
        "Show me service account svc_acct_abc in OpenAI project proj_abc123 - its name, role and when it was created.",
        &["retrieve_project_service_account"],
    ),
    (
        "What inputs were sent along with response resp_67ccd2bed1ec8190b14f964abc054267? List them.",
        &["beta_list_input_items", "list_input_items"],
    ),
    (
        "What spending alerts have we configured for the whole OpenAI organization?",
        &["list_organization_spend_alerts"],
    ),
    (
        "Which files were in batch vsfb_abc123 of vector store vs_abc123, and did any of them fail?",
        &["list_files_in_vector_store_batch"],
    ),
    (
        "Switch my assistant asst_abc123 to gpt-4o and change its instructions to You are a concise support agent for Acme.",
        &["modify_assistant"],
    ),
    ("Tag run run_abc123 on thread thread_abc123 with metadata ticket=SUP-4411.", &["modify_run"]),
    ("Stop run run_abc123 on thread thread_abc123, it's been going forever.", &["cancel_run"]),
    (
        "Run run_abc123 on thread thread_abc123 is waiting on my function result: for tool call call_001 the output is {\"temp_c\": 22, \"sky\": \"sunny\"}. Send it back so the run continues.",
        &["submit_tool_ouputs_to_run"],
    ),
    (
        "Turn off certificates cert_abc123 and cert_def456 for the whole OpenAI org.",
        &["deactivate_organization_certificates"],
    ),
    (
        "Start a ChatKit session for end user user_8842 on workflow wf_68df4b13ab2c8190 so I can embed the chat widget.",
        &["create_chat_session_method"],
    ),
    (
        "Set metadata topic=billing on conversation conv_689667905b048191b4740501625afd940c7533ace33a2dab.",
        &["update_conversation"],
    ),
    (
        "Cancel eval run evalrun_67abd54d60ec8190832b46859da808f7 under eval eval_67abd54d9b0081909a86353f6fb9317a, it's using the wrong model.",
        &["cancel_eval_run"],
    ),
    ("Delete the Contractors 2024 group (group_01J4ZZCONTRACT) from our OpenAI org.", &["delete_group"]),
    ("Remove the hard spending cap on OpenAI project proj_abc123.", &["deleteprojectspendlimit"]),
    (
        "Take the project role role_01J3VIEWER away from user user-abc123 in project proj_abc123.",
        &["unassign_project_user_role"],
    ),
    (
        "Delete service account svc_acct_abc from project proj_abc123, that integration is retired.",
        &["delete_project_service_account"],
    ),
    (
        "Raise the gpt-4o rate limit rl-gpt-4o on project proj_abc123 to 500 requests per minute.",
        &["update_project_rate_limits"],
    ),
    (
        "Transfer the live realtime call rtc_u1_9c6574da8b8a41a18da9308f4ad974ce to sip:+14155550199@sip.example.com.",
        &["refer_realtime_call"],
    ),
    (
        "Create a custom role for our OpenAI organization called Billing Viewer that can only read usage and billing.",
        &["create_role"],
    ),
];

// Measured once, as written: 95.8 % by words (5 of 120 missed), 98.3 % with the model (2
// missed). The ranker before the change, computed from the same scores, finds 95.0 % (6 missed)
// and 96.7 % (4 missed): an easier draw than the sixth and seventh.
const PARAPHRASES_8_FLOOR: f64 = 95.0;
const PARAPHRASES_8_MODEL_FLOOR: f64 = 98.0;

/// A ninth draw of paraphrases (seed 20261213), drawn and written as the eighth was, before
/// either was measured: with it, the held-out measure of the ranker as it is.
const PARAPHRASES_9_SPOTIFY: Requests = &[
    ("What's the Spotify browse category with id 'dinner'? Show me its name and icon.", &["get_a_category"]),
    (
        "Get me the info for podcast episode 512ojhOuo1ktJprKbVcKyQ - title, length and release date.",
        &["get_an_episode", "get_multiple_episodes"],
    ),
    ("Which train stations can I travel from in Germany?", &["get_stations"]),
    ("How many pets does the store have in each status - available, pending, sold?", &["get_inventory"]),
    (
        "Give me the detailed beat, bar and section breakdown for track 11dFghVXANMlKmJXsNCbNl.",
        &["get_audio_analysis"],
    ),
    ("Which artists am I following on Spotify?", &["get_followed"]),
    ("Show me the public Spotify profile of user smedjan.", &["get_users_profile"]),
    (
        "Pay for train booking 1725ff48-ab45-4bb5-9d02-88745177dedb: 95.50 EUR on my Visa ending 4242, exp 12/27, name Jane Doe.",
        &["create_booking_payment"],
    ),
];

const PARAPHRASES_9_ASANA_BOX: Requests = &[
    (
        "Which AI agents do we have set up in our Asana workspace 1199284756301?",
        &["get_agents_for_workspace"],
    ),
    (
        "show me every resource allocation on the Asana project 1207788990012 - who's booked and for how much effort",
        &["get_allocations"],
    ),
    (
        "What security classification labels exist in our Box enterprise? I need the full list (Public, Internal, etc.) with their descriptions.",
        &[
            "get_metadata_templates_enterprise_security_classification_6_vmvo",
            "get_metadata_templates_id_id_schema",
        ],
    ),
    (
        "Can you pull up Box comment 448812930 and tell me who wrote it and what it says?",
        &["get_comments_id"],
    ),
    (
        "Which custom fields are attached to the Asana project 1209911223344?",
        &["get_custom_field_settings_for_project"],
    ),
    (
        "list all custom fields defined across workspace 1100223344 in asana",
        &["get_custom_fields_for_workspace"],
    ),
    (
        "Which outside email domains are we allowed to collaborate with in Box?",
        &["get_collaboration_whitelist_entries"],
    ),
    (
        "Look up Asana membership 1205566778899 for me - who is it for and what access level does it grant?",
        &["get_membership"],
    ),
    (
        "What projects are sitting in the 'Q3 Launches' portfolio (gid 1201112223334)?",
        &["get_items_for_portfolio"],
    ),
    ("Open the project brief 1204445556667 and show me its text.", &["get_project_brief"]),
    ("What project templates are available in our Asana workspace 1100223344?", &["get_project_templates"]),
    (
        "Give me the details of Asana project 1208877665544 - owner, due date, current status, that kind of thing.",
        &["get_project"],
    ),
    (
        "Which folders or enterprise scopes is Box retention policy 982312 currently applied to?",
        &["get_retention_policies_id_assignments"],
    ),
    (
        "what's the shared link URL for box file 1234567890? need to send it to a client",
        &["get_files_id_get_shared_link", "get_files_id"],
    ),
    (
        "Fetch information barrier report 77881 and tell me whether it has finished and what it found.",
        &["get_shield_information_barrier_reports_id"],
    ),
    (
        "Which restrictions are set up for information barrier segment 44210 in Box? i.e. which segments can't it collaborate with",
        &["get_shield_information_barrier_segment_restrictions"],
    ),
    (
        "Show me the name and description of the Box information barrier segment 44210.",
        &["get_shield_information_barrier_segments_id"],
    ),
    (
        "Who has been assigned the Box task 88812345 on the contract file?",
        &["get_tasks_id_assignments", "get_tasks_id"],
    ),
    ("Tell me about the Asana team 1201234500000 - its name, description and organization.", &["get_team"]),
    (
        "Get the details of time tracking category 1209000111222 (name, color, whether it's archived).",
        &["get_time_tracking_category"],
    ),
    (
        "Has timesheet 1209333444555 been approved yet? Check its approval status.",
        &["get_timesheet_approval_status"],
    ),
    (
        "Show me Box webhook 5432109 - what item is it watching, which triggers and where does it post?",
        &["get_webhooks_id"],
    ),
    (
        "Request access for me to the Asana project 1207654321098, with the note 'need to review the launch plan before Friday'.",
        &["create_access_request"],
    ),
    (
        "Change Asana allocation 1208123456789 so Priya is at 50% effort from June 2 to June 27.",
        &["update_allocation"],
    ),
    (
        "Reclassify Box file 555123987 from Internal to Confidential.",
        &["put_files_id_metadata_enterprise_security_classification_6_vmvoc", "put_files_id_metadata_id_id"],
    ),
    ("Delete the old 'Legacy Priority' custom field in Asana, gid 1202334455667.", &["delete_custom_field"]),
    ("Remove device pin 998127 in Box - that laptop was stolen.", &["delete_device_pinners_id"]),
    (
        "Start a bulk export of tasks 1204000000001, 1204000000002 and 1204000000003 from Asana with their name, assignee and due_on fields.",
        &["create_resource_export"],
    ),
    (
        "Take Jane out of the Marketing group in Box - her group membership id is 7788912.",
        &["delete_group_memberships_id"],
    ),
    (
        "Delete the Box-Slack integration mapping 2345678 - we archived that channel.",
        &["delete_integration_mappings_slack_id"],
    ),
    (
        "Invite the existing Box user jane.doe@acme.com to join our Box enterprise 11223344.",
        &["post_invites"],
    ),
    (
        "Remove Asana membership 1207765432100 - Bob shouldn't have access to that project anymore.",
        &["delete_membership"],
    ),
    ("Set Asana membership 1207765432100 to comment-only access.", &["update_membership"]),
    (
        "Rename portfolio 1201112223334 to 'FY26 Initiatives' and make it public to the workspace.",
        &["update_portfolio"],
    ),
    ("Update rate 1209555666777 to $150 per hour.", &["update_rate"]),
    (
        "Create a shared link for Box folder 98765432 that anyone with the link can open.",
        &["put_folders_id_add_shared_link", "put_folders_id_update_shared_link", "put_folders_id"],
    ),
    (
        "Task 1201999888777 no longer blocks tasks 1201999888778 and 1201999888779 - unlink them.",
        &["remove_dependents_for_task"],
    ),
];

const PARAPHRASES_9_DIGITALOCEAN_TWILIO: Requests = &[
    (
        "In Twilio, show me the authorized Connect app CN47260e643654388faabe8aaa18ea6756 and what permissions we granted it.",
        &["fetch_authorized_connect_app"],
    ),
    (
        "Which third-party Connect apps have been authorized on my Twilio account?",
        &["list_authorized_connect_app"],
    ),
    ("What's the status of my DigitalOcean batch inference job batch_8f3a2c91?", &["inference_get_batch"]),
    (
        "Show me the line items on DigitalOcean invoice 22737513-0ea7-4206-8ceb-98a575af7681.",
        &["invoices_get_by_uuid"],
    ),
    ("list my cdn endpoints on digitalocean", &["cdn_list_endpoints"]),
    (
        "Get the details (duration, status, start time) of recording RE557ce644e5ab84fa21cc21112e22c485 from conference CFbbe46ff1274e283f7e3ac1df0072ab39.",
        &["fetch_conference_recording", "fetch_recording"],
    ),
    (
        "Which SQL modes are enabled on my MySQL cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30?",
        &["databases_get_sql_mode", "databases_get_config"],
    ),
    (
        "Show me the details of dedicated inference 6a3b1f2e-90c4-4d8a-b1c7-2f5e8a9d0c11 - model, GPU, endpoint and status.",
        &["dedicated_inferences_get"],
    ),
    (
        "Look up acme-shop.com in my DigitalOcean DNS - what TTL does it have and what's the zone file?",
        &["domains_get"],
    ),
    (
        "Show me the rules and attached droplets of firewall bb4b2611-3d72-467b-8602-280330ecd65c.",
        &["firewalls_get"],
    ),
    (
        "Did evaluation run 4b2c7e10-5d3a-11ef-bf8f-4e013e2ddde4 finish? What's its status?",
        &["genai_get_evaluation_run"],
    ),
    (
        "Pull up evaluation test case 1c2d3e4f-5d3a-11ef-bf8f-4e013e2ddde4 - which dataset and metrics does it use?",
        &["genai_get_evaluation_test_case"],
    ),
    (
        "List the evaluation test cases that belong to GenAI workspace 7e1f9a20-5d3a-11ef-bf8f-4e013e2ddde4.",
        &["genai_list_evaluation_test_cases_by_workspace"],
    ),
    (
        "Which user and groups am I authenticated as on Kubernetes cluster bd5f5959-5e1e-4205-a714-a914373942af?",
        &["kubernetes_get_cluster_user"],
    ),
    (
        "Are there any status messages or warnings for my DOKS cluster bd5f5959-5e1e-4205-a714-a914373942af?",
        &["kubernetes_get_status_messages"],
    ),
    ("What load balancers do I have running?", &["load_balancers_list"]),
    (
        "Show me memory usage for MySQL cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 over the last 6 hours.",
        &["monitoring_get_database_mysql_memory_usage"],
    ),
    (
        "Graph the target average memory utilization metric of autoscale pool 0d3db13e-a604-4944-9827-7ec2642d32ac over the past 24 hours.",
        &["monitoring_get_droplet_autoscale_target_memory_utilization"],
    ),
    (
        "What's the p95 HTTP session duration on the droplets behind load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 for the last hour?",
        &["monitoring_get_lb_droplets_http_session_duration_95p"],
    ),
    (
        "How many active connections is load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6 handling right now?",
        &["monitoring_get_lb_frontend_connections_current"],
    ),
    ("Show me the findings from the most recent DigitalOcean security scan.", &["security_get_latest_scan"]),
    (
        "Which IP addresses are in Twilio SIP IP access control list AL95a47094615fe05b7c17e62a7877836c?",
        &["list_sip_ip_address"],
    ),
    (
        "Show me the SSH key with fingerprint 3b:16:bf:e4:8b:00:8b:b8:59:8c:a9:d3:f0:19:45:fa.",
        &["ssh_keys_get"],
    ),
    (
        "Is uptime check 4de7ac8b-495b-4884-9a69-1050c6793cd6 currently up or down in each region?",
        &["uptime_get_check_state"],
    ),
    (
        "Cancel job invocation 7c1e2a4b-9f3d-4e5a-8b6c-0d1e2f3a4b5c on my App Platform app 5f2a9c1e-3b4d-4e6f-8a9b-0c1d2e3f4a5b, it's stuck.",
        &["apps_cancel_job_invocation"],
    ),
    (
        "Undo the rollback on app 5f2a9c1e-3b4d-4e6f-8a9b-0c1d2e3f4a5b and put it back on the deployment it was running before.",
        &["apps_revert_rollback"],
    ),
    (
        "Delete block storage volume 7724db7c-e098-11e5-b522-000f53304e51, it's no longer attached to anything.",
        &["volumes_delete"],
    ),
    (
        "Grow volume 7724db7c-e098-11e5-b522-000f53304e51 in nyc1 to 500 GiB.",
        &["volume_actions_post_by_id_op_969"],
    ),
    (
        "I want to bring our own IP range 203.0.113.0/24 to DigitalOcean in nyc3 - here's the signed ROA message: 'a1b2c3d4e5'.",
        &["byoip_prefixes_create"],
    ),
    (
        "On Postgres cluster 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30, let the existing user 'replicator' do logical replication.",
        &["databases_update_user"],
    ),
    (
        "Spin up a dedicated inference endpoint running llama-3.1-8b-instruct on one H100 in tor1, call it 'support-llm'.",
        &["dedicated_inferences_create"],
    ),
    (
        "Generate a new access token named 'ci-pipeline' for dedicated inference 6a3b1f2e-90c4-4d8a-b1c7-2f5e8a9d0c11.",
        &["dedicated_inferences_create_tokens"],
    ),
    ("Add an SOA record to acme-shop.com with a TTL of 1800.", &["domains_create_record_domain_record_soa"]),
    ("Remove acme-old.org from DigitalOcean DNS completely.", &["domains_delete"]),
    (
        "Change autoscale pool 0d3db13e-a604-4944-9827-7ec2642d32ac to scale between 2 and 10 droplets with a 60% CPU target.",
        &["autoscalepools_update"],
    ),
    (
        "Destroy droplet 3164444 along with its volume ba49449a-7435-11ea-b89e-0a58ac14480f and snapshot 61486916, but keep the reserved IP.",
        &["droplets_destroy_with_associated_resources_selective"],
    ),
    (
        "Put droplets 49696269 and 49696270 behind firewall bb4b2611-3d72-467b-8602-280330ecd65c.",
        &["firewalls_assign_droplets"],
    ),
    (
        "Create a new firewall called 'egress-https' for droplet 8043964 that only allows outbound TCP 443 to anywhere.",
        &["firewalls_create_outbound_rules"],
    ),
    ("Create a Functions namespace labeled 'webhooks' in nyc1.", &["functions_create_namespace"]),
    (
        "Make a custom eval metric called 'Politeness' that scores agent replies 1-5 on how courteous they are.",
        &["genai_create_custom_evaluation_metric"],
    ),
    (
        "Rename model evaluation run 2f8e1d3c-6a4b-4c5d-9e7f-0a1b2c3d4e5f to 'baseline-v2' and update its description.",
        &["genai_update_model_evaluation_run"],
    ),
    (
        "Hook up knowledge bases 9a6e3975-b0c6-11ef-bf8f-4e013e2ddde4 and 683c5b2e-b0c6-11ef-bf8f-4e013e2ddde4 to agent 1b418231-b7d6-11ef-bf8f-4e013e2ddde4.",
        &["genai_attach_knowledge_bases"],
    ),
    (
        "Roll my GenAI agent 1b418231-b7d6-11ef-bf8f-4e013e2ddde4 back to version c3658d8b5c05494cd03ce042926ef08157889ed54b1b74b5ee0b3d66dcee4b73.",
        &["genai_rollback_to_agent_version"],
    ),
    (
        "Add the Spaces bucket 'product-docs' in nyc3 as a new data source for knowledge base 9a6e3975-b0c6-11ef-bf8f-4e013e2ddde4.",
        &["genai_create_knowledge_base_data_source"],
    ),
    ("delete my custom image 7938391", &["images_delete"]),
    (
        "Tear down k8s cluster bd5f5959-5e1e-4205-a714-a914373942af together with load balancer 4de7ac8b-495b-4884-9a69-1050c6793cd6, but leave all its volumes alone.",
        &["kubernetes_destroy_associated_resources_selective"],
    ),
    (
        "Detach the registries 'acme-prod' and 'acme-staging' from clusters bd5f5959-5e1e-4205-a714-a914373942af and 50c2f44a-1c4e-4f3e-9b8a-7d6c5e4f3a2b.",
        &["kubernetes_remove_registries"],
    ),
    (
        "Get rid of logging destination 01f30bfa-319a-4769-ba95-8d43d2f7f7a3, we moved to another provider.",
        &["monitoring_delete_destination"],
    ),
    (
        "Change alert policy 78b3da62-27e5-49ba-ac70-5db0b5935c64 so it fires when CPU goes above 90% for 10 minutes and emails ops@acme.com.",
        &["monitoring_update_alert_policy"],
    ),
    ("Delete NFS snapshot 0a1b2c3d-4e5f-6789-abcd-ef0123456789 in atl1.", &["nfs_delete_snapshot"]),
    (
        "Install the monitoring and cert-manager 1-click apps on my Kubernetes cluster bd5f5959-5e1e-4205-a714-a914373942af.",
        &["one_clicks_install_kubernetes"],
    ),
    (
        "Remove the verified caller ID PNe905d7e6b410746a0fb08c57e5a186f3 from my Twilio account.",
        &["delete_outgoing_caller_id"],
    ),
    (
        "Bump the max size of Twilio queue QU5ef8732a3c49700934481addd5ce1659 to 200 and rename it 'support-overflow'.",
        &["update_queue"],
    ),
    ("create a tag named frontend so I can group my droplets", &["tags_create"]),
    (
        "Delete the Twilio usage trigger UTc142bed7b38c48f5b8e2a2b1e6e6e6e6, we don't need that alert anymore.",
        &["delete_usage_trigger"],
    ),
];

const PARAPHRASES_9_OPENAI: Requests = &[
    (
        "What steps did run run_abc123 take in thread thread_xyz789? I want to see the tool calls.",
        &["list_run_steps"],
    ),
    ("What's the status of batch batch_abc123 - how many requests done and failed?", &["retrieve_batch"]),
    ("Which certificates are set up on OpenAI project proj_abc123?", &["list_project_certificates"]),
    ("Show me the ChatKit threads for user user_123, newest first.", &["list_threads_method"]),
    ("Who is in the group group_01J1F8ABCDXYZ in our OpenAI org?", &["list_group_users"]),
    ("list everyone who's a member of project proj_abc123", &["list_project_users"]),
    (
        "How many code interpreter sessions did our org use over the last 7 days?",
        &["usage_code_interpreter_sessions"],
    ),
    ("How many moderation requests did we make in March 2025, broken down by model?", &["usage_moderations"]),
    (
        "Start a new thread with assistant asst_abc123 asking 'Summarize our Q3 sales numbers' and run it right away.",
        &["create_thread_and_run"],
    ),
    (
        "Upload consent_jane.wav as Jane Doe's consent recording for a custom voice, language English.",
        &["create_voice_consent"],
    ),
    (
        "Add a user message 'What about shipping to Canada?' to conversation conv_123abc.",
        &["create_conversation_items"],
    ),
    (
        "Kick off a new run of eval eval_67abd54d9b0081909a86353f6fb9317a against gpt-4o-mini using the data in file file-4XyZ9.",
        &["create_eval_run"],
    ),
    ("Take the org role role_456 away from group group_01J1F8ABCDXYZ.", &["unassign_group_role"]),
    ("Rename OpenAI project proj_abc123 to 'Customer Support Bot'.", &["modify_project"]),
    (
        "Restrict project proj_abc123 so it can only use gpt-4o and gpt-4o-mini.",
        &["update_project_model_permissions"],
    ),
    ("Delete the custom role role_789 from project proj_abc123.", &["delete_project_role"]),
    ("Delete skill skill_123abc, we don't use it anymore.", &["delete_skill"]),
    ("Make version 3 the default for skill skill_123abc.", &["update_skill_default_version"]),
    ("Remove the organization-wide spend alert sa_123abc.", &["delete_organization_spend_alert"]),
    ("Permanently delete the generated video video_68d7512d07848190 and its files.", &["delete_video"]),
];

// Measured once, as written: 93.3 % by words (8 of 120 missed), 96.7 % with the model (4
// missed); the ranker before the change 92.5 % (9 missed) and 96.7 % (4 missed).
const PARAPHRASES_9_FLOOR: f64 = 93.0;
const PARAPHRASES_9_MODEL_FLOOR: f64 = 96.0;

// The eighth and ninth draws, the 240 paraphrases none of the ranker's choices saw: 94.6 % by
// words (13 missed), 97.5 % with the model (6 missed), over the goal of 90 %. Their writer had
// the same instructions as the earlier draws' in a prompt written anew, and the ranker before
// the change finds 93.8 % / 96.7 % of them against 90.0 % / 88.9 % of the fifth to seventh
// draws: these two are easier, by chance or by their writing. Over the fifth to ninth draws, the
// 600 requests that ranker had never seen, it found 91.5 % by words and 92.0 % with the model.
const PARAPHRASES_HELD_OUT_3_FLOOR: f64 = 94.0;
const PARAPHRASES_HELD_OUT_3_MODEL_FLOOR: f64 = 97.0;

// The third and fourth draws together: 85.8 % by words (34 missed); with the model 87.5 % (30
// missed) before the fusion by scores, 90.8 % (22 missed) with it.
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 87.5 % by words (30
// missed), 92.1 % with the model (19 missed).
const PARAPHRASES_HELD_OUT_FLOOR: f64 = 87.0;
const PARAPHRASES_HELD_OUT_MODEL_FLOOR: f64 = 92.0;

// The fifth to seventh draws, the 360 paraphrases none of the ranker's choices saw: 90.0 % by
// words (36 missed), 88.9 % with the model (40 missed; 86.9 %, 47 missed, with the fusion by
// rank). The goal of 90 % with the model is not met.
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 91.1 % by words (32
// missed), 91.4 % with the model (31 missed): no held-out figure any more, these draws were in the
// pool the change was chosen on.
const PARAPHRASES_HELD_OUT_2_FLOOR: f64 = 91.0;
const PARAPHRASES_HELD_OUT_2_MODEL_FLOOR: f64 = 91.0;

// All nine draws, 1040 paraphrases of randomly drawn operations (the first seven chose the
// ranker's constants): 91.2 % by words (91 missed), 93.8 % with the model (64 missed). The first
// seven alone: 88.5 % / 90.9 % before the request's effect was read from more openings and the
// semantic spread given a floor, 90.2 % / 92.8 % (78 and 58 missed) with them.
const PARAPHRASES_ALL_FLOOR: f64 = 91.0;
const PARAPHRASES_ALL_MODEL_FLOOR: f64 = 93.0;

/// The tables of several documents in one gateway, as two `[[domains]]` would serve them: a
/// tool name an earlier document gave (`query_events`) is the later one's with its document's
/// name (`query_events_box`).
fn corpus_gateway_tables(
    documents: &[(Vec<toolgate_schema::RouteTable>, &str)],
) -> Vec<toolgate_schema::RouteTable> {
    let mut tables: Vec<toolgate_schema::RouteTable> = Vec::new();
    for (document, name) in documents {
        for table in document {
            let mut table = table.clone();
            if tables.iter().any(|t| t.tool == table.tool) {
                table.tool = format!("{}_{name}", table.tool);
            }
            tables.push(table);
        }
    }
    tables
}

// Measured at 36b0805, before any change of the ranker was measured on it: 56.2 % by words
// (28 of 64 missed), 68.8 % with the model (20 missed). Then once, with the variant chosen on
// the other sets (about sentences embedded one by one, their words counted): 62.5 % by words
// (24 missed), 68.8 % with the model (20 missed). Then with the path items' summaries and
// descriptions in the tables' `about` (2546344): 60.9 % by words (25 missed), 73.4 % with the
// model (17 missed). Then with the request's effect counted (2026-12-06): 62.5 % by words (24
// missed), 76.6 % with the model (15 missed). Then with the rankings fused by their scores
// (see [`HELD_OUT_MODEL_FLOOR`]): 79.7 % with the model (13 missed). Written in the words of a
// user who does not know each API's vocabulary, this set is harder than the paraphrases: under
// the goal of 90 %.
// With the request's effect read from more openings, counting 0.5, and the semantic spread given a
// floor (2026-12-06, chosen on the development sets and the first seven draws): 62.5 % by words,
// 78.1 % with the model (14 missed), one fewer.
const HELD_OUT_3_FLOOR: f64 = 62.0;
const HELD_OUT_3_MODEL_FLOOR: f64 = 78.0;

/// What a set is asked of: the documents of one deployment.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Docs {
    /// [`DOCUMENTS`]: Petstore, Train Travel and Spotify.
    First,
    AsanaBox,
    DigitalOceanTwilio,
    OpenAi,
}

impl Docs {
    const ALL: [Docs; 4] = [Docs::First, Docs::AsanaBox, Docs::DigitalOceanTwilio, Docs::OpenAi];

    fn tables(self) -> Vec<toolgate_schema::RouteTable> {
        match self {
            Docs::First => first_tables(),
            Docs::AsanaBox => corpus_gateway_tables(&[
                corpus_tables("asana_oas.yaml.gz", "asana"),
                corpus_tables("box-openapi.json.gz", "box"),
            ]),
            Docs::DigitalOceanTwilio => {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/openapi/digitalocean/specification/DigitalOcean-public.v2.yaml");
                let import = toolgate_openapi::import_file(&path, &toolgate_openapi::Options::default())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                corpus_gateway_tables(&[
                    (import.tables, "digitalocean"),
                    corpus_tables("twilio_api_v2010.json.gz", "twilio"),
                ])
            }
            Docs::OpenAi => corpus_tables("openai-openapi.yaml.gz", "openai").0,
        }
    }
}

/// Requests, each with the operations (or tools) that answer it.
type Requests = &'static [(&'static str, &'static [&'static str])];

/// Requests asked of several deployments: each part's documents and requests.
type Parts = &'static [(Docs, Requests)];

const HELD_OUT_3: Parts = &[
    (Docs::AsanaBox, HELD_OUT_3_ASANA_BOX),
    (Docs::DigitalOceanTwilio, HELD_OUT_3_DIGITALOCEAN_TWILIO),
    (Docs::OpenAi, HELD_OUT_3_OPENAI),
    (Docs::First, HELD_OUT_3_SPOTIFY),
];
const PARAPHRASES_1: Parts = &[
    (Docs::AsanaBox, PARAPHRASES_ASANA_BOX),
    (Docs::DigitalOceanTwilio, PARAPHRASES_DIGITALOCEAN_TWILIO),
    (Docs::OpenAi, PARAPHRASES_OPENAI),
    (Docs::First, PARAPHRASES_SPOTIFY),
];
const PARAPHRASES_2: Parts = &[
    (Docs::AsanaBox, PARAPHRASES_2_ASANA_BOX),
    (Docs::DigitalOceanTwilio, PARAPHRASES_2_DIGITALOCEAN_TWILIO),
    (Docs::OpenAi, PARAPHRASES_2_OPENAI),
    (Docs::First, PARAPHRASES_2_SPOTIFY),
];
const PARAPHRASES_3: Parts = &[
    (Docs::AsanaBox, PARAPHRASES_3_ASANA_BOX),
    (Docs::DigitalOceanTwilio, PARAPHRASES_3_DIGITALOCEAN_TWILIO),
    (Docs::OpenAi, PARAPHRASES_3_OPENAI),
    (Docs::First, PARAPHRASES_3_SPOTIFY),
];
const PARAPHRASES_4: Parts = &[
    (Docs::AsanaBox, PARAPHRASES_4_ASANA_BOX),
    (Docs::DigitalOceanTwilio, PARAPHRASES_4_DIGITALOCEAN_TWILIO),
    (Docs::OpenAi, PARAPHRASES_4_OPENAI),
    (Docs::First, PARAPHRASES_4_SPOTIFY),
];
const PARAPHRASES_5: Parts = &[
    (Docs::AsanaBox, PARAPHRASES_5_ASANA_BOX),
    (Docs::DigitalOceanTwilio, PARAPHRASES_5_DIGITALOCEAN_TWILIO),
    (Docs::OpenAi, PARAPHRASES_5_OPENAI),
    (Docs::First, PARAPHRASES_5_SPOTIFY),
];
const PARAPHRASES_6: Parts = &[
    (Docs::AsanaBox, PARAPHRASES_6_ASANA_BOX),
    (Docs::DigitalOceanTwilio, PARAPHRASES_6_DIGITALOCEAN_TWILIO),
    (Docs::OpenAi, PARAPHRASES_6_OPENAI),
    (Docs::First, PARAPHRASES_6_SPOTIFY),
];
const PARAPHRASES_7: Parts = &[
    (Docs::AsanaBox, PARAPHRASES_7_ASANA_BOX),
    (Docs::DigitalOceanTwilio, PARAPHRASES_7_DIGITALOCEAN_TWILIO),
    (Docs::OpenAi, PARAPHRASES_7_OPENAI),
    (Docs::First, PARAPHRASES_7_SPOTIFY),
];

const PARAPHRASES_8: Parts = &[
    (Docs::AsanaBox, PARAPHRASES_8_ASANA_BOX),
    (Docs::DigitalOceanTwilio, PARAPHRASES_8_DIGITALOCEAN_TWILIO),
    (Docs::OpenAi, PARAPHRASES_8_OPENAI),
    (Docs::First, PARAPHRASES_8_SPOTIFY),
];

const PARAPHRASES_9: Parts = &[
    (Docs::AsanaBox, PARAPHRASES_9_ASANA_BOX),
    (Docs::DigitalOceanTwilio, PARAPHRASES_9_DIGITALOCEAN_TWILIO),
    (Docs::OpenAi, PARAPHRASES_9_OPENAI),
    (Docs::First, PARAPHRASES_9_SPOTIFY),
];

/// A set of requests: its name, and its parts (joined), with the floor of its rate by words
/// alone and with the model (%).
struct Set {
    name: &'static str,
    parts: &'static [Parts],
    floor: f64,
    model_floor: f64,
}

const SETS: &[Set] = &[
    Set { name: "first set", parts: &[&[(Docs::First, QUERIES)]], floor: 90.0, model_floor: 90.0 },
    Set {
        name: "validation, OpenAI",
        parts: &[&[(Docs::OpenAi, VALIDATION)]],
        floor: VALIDATION_FLOOR,
        model_floor: VALIDATION_MODEL_FLOOR,
    },
    Set {
        name: "held out, Asana and Box",
        parts: &[&[(Docs::AsanaBox, HELD_OUT)]],
        floor: HELD_OUT_FLOOR,
        model_floor: HELD_OUT_MODEL_FLOOR,
    },
    Set {
        name: "held out, DigitalOcean and Twilio",
        parts: &[&[(Docs::DigitalOceanTwilio, HELD_OUT_2)]],
        floor: HELD_OUT_2_FLOOR,
        model_floor: HELD_OUT_2_MODEL_FLOOR,
    },
    Set {
        name: "held out 3, six documents",
        parts: &[HELD_OUT_3],
        floor: HELD_OUT_3_FLOOR,
        model_floor: HELD_OUT_3_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases of random operations",
        parts: &[PARAPHRASES_1],
        floor: PARAPHRASES_FLOOR,
        model_floor: PARAPHRASES_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, second draw",
        parts: &[PARAPHRASES_2],
        floor: PARAPHRASES_2_FLOOR,
        model_floor: PARAPHRASES_2_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, both draws",
        parts: &[PARAPHRASES_1, PARAPHRASES_2],
        floor: PARAPHRASES_BOTH_FLOOR,
        model_floor: PARAPHRASES_BOTH_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, third draw",
        parts: &[PARAPHRASES_3],
        floor: PARAPHRASES_3_FLOOR,
        model_floor: PARAPHRASES_3_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, fourth draw",
        parts: &[PARAPHRASES_4],
        floor: PARAPHRASES_4_FLOOR,
        model_floor: PARAPHRASES_4_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, third and fourth draws",
        parts: &[PARAPHRASES_3, PARAPHRASES_4],
        floor: PARAPHRASES_HELD_OUT_FLOOR,
        model_floor: PARAPHRASES_HELD_OUT_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, fifth draw",
        parts: &[PARAPHRASES_5],
        floor: PARAPHRASES_5_FLOOR,
        model_floor: PARAPHRASES_5_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, sixth draw",
        parts: &[PARAPHRASES_6],
        floor: PARAPHRASES_6_FLOOR,
        model_floor: PARAPHRASES_6_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, seventh draw",
        parts: &[PARAPHRASES_7],
        floor: PARAPHRASES_7_FLOOR,
        model_floor: PARAPHRASES_7_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, eighth draw",
        parts: &[PARAPHRASES_8],
        floor: PARAPHRASES_8_FLOOR,
        model_floor: PARAPHRASES_8_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, ninth draw",
        parts: &[PARAPHRASES_9],
        floor: PARAPHRASES_9_FLOOR,
        model_floor: PARAPHRASES_9_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, eighth and ninth draws",
        parts: &[PARAPHRASES_8, PARAPHRASES_9],
        floor: PARAPHRASES_HELD_OUT_3_FLOOR,
        model_floor: PARAPHRASES_HELD_OUT_3_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, fifth to seventh draws",
        parts: &[PARAPHRASES_5, PARAPHRASES_6, PARAPHRASES_7],
        floor: PARAPHRASES_HELD_OUT_2_FLOOR,
        model_floor: PARAPHRASES_HELD_OUT_2_MODEL_FLOOR,
    },
    Set {
        name: "paraphrases, all nine draws",
        parts: &[
            PARAPHRASES_1,
            PARAPHRASES_2,
            PARAPHRASES_3,
            PARAPHRASES_4,
            PARAPHRASES_5,
            PARAPHRASES_6,
            PARAPHRASES_7,
            PARAPHRASES_8,
            PARAPHRASES_9,
        ],
        floor: PARAPHRASES_ALL_FLOOR,
        model_floor: PARAPHRASES_ALL_MODEL_FLOOR,
    },
];

#[test]
fn every_set_finds_the_right_tool_in_the_first_three_by_words() {
    every_set(None, "by words");
}

#[test]
fn every_set_finds_the_right_tool_in_the_first_three_with_the_model() {
    let Some(model) = model() else { return };
    every_set(Some(model), "by words and meaning");
}

/// Ask each gateway (built side by side, one thread each) every request of [`SETS`] meant for
/// it; print each set's rate of requests whose right tool is in the first three, with the
/// misses, and fail where a set is under its floor.
fn every_set(embedder: Option<Arc<dyn toolgate_gateway::Embedder>>, label: &str) {
    // Each part's misses (by set and part), one per request, `None` for a hit.
    type Answers = Vec<((usize, usize), Vec<Option<String>>)>;
    let answers: Answers = std::thread::scope(|scope| {
        let running: Vec<_> = Docs::ALL
            .into_iter()
            .map(|docs| {
                let embedder = embedder.clone();
                scope.spawn(move || {
                    let started = std::time::Instant::now();
                    let tables = docs.tables();
                    let gateway = gateway_of(&tables, embedder);
                    let mut answers = Answers::new();
                    for (s, set) in SETS.iter().enumerate() {
                        for (p, (_, requests)) in
                            set.parts.iter().copied().flatten().enumerate().filter(|(_, (d, _))| *d == docs)
                        {
                            let misses = requests.iter().map(|r| miss(&gateway, &tables, r)).collect();
                            answers.push(((s, p), misses));
                        }
                    }
                    let seconds = started.elapsed().as_secs_f64();
                    println!("discovery ({label}): {docs:?} built and asked in {seconds:.1} s");
                    answers
                })
            })
            .collect();
        running.into_iter().flat_map(|thread| thread.join().unwrap()).collect()
    });
    let mut under = Vec::new();
    for (s, set) in SETS.iter().enumerate() {
        let parts = answers.iter().filter(|((of, _), _)| *of == s);
        let total: usize = parts.clone().map(|(_, part)| part.len()).sum();
        let misses: Vec<&String> = parts.flat_map(|(_, part)| part.iter().flatten()).collect();
        assert!(total >= 30, "{}: {total} requests", set.name);
        let rate = 100.0 * (total - misses.len()) as f64 / total as f64;
        println!(
            "discovery ({label}): {}: the right tool in the first three for {rate:.1} % of {total} requests",
            set.name
        );
        for miss in &misses {
            println!("  missed {miss}");
        }
        let floor = if embedder.is_some() { set.model_floor } else { set.floor };
        if rate < floor {
            under.push(format!("{}: {rate:.1} % (floor {floor} %, goal 90 %)", set.name));
        }
    }
    assert!(under.is_empty(), "{}", under.join("\n"));
}

/// `None` when one of the tools answering `request` (an operation, or a tool by its name) is
/// among the first three `gateway` finds for its words; else what it found instead.
fn miss(
    gateway: &Gateway,
    tables: &[toolgate_schema::RouteTable],
    (query, answers): &(&str, &[&str]),
) -> Option<String> {
    let caller = Caller::new("u", gateway.policy().hierarchy().highest());
    let expected: Vec<&str> = answers
        .iter()
        .map(|answer| {
            tables
                .iter()
                .find(|t| t.route(answer).is_some() || t.tool == *answer)
                .map(|t| t.tool.as_str())
                .unwrap_or_else(|| panic!("no operation or tool {answer} was imported"))
        })
        .collect();
    let found: Vec<String> = gateway
        .search(&caller, &Filter::default().text(*query))
        .into_iter()
        .take(3)
        .map(|s| s.name)
        .collect();
    let hit = found.iter().any(|n| expected.contains(&n.as_str()));
    (!hit).then(|| format!("{query:?}: expected {expected:?} ({answers:?}), first three {found:?}"))
}
