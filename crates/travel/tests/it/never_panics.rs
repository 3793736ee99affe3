//! Any JSON in, a structured answer out: no tool panics on what a model may send.

use crate::common;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};

use tool_core::{ErrorCode, Tool};
use travel::TravelConfig;

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        "\\PC{0,24}".prop_map(Value::String),
        prop_oneof![
            Just("2026-02-30"),
            Just("2026/07/15"),
            Just("2027-03-10"),
            Just(""),
            Just("2027-03-10T08:00")
        ]
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("order_id".to_string()),
                        Just("destination".to_string()),
                        Just("departure_date".to_string()),
                        Just("return_date".to_string()),
                        Just("candidates".to_string()),
                        Just("outbound".to_string()),
                        Just("api_key".to_string()),
                        Just("force".to_string()),
                        "[a-z_]{1,8}",
                    ],
                    inner
                ),
                0..5
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// One runtime, store and tool set for every case: the store's pool lives on
/// the runtime that made it, and a fresh database per case costs more than
/// the property checks.
type Fixture = (tokio::runtime::Runtime, Vec<Arc<dyn Tool>>, common::Backend);

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let b = common::sqlite();
        let tools = rt.block_on(async { travel::tools(b.store().await, TravelConfig::default()) });
        (rt, tools, b)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_parameters_get_an_answer(params in any_json()) {
        let (rt, tools, _) = fixture();
        rt.block_on(async {
            let ctx = common::ctx("fuzz");
            for tool in tools {
                let _ = tool.check_params(&params);
                // An answer is not enough: INTERNAL_ERROR is a bug the input found.
                if let Err(e) = tool.call(&ctx, params.clone()).await {
                    assert_ne!(e.code, ErrorCode::InternalError, "{} on {params}: {e:?}", tool.spec().name);
                }
            }
        });
    }
}
