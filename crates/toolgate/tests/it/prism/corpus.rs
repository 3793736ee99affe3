//! The documents of the corpus (`crates/toolgate/tests/openapi/`, sources and licences in its
//! SOURCE.md), one test each, and what each is known to lack: an operation whose calls
//! Prism refuses, whose answer toolgate cannot read, or whose valid arguments toolgate
//! refuses is listed in `known` with the cause, so that the test holds the current truth
//! exactly (a fixed gap fails it until removed from the list; a new one fails it too).

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::Outcome;

/// One document of the corpus.
pub(crate) struct Doc {
    /// Its name in the report.
    pub(crate) name: &'static str,
    /// Its file under `tests/openapi/` (a `.gz` is unpacked first).
    pub(crate) file: &'static str,
    /// The `[[domains]]` name it is served as.
    pub(crate) domain: &'static str,
    /// The header and value of the domain's static credential (what Prism checks is there).
    pub(crate) credential: (&'static str, &'static str),
    /// The operations with a known gap, and why.
    pub(crate) known: &'static [(&'static str, &'static str)],
}

/// The corpus folder.
pub(crate) fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/openapi"))
}

const BEARER: (&str, &str) = ("Authorization", "Bearer corpus-test-token");

async fn check(doc: &Doc) {
    let Some(figures) = super::run(doc).await else { return };
    println!("{}", figures.report());
    let valid: Vec<_> = figures.calls.iter().filter(|c| c.outcome == Outcome::Valid).collect();
    // At least ten operations each called validly at least once (every one of a document
    // that has fewer: Train Travel has seven).
    let valid_ops: BTreeSet<&str> = valid.iter().map(|c| c.op.as_str()).collect();
    assert!(
        valid_ops.len() >= 10 || valid_ops.len() == figures.mapped,
        "{}: only {} operations called validly: {valid_ops:?}\n{}",
        doc.name,
        valid_ops.len(),
        figures.report()
    );
    let features = figures.features();
    assert!(features.contains("read") && features.contains("write"), "{}: {features:?}", doc.name);
    let gaps: BTreeSet<String> = figures.gaps().into_keys().collect();
    let known: BTreeSet<String> = doc.known.iter().map(|(op, _)| (*op).to_owned()).collect();
    assert_eq!(
        gaps.difference(&known).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "{}: new gaps (fix them, or list them with the cause)\n{}",
        doc.name,
        figures.report()
    );
    assert_eq!(
        known.difference(&gaps).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "{}: listed gaps that hold no more: take them off the list\n{}",
        doc.name,
        figures.report()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn petstore_3_0_json() {
    check(&Doc {
        name: "Swagger Petstore 3.0 (JSON)",
        file: "petstore-3.0.json",
        domain: "petstore",
        credential: BEARER,
        // `get_inventory` and `get_pet_by_id` take the `api_key` scheme (OAuth the others): their
        // routes name it, and the domain gives it the credential the import's `schemes` line names.
        known: &[],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn petstore_swagger_2_0_yaml() {
    // Read as the OpenAPI 3.0 document it maps to; Prism mocks the 2.0 document itself.
    check(&Doc {
        name: "Swagger Petstore 2.0 (YAML)",
        file: "petstore-swagger-2.0.yaml",
        domain: "petstore_v2",
        credential: BEARER,
        known: &[
            // Prism, not toolgate: for a 2.0 operation with no `consumes` (here or global) it
            // takes `{}`, the body of the required-fields call (User and Order require none),
            // as "no supported content types, but request included a non-empty body"; the
            // every-field call of each is valid.
            ("create_user", "Prism: a `{}` body of a 2.0 operation without `consumes`"),
            ("place_order", "Prism: a `{}` body of a 2.0 operation without `consumes`"),
            ("update_user", "Prism: a `{}` body of a 2.0 operation without `consumes`"),
            // Prism, not toolgate: @stoplight/http-spec gives a 2.0 `body` parameter one media
            // type per `consumes` entry, none here, so Prism refuses every non-empty body of
            // these (415 "No supported content types, but request included a non-empty body",
            // the array as well as `[]`); the users array, the only field, is their only call.
            ("create_users_with_array_input", "Prism: any body of a 2.0 operation without `consumes`"),
            ("create_users_with_list_input", "Prism: any body of a 2.0 operation without `consumes`"),
        ],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn train_travel_3_1_yaml() {
    check(&Doc {
        name: "Train Travel 3.1 (YAML)",
        file: "train-travel-3.1.yaml",
        domain: "train_travel",
        credential: BEARER,
        // `create_booking_payment`'s `source` (a oneOf of card | bank account told apart by
        // a 3.1 `const`) is sent as one of its branches since 1f93449.
        known: &[],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn spotify_3_0_yaml() {
    check(&Doc {
        name: "Spotify Web API 3.0 (YAML)",
        file: "spotify-fixed-open-api.yml",
        domain: "spotify",
        credential: BEARER,
        known: &[],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn box_3_0_json() {
    check(&Doc {
        name: "Box Platform 3.0 (JSON)",
        file: "box-openapi.json.gz",
        domain: "box",
        credential: BEARER,
        known: &[
            // `mdfilters`, an array of objects in the query, sent as JSON text: Prism reads a string.
            ("get_search", "a query parameter of the every-field call refused by Prism"),
            // Prism, not toolgate: it checks these against another operation of the same path
            // (`/oauth2/token#refresh`; `/folders/{folder_id}` without `#remove_shared_link`).
            ("post_oauth2_revoke", "Prism matches /oauth2/token#refresh"),
            ("put_folders_id_remove_shared_link", "Prism matches the path without #fragment"),
            ("put_web_links_id_remove_shared_link", "Prism matches the path without #fragment"),
            // Prism, not toolgate: it reads every multipart part as a string, so the JSON part
            // `attributes` (an object, `Content-Type: application/json` as OpenAPI's default
            // for an object part says, and as Box takes it) "must be object".
            ("post_files_content", "Prism reads a multipart JSON part as a string"),
            ("post_files_id_content", "Prism reads a multipart JSON part as a string"),
        ],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_3_1_yaml() {
    check(&Doc {
        name: "OpenAI 3.1 (YAML)",
        file: "openai-openapi.yaml.gz",
        domain: "openai",
        credential: BEARER,
        known: &[
            // Prism, not toolgate: it reads every multipart part as text, so an object part
            // (`expires_after`, sent as JSON) "must be object" and an array (`include`, one part
            // per item) "must be array", as with Twilio's form arrays and Box's `attributes`.
            ("create_file", "Prism reads multipart object and array parts as strings"),
            ("create_transcription", "Prism reads multipart object and array parts as strings"),
        ],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn twilio_api_v2010_3_0_json() {
    check(&Doc {
        name: "Twilio api_v2010 3.0 (JSON)",
        file: "twilio_api_v2010.json.gz",
        domain: "twilio",
        // `Basic` of ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX:token.
        credential: ("Authorization", "Basic QUNYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYOnRva2Vu"),
        known: &[
            // Prism, not toolgate: an array of one item in a form body is the key once
            // (`MediaUrl=a`), which Prism reads as a string ("must be array").
            ("create_call", "Prism reads a one-item form array as a string"),
            ("create_call_recording", "Prism reads a one-item form array as a string"),
            ("create_message", "Prism reads a one-item form array as a string"),
            ("create_participant", "Prism reads a one-item form array as a string"),
            ("update_connect_app", "Prism reads a one-item form array as a string"),
        ],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn asana_3_0_yaml() {
    check(&Doc {
        name: "Asana 3.0 (YAML)",
        file: "asana_oas.yaml.gz",
        domain: "asana",
        credential: BEARER,
        known: &[],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn digitalocean_3_0_yaml_multi_file() {
    check(&Doc {
        name: "DigitalOcean 3.0 (YAML, multi-file)",
        file: "digitalocean/specification/DigitalOcean-public.v2.yaml",
        domain: "digitalocean",
        credential: BEARER,
        // A DELETE's required body is sent (`kubernetes_destroy_associated_resources_selective`)
        // and `droplet_ids`, a `properties` map given by `$ref`, keeps its type (array of integers).
        known: &[
            // The document, not toolgate: the body's `oneOf` branches overlap (the snapshot
            // action is the plain action plus an optional `name`, neither closed), so every body
            // matches both and Prism answers "must match exactly one schema in oneOf".
            ("droplet_actions_post_by_tag_droplet_action", "the document's oneOf branches overlap"),
            ("droplet_actions_post_by_tag_droplet_action_snapshot", "the document's oneOf branches overlap"),
        ],
    })
    .await;
}
