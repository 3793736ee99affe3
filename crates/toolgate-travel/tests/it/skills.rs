//! The shipped travel skills load, name only registered travel tools, and
//! render as guides through the gateway.

use std::path::Path;

use toolgate_core::Caller;
use toolgate_gateway::Gateway;
use toolgate_travel::TravelConfig;

const TRAVEL_SKILLS: [&str; 3] = ["travel-request", "trip-planning", "cancel-trip"];

#[tokio::test]
async fn the_travel_skills_load_and_their_steps_are_travel_tools() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../skills");
    let (set, problems) = toolgate_skills::SkillSet::load_dir(&dir);
    for id in TRAVEL_SKILLS {
        let mine: Vec<_> = problems
            .iter()
            .filter(|p| p.skill.as_deref() == Some(id) || p.to_string().contains(id))
            .collect();
        assert!(mine.is_empty(), "{id}: {mine:?}");
        let skill = set.get(id).unwrap_or_else(|| panic!("{id} loads"));
        assert_eq!(skill.required_role, "member");
        assert!(skill.steps.len() >= 3, "{id}");
        for step in &skill.steps {
            assert!(
                toolgate_travel::tool_names().contains(&step.tool.as_str()),
                "{id}: {} is a travel tool",
                step.tool
            );
        }
    }
    let only_travel = toolgate_skills::SkillSet::from_skills(
        TRAVEL_SKILLS.iter().map(|id| set.get(id).unwrap().clone()).collect(),
    );
    let tmp = tempfile::tempdir().unwrap();
    let store =
        toolgate_travel::connect(&format!("sqlite:{}", tmp.path().join("t.db").display())).await.unwrap();
    let gw = Gateway::builder()
        .tools(toolgate_travel::tools(store, TravelConfig::default()))
        .skills(only_travel)
        .build()
        .unwrap();
    assert!(gw.skill_problems().iter().all(|p| !p.is_error()), "{:?}", gw.skill_problems());
    let member = Caller::new("m", "member");
    for id in TRAVEL_SKILLS {
        let guide = gw.skill_guide(&member, id).unwrap();
        assert!(
            guide.contains("submit_travel_approval")
                || guide.contains("plan_itinerary")
                || guide.contains("cancel_travel_order"),
            "{guide}"
        );
    }
    let guest = Caller::new("g", "guest");
    assert!(gw.skill_guide(&guest, "cancel-trip").is_err(), "members only");
    assert!(gw.catalog(&member).contains("travel-request"));
}
