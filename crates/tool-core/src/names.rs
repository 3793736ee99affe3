//! Naming rules: verb_noun tool names and the parameter names the model must never supply.

/// Whether `name` is a verb_noun snake_case tool name: lowercase ASCII
/// letters and digits in at least two words joined by single underscores,
/// starting with a letter, at most 64 characters (`query_travel_order`).
pub fn is_tool_name(name: &str) -> bool {
    if name.is_empty() || name.len() > 64 {
        return false;
    }
    let mut words = 0;
    for word in name.split('_') {
        if word.is_empty() || !word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
            return false;
        }
        words += 1;
    }
    words >= 2 && name.as_bytes()[0].is_ascii_lowercase()
}

/// Parameter names whose value the system already knows. A schema that
/// exposes one is rejected at registration; a call that supplies one gets
/// `INVALID_PARAMS`. Compared after lowercasing and dropping `_` and `-`,
/// so `user_id`, `userId` and `User-ID` are all caught.
const INJECTED: &[&str] = &[
    "userid",
    "uid",
    "sessionid",
    "token",
    "authtoken",
    "accesstoken",
    "bearertoken",
    "authorization",
    "tenantid",
    "callerid",
    "callerrole",
];

/// Whether a parameter name is one the system injects from the call context.
pub fn is_injected_field(name: &str) -> bool {
    let folded: String =
        name.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect();
    INJECTED.contains(&folded.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        for ok in ["query_travel_order", "cancel_booking", "get_tool_schema", "run_trip_planning2"] {
            assert!(is_tool_name(ok), "{ok}");
        }
        for bad in [
            "",
            "query",
            "Query_order",
            "query__order",
            "_query",
            "query_",
            "query-order",
            "1query_order",
            "query_Order",
            "查询_订单",
        ] {
            assert!(!is_tool_name(bad), "{bad}");
        }
        assert!(!is_tool_name(&format!("a_{}", "b".repeat(63))));
    }

    #[test]
    fn injected_fields() {
        for name in
            ["user_id", "userId", "User-ID", "session_id", "sessionId", "token", "access_token", "tenant_id"]
        {
            assert!(is_injected_field(name), "{name}");
        }
        for name in ["order_id", "api_key", "destination", "user_name", "tokens_used"] {
            assert!(!is_injected_field(name), "{name}");
        }
    }
}
