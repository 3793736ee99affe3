//! Discovery ranks by relevance: paraphrased requests find the right tool in
//! the first three over a realistic registry — the fitness route tables the
//! repository ships, the travel tools' contracts, and a Box-like API as the
//! OpenAPI importer lays it out (`query_<tag>` / `update_<tag>`, operation ids
//! such as `post_tasks`, its description format) — through the real
//! `get_tool_schema` meta-tool, with its filters and the caller's permissions.

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_core::{Caller, Effect, Tool, ToolContext, ToolOutput, ToolResult, ToolSpec};
use toolgate_gateway::{Gateway, Route, RouteHandler, RouteTable, RouteTool};

use crate::common::{object, tool};

/// Answers every operation with `null`: discovery never runs a tool.
struct Nothing;

#[async_trait::async_trait]
impl RouteHandler for Nothing {
    async fn handle(&self, _ctx: &ToolContext, _route: &Route, _params: Value) -> ToolResult {
        Ok(ToolOutput::json(Value::Null))
    }
}

fn route_tool(table: RouteTable) -> Arc<dyn Tool> {
    Arc::new(RouteTool::new(table, Arc::new(Nothing)).expect("route table compiles"))
}

/// The fitness service's route tables, as shipped.
fn fitness() -> Vec<Arc<dyn Tool>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolgate-fitness/routes");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths
        .iter()
        .map(|path| route_tool(RouteTable::from_toml_str(&std::fs::read_to_string(path).unwrap()).unwrap()))
        .collect()
}

/// The travel service's tools: their names, effects and the first sentences
/// of their descriptions (crates/toolgate-travel), with open schemas.
fn travel() -> Vec<Arc<dyn Tool>> {
    let specs = [
        (
            "query_travel_order",
            false,
            "Look up the caller's travel orders. Call it to show one order by `order_id` (from submit_travel_approval or an earlier listing), or to list the caller's orders newest first, optionally only one `status`.",
        ),
        (
            "check_travel_order_conflicts",
            false,
            "Check a proposed trip against the caller's active travel orders (DRAFT, SUBMITTED, APPROVED). Call it before submit_travel_approval, with the dates the user wants. Two trips conflict when their date ranges overlap (both ends inclusive).",
        ),
        (
            "query_weather",
            false,
            "Get the weather forecast for a city. Call it when planning a trip that starts within the next two days (e.g. to choose transport or pack).",
        ),
        (
            "query_booking_record",
            false,
            "List the caller's bookings (flight, hotel, train tickets and rooms). Call it to see what is booked for one order (`order_id`) or for the caller overall, e.g. before cancelling a booking or after cancelling an order.",
        ),
        (
            "query_travel_policy",
            false,
            "Get the travel policy that applies to the caller for a destination city: the most the hotel may cost per night and the transport classes allowed (flight and train). Call it before planning or submitting a trip.",
        ),
        (
            "submit_travel_approval",
            true,
            "Submit a business trip for approval: creates the travel order and starts its approval process in one step. Call it once the user has confirmed destination, departure city, dates and purpose (check conflicts and policy first).",
        ),
        (
            "cancel_travel_order",
            true,
            "Cancel one of the caller's travel orders. Call it when the user asks to cancel a trip, after showing the order (query_travel_order).",
        ),
        (
            "cancel_booking",
            true,
            "Cancel one of the caller's bookings (flight, hotel or train). Call it when the user asks to cancel a ticket or room, after showing it (query_booking_record).",
        ),
        (
            "save_flight_api_key",
            true,
            "Save the caller's API key for a flight provider so that flight searches can use it. Call it only when the user gives you a key and asks to store it.",
        ),
        (
            "plan_itinerary",
            false,
            "Compute itinerary proposals from candidate transports and hotels. Call it after you have gathered options (outbound transports, hotels, return transports) and scored each one 0-10 for how well it fits what the user asked for.",
        ),
        (
            "review_planner_result",
            false,
            "Review the proposals of a plan made by plan_itinerary. Call it right after plan_itinerary with its plan_id.",
        ),
    ];
    specs
        .into_iter()
        .map(|(name, writes, description)| {
            let spec = ToolSpec::new(name, description, object(json!({}), &[]))
                .with_domain("travel")
                .with_role("member")
                .with_effect(if writes { Effect::Write { idempotent: false } } else { Effect::Read });
            tool(spec, |_ctx, _p| async { Ok(ToolOutput::json(Value::Null)) })
        })
        .collect()
}

/// One operation of the Box-like API: operation id, method, path, summary.
type Op = (&'static str, &'static str, &'static str, &'static str);

/// A Box-like content API as `openapi-import` lays it out: per tag one read
/// tool (`query_<tag>`, the GETs) and one write tool (`update_<tag>`), each
/// described by the importer's sentence listing its operations.
fn box_api() -> Vec<Arc<dyn Tool>> {
    let tags: [(&str, &[Op]); 14] = [
        (
            "files",
            &[
                ("get_files_id", "GET", "/files/{file_id}", "Get file information"),
                ("get_files_id_content", "GET", "/files/{file_id}/content", "Download file"),
                (
                    "get_files_id_thumbnail_id",
                    "GET",
                    "/files/{file_id}/thumbnail.{extension}",
                    "Get file thumbnail",
                ),
                ("put_files_id", "PUT", "/files/{file_id}", "Update file"),
                ("delete_files_id", "DELETE", "/files/{file_id}", "Delete file (moves it to the trash)"),
                ("post_files_id_copy", "POST", "/files/{file_id}/copy", "Copy file"),
            ],
        ),
        (
            "uploads",
            &[
                ("post_files_content", "POST", "/files/content", "Upload file"),
                ("post_files_id_content", "POST", "/files/{file_id}/content", "Upload file version"),
                ("post_files_upload_sessions", "POST", "/files/upload_sessions", "Create upload session"),
            ],
        ),
        (
            "folders",
            &[
                ("get_folders_id", "GET", "/folders/{folder_id}", "Get folder information"),
                ("get_folders_id_items", "GET", "/folders/{folder_id}/items", "List items in folder"),
                ("post_folders", "POST", "/folders", "Create folder"),
                ("put_folders_id", "PUT", "/folders/{folder_id}", "Update folder"),
                ("delete_folders_id", "DELETE", "/folders/{folder_id}", "Delete folder"),
                ("post_folders_id_copy", "POST", "/folders/{folder_id}/copy", "Copy folder"),
            ],
        ),
        (
            "tasks",
            &[
                ("get_files_id_tasks", "GET", "/files/{file_id}/tasks", "List tasks on file"),
                ("get_tasks_id", "GET", "/tasks/{task_id}", "Get task"),
                ("post_tasks", "POST", "/tasks", "Create task"),
                ("put_tasks_id", "PUT", "/tasks/{task_id}", "Update task"),
                ("delete_tasks_id", "DELETE", "/tasks/{task_id}", "Remove task"),
            ],
        ),
        (
            "task_assignments",
            &[
                ("get_tasks_id_assignments", "GET", "/tasks/{task_id}/assignments", "List task assignments"),
                (
                    "get_task_assignments_id",
                    "GET",
                    "/task_assignments/{task_assignment_id}",
                    "Get task assignment",
                ),
                ("post_task_assignments", "POST", "/task_assignments", "Assign task"),
                (
                    "put_task_assignments_id",
                    "PUT",
                    "/task_assignments/{task_assignment_id}",
                    "Update task assignment (complete, approve or reject it)",
                ),
                (
                    "delete_task_assignments_id",
                    "DELETE",
                    "/task_assignments/{task_assignment_id}",
                    "Unassign task",
                ),
            ],
        ),
        (
            "comments",
            &[
                ("get_files_id_comments", "GET", "/files/{file_id}/comments", "List file comments"),
                ("get_comments_id", "GET", "/comments/{comment_id}", "Get comment"),
                ("post_comments", "POST", "/comments", "Create comment"),
                ("put_comments_id", "PUT", "/comments/{comment_id}", "Update comment"),
                ("delete_comments_id", "DELETE", "/comments/{comment_id}", "Remove comment"),
            ],
        ),
        (
            "collaborations",
            &[
                (
                    "get_folders_id_collaborations",
                    "GET",
                    "/folders/{folder_id}/collaborations",
                    "List folder collaborations",
                ),
                ("get_collaborations", "GET", "/collaborations", "List pending collaborations"),
                (
                    "post_collaborations",
                    "POST",
                    "/collaborations",
                    "Create collaboration (invite a user or group to a file or folder)",
                ),
                (
                    "put_collaborations_id",
                    "PUT",
                    "/collaborations/{collaboration_id}",
                    "Update collaboration",
                ),
                (
                    "delete_collaborations_id",
                    "DELETE",
                    "/collaborations/{collaboration_id}",
                    "Remove collaboration",
                ),
            ],
        ),
        (
            "shared_links_files",
            &[
                ("get_shared_items", "GET", "/shared_items", "Find file for shared link"),
                (
                    "get_files_id_get_shared_link",
                    "GET",
                    "/files/{file_id}/get_shared_link",
                    "Get shared link for file",
                ),
                (
                    "put_files_id_add_shared_link",
                    "PUT",
                    "/files/{file_id}/add_shared_link",
                    "Add shared link to file",
                ),
                (
                    "put_files_id_remove_shared_link",
                    "PUT",
                    "/files/{file_id}/remove_shared_link",
                    "Remove shared link from file",
                ),
            ],
        ),
        (
            "users",
            &[
                ("get_users", "GET", "/users", "List enterprise users"),
                ("get_users_me", "GET", "/users/me", "Get current user"),
                ("get_users_id", "GET", "/users/{id}", "Get user"),
                ("post_users", "POST", "/users", "Create user"),
                ("put_users_id", "PUT", "/users/{id}", "Update user"),
                ("delete_users_id", "DELETE", "/users/{id}", "Delete user"),
            ],
        ),
        (
            "groups",
            &[
                ("get_groups", "GET", "/groups", "List groups for enterprise"),
                ("get_groups_id", "GET", "/groups/{group_id}", "Get group"),
                ("post_groups", "POST", "/groups", "Create group"),
                ("delete_groups_id", "DELETE", "/groups/{group_id}", "Remove group"),
            ],
        ),
        (
            "group_memberships",
            &[
                (
                    "get_groups_id_memberships",
                    "GET",
                    "/groups/{group_id}/memberships",
                    "List members of group",
                ),
                ("post_group_memberships", "POST", "/group_memberships", "Add user to group"),
                (
                    "delete_group_memberships_id",
                    "DELETE",
                    "/group_memberships/{group_membership_id}",
                    "Remove user from group",
                ),
            ],
        ),
        (
            "webhooks",
            &[
                ("get_webhooks", "GET", "/webhooks", "List all webhooks"),
                ("get_webhooks_id", "GET", "/webhooks/{webhook_id}", "Get webhook"),
                ("post_webhooks", "POST", "/webhooks", "Create webhook"),
                ("put_webhooks_id", "PUT", "/webhooks/{webhook_id}", "Update webhook"),
                ("delete_webhooks_id", "DELETE", "/webhooks/{webhook_id}", "Remove webhook"),
            ],
        ),
        (
            "search",
            &[(
                "get_search",
                "GET",
                "/search",
                "Search for content (files, folders, web links by name, description or text)",
            )],
        ),
        ("events", &[("get_events", "GET", "/events", "List user and enterprise events")]),
    ];
    let mut tools = Vec::new();
    for (tag, ops) in tags {
        for read in [true, false] {
            let routes: Vec<&Op> = ops.iter().filter(|op| (op.1 == "GET") == read).collect();
            if !routes.is_empty() {
                tools.push(route_tool(imported_table(tag, read, &routes)));
            }
        }
    }
    tools
}

/// The route table `openapi-import` writes for one tag (its tool name,
/// description sentence, domain and tag).
fn imported_table(tag: &str, read: bool, routes: &[&Op]) -> RouteTable {
    let (verb, what) = if read { ("query", "Read") } else { ("update", "Change") };
    let listed: Vec<String> =
        routes.iter().map(|(op, _, _, summary)| format!("`{op}` ({summary})")).collect();
    let description = format!(
        "{what} {tag} in Box Platform API. Operations: {}. Choose one with `op`; path and query values and the JSON body fields are parameters. Example: {{\"op\": \"{}\"}}.",
        listed.join("; "),
        routes[0].0
    );
    let mut text = format!(
        "tool = \"{verb}_{tag}\"\ndescription = {}\ndomain = \"{tag}\"\nrequired_role = \"member\"\ntags = [\"openapi\"]\n",
        json!(description)
    );
    for (op, method, path, summary) in routes {
        let body = if matches!(*method, "GET" | "DELETE") { "" } else { "body = \"none\"\n" };
        text.push_str(&format!(
            "\n[[routes]]\nop = \"{op}\"\nmethod = \"{method}\"\npath = \"{path}\"\nsummary = \"{summary}\"\n{body}"
        ));
    }
    RouteTable::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn registry() -> Gateway {
    let mut tools = fitness();
    tools.extend(travel());
    tools.extend(box_api());
    // A manager's tool that would rank first for "create task": a member never sees it.
    tools.push(tool(
        ToolSpec::new(
            "create_task_template",
            "Create a task template for the whole team.",
            object(json!({}), &[]),
        )
        .with_role("manager")
        .with_effect(Effect::Write { idempotent: false }),
        |_ctx, _p| async { Ok(ToolOutput::json(Value::Null)) },
    ));
    Gateway::builder().tools(tools).build().expect("the registry builds")
}

/// The names `get_tool_schema` answers for these arguments, and its total.
async fn find(gw: &Gateway, role: &str, args: Value) -> (Vec<String>, u64) {
    let env = gw.call_meta(&ToolContext::new(Caller::new("u-1", role)), "get_tool_schema", args).await;
    assert!(env.success, "{env:?}");
    let names = env.result.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    (names, env.metadata.total.unwrap())
}

/// Requests as a user or a model words them, and the tool each one needs.
const CASES: &[(&str, &str)] = &[
    ("create a task on a file", "update_tasks"),
    ("assign a task to a colleague", "update_task_assignments"),
    ("list the comments on a file", "query_comments"),
    ("add a comment to a document", "update_comments"),
    ("upload a new version of a file", "update_uploads"),
    ("make a new folder", "update_folders"),
    ("what is inside this folder", "query_folders"),
    ("share a file with a link", "update_shared_links_files"),
    ("get the current user", "query_users"),
    ("search for content across folders", "query_search"),
    ("delete a webhook", "update_webhooks"),
    ("add someone to a group", "update_group_memberships"),
    ("invite a user to collaborate on a folder", "update_collaborations"),
    ("download a file", "query_files"),
    ("move a file to the trash", "update_files"),
    ("which tasks are open on this file", "query_tasks"),
    ("log the workout I did today", "update_training"),
    ("show my recent workouts", "query_training"),
    ("how much protein did I eat yesterday", "query_nutrition"),
    ("record my weight this morning", "update_body_data"),
    ("set my daily calorie goals", "update_nutrition"),
    ("weather forecast in Oslo", "query_weather"),
    ("cancel my hotel reservation", "cancel_booking"),
    ("cancel the business trip", "cancel_travel_order"),
    ("submit a trip for approval", "submit_travel_approval"),
    ("how much may the hotel cost per night in Paris", "query_travel_policy"),
    ("do my dates overlap another trip", "check_travel_order_conflicts"),
    ("store my flight provider api key", "save_flight_api_key"),
    ("plan an itinerary with hotels and flights", "plan_itinerary"),
    ("show my travel orders", "query_travel_order"),
];

#[tokio::test]
async fn paraphrased_requests_find_the_right_tool_in_the_first_three() {
    let gw = registry();
    assert!(gw.all_specs().len() > 40, "a registry of realistic size");
    let (mut misses, mut first) = (Vec::new(), 0);
    for (query, expected) in CASES {
        let (names, _) = find(&gw, "member", json!({"query": query, "limit": 3})).await;
        first += usize::from(names.first() == Some(&expected.to_string()));
        if !names.iter().any(|n| n == expected) {
            misses.push(format!("{query:?}: wanted {expected}, got {names:?}"));
        }
    }
    let hit = CASES.len() - misses.len();
    let n = CASES.len();
    println!("discovery top-3: {hit}/{n} ({:.0} %), first: {first}/{n}", 100.0 * hit as f64 / n as f64);
    for miss in &misses {
        println!("miss: {miss}");
    }
    assert!(hit * 10 >= CASES.len() * 9, "fewer than 90 % in the top 3:\n{}", misses.join("\n"));
    // The request of the issue, which the all-words match answered with nothing.
    let (names, total) = find(&gw, "member", json!({"query": "create a task on a file"})).await;
    assert!(names[..3].iter().any(|n| n == "update_tasks"), "{names:?}");
    assert!(total > 1, "every tool sharing a word is counted");
}

#[tokio::test]
async fn ranking_keeps_every_filter_and_the_callers_permissions() {
    let gw = registry();
    // The manager's tool ranks first for its own words, for a manager only.
    let (manager, _) = find(&gw, "manager", json!({"query": "create task template"})).await;
    assert_eq!(manager[0], "create_task_template");
    let (member, total) = find(&gw, "member", json!({"query": "create task template", "limit": 50})).await;
    assert!(!member.iter().any(|n| n == "create_task_template"), "{member:?}");
    assert_eq!(total as usize, member.len());
    // Effect, domain and limit apply to the ranked list.
    let (reads, _) = find(&gw, "member", json!({"query": "create a task on a file", "effect": "read"})).await;
    assert_eq!(reads[0], "query_tasks", "{reads:?}");
    assert!(!reads.iter().any(|n| n.starts_with("update_")), "{reads:?}");
    let (in_domain, total) = find(&gw, "member", json!({"query": "delete", "domain": "training"})).await;
    assert_eq!((in_domain, total), (vec!["update_training".to_owned()], 1));
    let (page, total) = find(&gw, "member", json!({"query": "file", "limit": 2})).await;
    assert_eq!(page.len(), 2);
    assert!(total > 2);
    // A guest sees none of the member tools, however well they match.
    assert_eq!(find(&gw, "guest", json!({"query": "create a task on a file"})).await, (vec![], 0));
}

#[tokio::test]
async fn a_query_without_a_shared_word_answers_as_before() {
    let gw = registry();
    // No tool shares a word: the answer is the empty one it always was.
    assert_eq!(find(&gw, "member", json!({"query": "zebra xylophone"})).await, (vec![], 0));
    // A part of a word still finds what the substring match found.
    let (names, _) = find(&gw, "member", json!({"query": "weath"})).await;
    assert_eq!(names, ["query_weather"]);
    // An empty query lists everything, as before.
    let (all, all_total) = find(&gw, "member", json!({"limit": 50})).await;
    let (empty, empty_total) = find(&gw, "member", json!({"query": "", "limit": 50})).await;
    assert_eq!((all, all_total), (empty, empty_total));
}

#[tokio::test]
async fn equal_scores_keep_the_registry_order() {
    let same = |name: &str| {
        tool(ToolSpec::new(name, "Export the report.", object(json!({}), &[])), |_ctx, _p| async {
            Ok(ToolOutput::json(Value::Null))
        })
    };
    let gw =
        Gateway::builder().tools([same("report_b"), same("report_c"), same("report_a")]).build().unwrap();
    let (names, _) = find(&gw, "guest", json!({"query": "export a report"})).await;
    assert_eq!(names, ["report_a", "report_b", "report_c"], "the registry's order (by name)");
}

#[tokio::test]
async fn a_replaced_source_is_searched_at_once() {
    let gw = registry();
    let forecast = |name: &str| {
        tool(ToolSpec::new(name, "Tide tables for a harbour.", object(json!({}), &[])), |_ctx, _p| async {
            Ok(ToolOutput::json(Value::Null))
        })
    };
    assert_eq!(find(&gw, "guest", json!({"query": "tide tables"})).await, (vec![], 0));
    assert!(gw.replace_source_tools("upstream:sea", vec![forecast("sea__tides")]).is_empty());
    assert_eq!(find(&gw, "guest", json!({"query": "tide tables"})).await.0, ["sea__tides"]);
    assert!(gw.replace_source_tools("upstream:sea", vec![forecast("sea__tides_v2")]).is_empty());
    assert_eq!(find(&gw, "guest", json!({"query": "harbour tides"})).await.0, ["sea__tides_v2"]);
}
