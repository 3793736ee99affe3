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

/// The separator between a tool source's namespace and a tool it brings
/// (`weather__get_forecast`): two underscores, which a verb_noun name never
/// contains, so a namespaced name never collides with a built-in one.
pub const NAMESPACE_SEPARATOR: &str = "__";

/// Whether `name` is a namespaced tool name, `<namespace>__<tool>`, as tools
/// of another MCP server are registered: the namespace is lowercase ASCII
/// letters, digits and single underscores starting with a letter; the tool
/// part is ASCII letters, digits, `_` and `-` (the other server's own name,
/// kept legible); at most 64 characters in all, which keeps it legal for MCP
/// and for the model APIs (`^[a-zA-Z0-9_-]{1,64}$`).
pub fn is_namespaced_tool_name(name: &str) -> bool {
    let Some((namespace, tool)) = name.split_once(NAMESPACE_SEPARATOR) else {
        return false;
    };
    name.len() <= 64
        && is_namespace(namespace)
        && !tool.is_empty()
        && tool.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `name` can name a tool source (an upstream): lowercase ASCII
/// letters, digits and single underscores, starting with a letter, at most 32
/// characters.
pub fn is_namespace(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name.as_bytes()[0].is_ascii_lowercase()
        && name
            .split('_')
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
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
    fn namespaced_tool_names() {
        for ok in ["weather__get_forecast", "w2__getForecast", "my_srv__get-forecast", "a__b"] {
            assert!(is_namespaced_tool_name(ok), "{ok}");
        }
        for bad in ["weather_get", "__get", "weather__", "Weather__get", "weather__get forecast", "w__x.y"] {
            assert!(!is_namespaced_tool_name(bad), "{bad}");
        }
        assert!(!is_namespaced_tool_name(&format!("w__{}", "x".repeat(62))));
        assert!(!is_namespace("a__b") && !is_namespace("") && is_namespace("weather2"));
    }

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
