//! The shipped fitness skills load without errors and name only fitness tools their role may use.

use std::path::PathBuf;

use toolgate_skills::SkillSet;

const OURS: [&str; 2] = ["daily-nutrition-review", "log-workout"];

#[test]
fn shipped_fitness_skills_load_and_name_existing_tools() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../skills");
    let (set, load_errors) = SkillSet::load_dir(&dir);
    let ours = |file: &std::path::Path| OURS.iter().any(|id| file.components().any(|c| c.as_os_str() == *id));
    let mine: Vec<String> = load_errors.iter().filter(|e| ours(&e.file)).map(ToString::to_string).collect();
    assert!(mine.is_empty(), "{mine:#?}");

    let tools =
        toolgate_fitness::tools("http://127.0.0.1:9", toolgate_fitness::HttpOptions::default()).unwrap();
    let lookup = |name: &str| tools.iter().find(|t| t.spec().name == name).map(|t| t.spec().clone());
    let policy = toolgate_authz::Policy::default();
    // Other domains' skills name tools this test does not register: judge ours only.
    let only_ours =
        SkillSet::from_skills(set.iter().filter(|s| OURS.contains(&s.id.as_str())).cloned().collect());
    assert_eq!(only_ours.len(), 2, "both skills are shipped");
    let problems = only_ours.check_tools(&lookup, &policy);
    assert!(problems.is_empty(), "{:#?}", problems.iter().map(ToString::to_string).collect::<Vec<_>>());
    for skill in only_ours.iter() {
        assert!(!skill.steps.is_empty());
        assert!(skill.steps.iter().all(|s| lookup(&s.tool).is_some_and(|t| t.domain != "travel")));
        assert_eq!(skill.required_role, "member");
    }

    // And a gateway serving the fitness tools with these skills keeps both.
    let gateway =
        toolgate_gateway::Gateway::builder().tools(tools.clone()).skills(only_ours).build().unwrap();
    assert!(gateway.skill_problems().is_empty());
    let member = toolgate_core::Caller::new("u", "member");
    let guide = gateway.skill_guide(&member, "log-workout").unwrap();
    assert!(guide.contains("update_training"), "{guide}");
}
