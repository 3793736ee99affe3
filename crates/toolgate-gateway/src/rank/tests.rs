use serde_json::json;
use toolgate_core::Effect;

use super::*;

fn spec(name: &str, description: &str) -> ToolSpec {
    ToolSpec::new(name, description, json!({"type": "object"}))
}

fn names<'a>(specs: &'a [ToolSpec], hits: &[usize]) -> Vec<&'a str> {
    hits.iter().map(|&i| specs[i].name.as_str()).collect()
}

/// A route-table tool: `ops` are (op, summary, parameter names).
fn table(name: &str, description: &str, ops: &[(&str, &str, &[&str])]) -> ToolSpec {
    let branches: Vec<Value> = ops
        .iter()
        .map(|(op, summary, params)| {
            let mut properties = serde_json::Map::new();
            properties.insert("op".into(), json!({"const": op, "description": summary}));
            for p in *params {
                properties.insert((*p).into(), json!({"type": "string"}));
            }
            json!({"properties": properties})
        })
        .collect();
    ToolSpec::new(name, description, json!({"oneOf": branches}))
}

#[test]
fn any_word_counts_and_the_better_match_comes_first() {
    let specs = [
        spec("query_files", "List files and read a file's content."),
        spec("update_tasks", "Create a task, assign it, complete it."),
        spec("query_weather", "The forecast for a city."),
    ];
    let index = Index::build(&specs, None);
    let hits = index.search("create a task on a file").unwrap();
    assert_eq!(names(&specs, &hits), ["update_tasks", "query_files"]);
    assert_eq!(index.search("nothing matches").unwrap(), Vec::<usize>::new());
    assert_eq!(index.search("the of"), None, "stop words only is no query");
    assert_eq!(index.search(""), None);
}

#[test]
fn operations_of_a_route_table_are_indexed() {
    let specs = [
        spec("update_things", "Changes things."),
        table(
            "update_items",
            "Changes items.",
            &[("post_tasks", "Create task", &[]), ("delete_tasks_id", "Remove task", &[])],
        ),
    ];
    let index = Index::build(&specs, None);
    assert_eq!(names(&specs, &index.search("remove a task").unwrap()), ["update_items"]);
    assert_eq!(names(&specs, &index.search("post").unwrap()), ["update_items"]);
    // Inflections and the general verbs: "deleting" is "remove"'s synonym's form.
    assert_eq!(names(&specs, &index.search("deleting tasks").unwrap()), ["update_items"]);
}

#[test]
fn a_tool_scores_as_its_best_operation() {
    // `update_box` mentions "folder" and "copy" often, but in different operations; the one
    // operation that copies a folder is `update_drive`'s.
    let specs = [
        table(
            "update_box",
            "Change box.",
            &[
                ("create_folder", "Create a folder", &[]),
                ("rename_folder", "Rename a folder", &[]),
                ("move_folder", "Move a folder", &[]),
                ("copy_file", "Copy a file", &[]),
                ("copy_link", "Copy a link", &[]),
            ],
        ),
        table(
            "update_drive",
            "Change drive.",
            &[("copy_folder", "Copy a folder", &[]), ("delete_file", "Delete a file", &[])],
        ),
    ];
    let index = Index::build(&specs, None);
    assert_eq!(index.search("copy a folder").unwrap()[0], 1);
}

#[test]
fn parameter_names_count_a_little() {
    let specs = [
        table(
            "query_numbers",
            "Read numbers.",
            &[("list_numbers", "List numbers", &["AreaCode", "PageSize"])],
        ),
        table("query_calls", "Read calls.", &[("list_calls", "List calls", &["PageSize"])]),
    ];
    let index = Index::build(&specs, None);
    assert_eq!(names(&specs, &index.search("area code").unwrap()), ["query_numbers"]);
}

#[test]
fn a_word_every_operation_of_one_table_repeats_is_still_rare() {
    // "watermark" is in `query_files`' description and so in every one of its operations'
    // documents; counted once for the tool, it stays the rare word it is.
    let mut ops: Vec<(String, String)> =
        (0..30).map(|i| (format!("get_file_{i}"), format!("Get file part {i}"))).collect();
    ops.push(("get_watermark".into(), "Get the watermark of a file".into()));
    let ops: Vec<(&str, &str, &[&str])> =
        ops.iter().map(|(o, s)| (o.as_str(), s.as_str(), &[][..])).collect();
    let listed: Vec<&str> = ops.iter().map(|o| o.1).collect();
    let specs = [
        table("query_files", &listed.join("; "), &ops),
        spec("query_marks", "Marks: get a mark, list marks."),
        spec("query_water", "Water levels."),
    ];
    let index = Index::build(&specs, None);
    assert_eq!(index.search("watermark").unwrap(), [0]);
}

#[test]
fn equal_scores_keep_the_registry_order() {
    let specs =
        [spec("zeta_one", "Same words."), spec("alpha_two", "Same words."), spec("mid_six", "Same words.")];
    let index = Index::build(&specs, None);
    assert_eq!(index.search("same words").unwrap(), [0, 1, 2]);
}

#[test]
fn a_rare_word_outweighs_a_common_one() {
    let specs = [
        spec("update_files", "Create a file, create a folder, create a copy."),
        spec("update_tasks", "Assign a task."),
        spec("update_comments", "Create a comment."),
        spec("update_users", "Create a user."),
    ];
    let index = Index::build(&specs, None);
    assert_eq!(index.search("create task").unwrap()[0], 1);
}

#[test]
fn an_index_is_built_once_per_snapshot() {
    let table = Table::default();
    let first = index_for(&table, None);
    assert!(std::ptr::eq(first, index_for(&table, None)));
    let other = Table::default();
    assert!(!std::ptr::eq(first, index_for(&other, None)));
}

/// A stand-in for a sentence encoder that knows a few concepts: each text's vector counts
/// the words of each concept it holds (normalised), and every text it embeds is counted.
#[derive(Debug, Default)]
struct Concepts {
    embedded: Mutex<Vec<String>>,
}

const CONCEPTS: [&[&str]; 3] =
    [&["server", "droplet", "machine"], &["text", "message", "sms"], &["bill", "invoice"]];

impl Embedder for Concepts {
    fn embed(&self, text: &str) -> Vec<f32> {
        self.embedded.lock().unwrap().push(text.to_owned());
        let lower = text.to_lowercase();
        let mut v: Vec<f32> =
            CONCEPTS.iter().map(|words| words.iter().filter(|w| lower.contains(*w)).count() as f32).collect();
        v.push(0.1);
        let length = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / length).collect()
    }
}

#[test]
fn with_an_embedder_a_tool_sharing_no_word_is_found_by_meaning() {
    let specs = [
        table("update_droplets", "Droplets.", &[("create_droplet", "Create a new Droplet", &[])]),
        table("update_messages", "Messages.", &[("create_message", "Send a message", &[])]),
        table("query_invoices", "Invoices.", &[("get_invoice", "Retrieve an invoice", &[])]),
        table("update_servers_of_games", "Games.", &[("create_game", "Create a new game lobby", &[])]),
    ];
    let lexical = Index::build(&specs, None);
    // By words alone, "new" leads to the game lobby (and to the Droplet); nothing to the SMS.
    assert_eq!(names(&specs, &lexical.search("text my phone").unwrap()), Vec::<&str>::new());
    let concepts = Arc::new(Concepts::default());
    let semantic = Semantic::new(concepts.clone());
    let index = Index::build(&specs, Some(&semantic));
    assert_eq!(names(&specs, &index.search("text my phone").unwrap())[0], "update_messages");
    assert_eq!(names(&specs, &index.search("a new virtual machine").unwrap())[0], "update_droplets");
    // One embedding per operation, then one per query.
    assert_eq!(concepts.embedded.lock().unwrap().len(), 4 + 2);
    assert_eq!(concepts.embedded.lock().unwrap()[0], "update droplets: create droplet: Create a new Droplet");
}

#[test]
fn a_new_snapshot_embeds_only_its_new_operations() {
    let concepts = Arc::new(Concepts::default());
    let semantic = Semantic::new(concepts.clone());
    let first = [table("update_droplets", "Droplets.", &[("create_droplet", "Create a new Droplet", &[])])];
    Index::build(&first, Some(&semantic));
    let second = [
        table("update_droplets", "Droplets.", &[("create_droplet", "Create a new Droplet", &[])]),
        table(
            "query_invoices",
            "Invoices.",
            &[("get_invoice", "Retrieve an invoice", &[]), ("get_invoice", "Retrieve an invoice", &[])],
        ),
    ];
    Index::build(&second, Some(&semantic));
    // The Droplet's text from the cache, the invoice's once although two operations share it.
    assert_eq!(
        *concepts.embedded.lock().unwrap(),
        [
            "update droplets: create droplet: Create a new Droplet",
            "query invoices: get invoice: Retrieve an invoice"
        ]
    );
}

#[test]
fn fusion_adds_the_scores_so_that_a_wide_lead_by_either_counts() {
    // 40 tools, nearer by meaning the lower their number: tool 0's cosine is 1 once rescaled,
    // the 30th nearest's (tool 29) 0.
    let cosines: Vec<f64> = (0..40).map(|t| 0.9 - 0.02 * f64::from(t)).collect();
    let scores = |pairs: &[(usize, f64)]| {
        let mut lexical = vec![0.0; 40];
        for &(t, s) in pairs {
            lexical[t] = s;
        }
        lexical
    };
    // Tool 2 matches ten times as many words as tool 0 (1 + 27/29 against 0.1 + 1): first,
    // although tool 0 is first by meaning and second by words (by rank, tool 0 would lead).
    let lexical = scores(&[(2, 10.0), (0, 1.0)]);
    let fused = fuse(&lexical, &cosines, |_| 1.0);
    assert_eq!(&fused[..3], [2, 0, 1]);
    // The other way round: words alike (1 and 0.9), meaning far apart (9/29 and 26/29).
    let lexical = scores(&[(20, 1.0), (3, 0.9)]);
    assert_eq!(&fuse(&lexical, &cosines, |_| 1.0)[..3], [3, 20, 0]);
    // What a tool's effect makes its meaning count for: tool 0 at 0.4 falls behind tool 17
    // (12/29) and before tool 18 (11/29).
    let fused = fuse(&scores(&[]), &cosines, |t| if t == 0 { 0.4 } else { 1.0 });
    assert_eq!(fused.iter().position(|&t| t == 0), Some(17));
    // The 30 nearest and every tool sharing a word are kept, tools 30 to 38 are not.
    assert_eq!(fused.len(), 30);
    let fused = fuse(&scores(&[(39, 0.5)]), &cosines, |_| 1.0);
    assert_eq!(fused.len(), 31);
    assert!(fused.contains(&39) && !fused.contains(&35));
}

#[test]
fn meaning_counts_less_where_no_tool_stands_out_by_it() {
    // 40 tools in the same order by meaning, the nearest 0.58 nearer than the 30th or only 0.1.
    let cosines = |spread: f64| -> Vec<f64> { (0..40).map(|t| 0.9 - spread / 29.0 * f64::from(t)).collect() };
    // Tool 20 matches twice the words tool 0 does; tool 0 is the nearest by meaning.
    let mut lexical = vec![0.0; 40];
    lexical[20] = 1.0;
    lexical[0] = 0.5;
    // Spread wide: tool 0 leads by meaning (0.5 + 1 against 1 + 9/29).
    assert_eq!(fuse(&lexical, &cosines(0.58), |_| 1.0)[0], 0);
    // Spread under SEMANTIC_SPREAD_MIN: meaning counts 0.1/0.3 of that, and the words lead
    // (0.5 + 1/3 against 1 + 9/29/3); the rest keep their order by meaning.
    let fused = fuse(&lexical, &cosines(0.1), |_| 1.0);
    assert_eq!(&fused[..3], [20, 0, 1]);
}

#[test]
fn what_the_source_says_about_a_tools_things_is_embedded_too() {
    let specs = [
        table("update_resources", "Resources.", &[("create_resource", "Create a resource", &[])])
            .with_about(["Resources here are virtual machines."]),
        table("update_invoices", "Invoices.", &[("create_invoice", "Create an invoice", &[])]),
    ];
    let concepts = Arc::new(Concepts::default());
    let index = Index::build(&specs, Some(&Semantic::new(concepts.clone())));
    assert_eq!(names(&specs, &index.search("a server of my own").unwrap())[0], "update_resources");
    assert!(
        concepts
            .embedded
            .lock()
            .unwrap()
            .contains(&"update resources: Resources here are virtual machines.".to_owned())
    );
}

#[test]
fn each_sentence_of_what_the_source_says_is_embedded_on_its_own() {
    let about = "A Droplet is a DigitalOcean virtual machine. By sending requests to the Droplet \
                 endpoint, you can list, create, or delete Droplets. See also.";
    let specs = [table("update_droplets", "Droplets.", &[("create_droplet", "Create a Droplet", &[])])
        .with_about([about])];
    let concepts = Arc::new(Concepts::default());
    Index::build(&specs, Some(&Semantic::new(concepts.clone())));
    let embedded = concepts.embedded.lock().unwrap().clone();
    assert!(embedded.contains(&"update droplets: A Droplet is a DigitalOcean virtual machine".to_owned()));
    assert!(embedded.iter().any(|t| t.starts_with("update droplets: By sending requests")));
    // A fragment is no sentence, and the whole text is not embedded besides its sentences.
    assert!(!embedded.iter().any(|t| t.contains("See also") || t.contains(about)), "{embedded:?}");
    assert_eq!(sentences("Short."), ["Short."]);
}

#[test]
fn what_the_source_says_about_a_tools_things_is_found_by_words_too() {
    let specs = [
        table("update_droplets", "Droplets.", &[("create_droplet", "Create a Droplet", &[])])
            .with_about(["A Droplet is a virtual machine."]),
        table("update_invoices", "Invoices.", &[("create_invoice", "Create an invoice", &[])]),
    ];
    let index = Index::build(&specs, None);
    assert_eq!(names(&specs, &index.search("my virtual machines").unwrap()), ["update_droplets"]);
}

/// A tool answering `{}`, of a route table with one operation.
fn served(tool: &str, op: &str, summary: &str) -> Arc<dyn toolgate_core::Tool> {
    let method = if tool.starts_with("query") { "GET" } else { "POST" };
    let toml = format!(
        "tool = \"{tool}\"\ndescription = \"{summary}.\"\ndomain = \"docs\"\n\
         [[routes]]\nop = \"{op}\"\nmethod = \"{method}\"\npath = \"/{op}\"\nsummary = \"{summary}\"\n"
    );
    let spec = toolgate_schema::RouteTable::from_toml_str(&toml).unwrap().spec().unwrap();
    Arc::new(toolgate_core::FnTool::new(spec, |_ctx, _params| {
        Box::pin(async { Ok(toolgate_core::ToolOutput::json(json!({}))) })
    }))
}

/// Wait up to 10 s for `concepts` to have embedded `text`.
fn embeds(concepts: &Concepts, text: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if concepts.embedded.lock().unwrap().iter().any(|t| t == text) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

#[test]
fn a_gateway_embeds_its_operations_before_the_first_query_and_again_after_a_change() {
    let concepts = Arc::new(Concepts::default());
    let droplets = || served("update_droplets", "create_droplet", "Create a new Droplet");
    let gateway = crate::Gateway::builder()
        .source_tools("docs", [droplets()])
        .embedder(concepts.clone())
        .build()
        .unwrap();
    assert!(embeds(&concepts, "update droplets: create droplet: Create a new Droplet"), "no query was made");
    let invoices = served("query_invoices", "get_invoice", "Retrieve an invoice");
    assert!(gateway.replace_source_tools("docs", vec![droplets(), invoices]).is_empty());
    assert!(embeds(&concepts, "query invoices: get invoice: Retrieve an invoice"));
    // The Droplet's text was not embedded again for the new snapshot.
    let embedded = concepts.embedded.lock().unwrap().clone();
    assert_eq!(embedded.iter().filter(|t| t.contains("Droplet")).count(), 1, "{embedded:?}");
}

#[test]
fn a_request_to_read_prefers_the_table_that_reads_and_one_to_change_the_one_that_writes() {
    // Both tables of goals hold the same words; only what each does tells them apart.
    let goals = |name: &str, op: &str, summary: &str| {
        table(name, "Goals of the organization.", &[(op, summary, &["goal_gid", "target"])])
    };
    let specs = [
        goals("update_goals", "update_goal", "Update a goal's target")
            .with_effect(Effect::Write { idempotent: false }),
        goals("query_goals", "get_goal", "Get a goal's target").with_effect(Effect::Read),
    ];
    let index = Index::build(&specs, None);
    assert_eq!(names(&specs, &index.search("what is the target of this goal").unwrap())[0], "query_goals");
    assert_eq!(names(&specs, &index.search("please change this goal's target").unwrap())[0], "update_goals");
    // A request whose opening says neither is ranked by its words alone: here a tie, in the
    // tables' order.
    assert_eq!(names(&specs, &index.search("goal target").unwrap())[0], "update_goals");
}
