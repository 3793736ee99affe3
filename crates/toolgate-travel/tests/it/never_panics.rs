//! Any JSON in, a structured answer out: no tool panics on what a model may send.

use crate::common;

use proptest::prelude::*;
use serde_json::Value;
use std::sync::{Arc, OnceLock};
use toolgate_test_support::json::{self, Shape};

use toolgate_core::{ErrorCode, Tool};
use toolgate_travel::TravelConfig;

/// Any JSON, with the dates and field names the tools read most often.
fn any_json() -> impl Strategy<Value = Value> {
    json::value(Shape {
        text: "\\PC{0,24}",
        words: &["2026-02-30", "2026/07/15", "2027-03-10", "", "2027-03-10T08:00"],
        keys: "[a-z_]{1,8}",
        key_words: &[
            "order_id",
            "destination",
            "departure_date",
            "return_date",
            "candidates",
            "outbound",
            "api_key",
            "force",
        ],
        depth: 3,
        size: 24,
        width: 5,
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
        let tools = rt.block_on(async { toolgate_travel::tools(b.store().await, TravelConfig::default()) });
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
