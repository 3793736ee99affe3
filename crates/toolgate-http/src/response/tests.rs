//! Unit tests of the answer mapping.

use super::binary::*;
use super::reasons::*;
use super::*;
use toolgate_core::Image;

const GET: Sent<'static> = Sent {
    method: "GET",
    path: "/x/1",
    read: true,
    backend: "the API",
    preview_chars: 20,
    max_binary_bytes: 64,
    callers_credential: false,
    secrets: &[],
    text_ok: true,
};
const POST: Sent<'static> = Sent {
    method: "POST",
    path: "/x",
    read: false,
    backend: "the API",
    preview_chars: 20,
    max_binary_bytes: 64,
    callers_credential: false,
    secrets: &[],
    text_ok: true,
};

fn map(sent: &Sent<'_>, status: u16, body: &str) -> Result<Value, ToolError> {
    let output = map_answer(
        sent,
        StatusCode::from_u16(status).unwrap(),
        None,
        body.as_bytes(),
        &json!({"items": [{"name": ""}]}),
    )?;
    match output.payload {
        toolgate_core::Payload::Json(value) => Ok(value),
        other => panic!("not JSON: {other:?}"),
    }
}

#[test]
fn content_types_decide_how_a_body_is_returned() {
    let image = |m: &str| Media::Image(m.to_owned());
    let binary = |m: &str| Media::Binary(m.to_owned());
    assert_eq!(Media::of(Some("image/PNG")), image("image/png"));
    assert_eq!(Media::of(Some("image/jpeg; q=1")), image("image/jpeg"));
    assert_eq!(Media::of(Some("image/svg+xml")), binary("image/svg+xml"));
    assert_eq!(Media::of(Some("application/pdf")), binary("application/pdf"));
    assert_eq!(Media::of(Some("application/octet-stream")), binary("application/octet-stream"));
    assert_eq!(Media::of(Some("audio/mpeg")), binary("audio/mpeg"));
    for json in [
        None,
        Some("application/json; charset=utf-8"),
        Some("application/problem+json"),
        Some("application/vnd.api+json"),
        Some("text/json"),
        Some("nonsense"),
        Some("*/*"),
    ] {
        assert_eq!(Media::of(json), Media::Json, "{json:?}");
    }
    for (given, text) in [
        ("application/xml", "application/xml"),
        ("text/plain", "text/plain"),
        ("text/HTML; charset=utf-8", "text/html"),
        ("text/csv", "text/csv"),
        ("application/atom+xml", "application/atom+xml"),
        ("application/x-yaml", "application/x-yaml"),
    ] {
        assert_eq!(Media::of(Some(given)), Media::Text(text.to_owned()), "{given}");
    }
}

fn text_payload(sent: &Sent<'_>, content_type: &str, body: &str) -> Value {
    let output = map_answer(sent, StatusCode::OK, Some(content_type), body.as_bytes(), &Value::Null)
        .unwrap_or_else(|e| panic!("{content_type}: {e:?}"));
    let toolgate_core::Payload::Json(result) = output.payload else { panic!("not JSON") };
    assert_eq!((result["ok"].clone(), result["status"].clone()), (json!(true), json!(200)));
    result["payload"].clone()
}

#[test]
fn text_answers_come_back_as_text_clipped_and_scrubbed() {
    // Box's `GET /authorize` answers an HTML page: the page, not PARSE_ERROR.
    let page = "<html><body>Sign in to Box</body></html>";
    assert_eq!(
        text_payload(&GET, "text/html; charset=utf-8", page),
        json!({"content": "text", "media_type": "text/html", "chars": page.chars().count(), "text": page})
    );
    // Plain text, CSV and XML alike, a lone number too; a JSON object or array labelled as
    // text is read as JSON.
    assert_eq!(text_payload(&GET, "text/plain; charset=utf-8", r#"{"sid": "SM1"}"#), json!({"sid": "SM1"}));
    assert_eq!(text_payload(&GET, "text/plain", "[1, 2]"), json!([1, 2]));
    for (media, body) in [("text/plain", "42"), ("text/csv", "a,b\n1,2\n"), ("application/xml", "<a>1</a>")] {
        let payload = text_payload(&GET, media, body);
        assert_eq!((payload["media_type"].as_str(), payload["text"].as_str()), (Some(media), Some(body)));
        assert!(payload.get("truncated").is_none(), "{payload}");
    }
    // A long one: its first TEXT_ANSWER_CHARS characters (not bytes), said so.
    let long = "é".repeat(TEXT_ANSWER_CHARS + 10);
    let payload = text_payload(&GET, "text/plain", &long);
    assert_eq!(payload["chars"], TEXT_ANSWER_CHARS + 10);
    assert_eq!(payload["text"].as_str().unwrap().chars().count(), TEXT_ANSWER_CHARS);
    assert_eq!(payload["truncated"], true);
    assert!(payload["note"].as_str().unwrap().contains(&format!("{}", TEXT_ANSWER_CHARS + 10)), "{payload}");
    // A credential the backend repeats is removed before the text is returned.
    let sent = Sent { secrets: &["s3cret-token"], ..GET };
    let payload = text_payload(&sent, "text/html", "<p>your token: s3cret-token</p>");
    assert_eq!(payload["text"], "<p>your token: [redacted]</p>");
    // Empty: no content, as for JSON; an error answer in text is still an error.
    assert_eq!(text_payload(&GET, "text/plain", ""), Value::Null);
    let refused = map_answer(&GET, StatusCode::NOT_FOUND, Some("text/html"), b"<p>gone</p>", &Value::Null);
    assert_eq!(refused.unwrap_err().code, ErrorCode::NotFound);
}

#[test]
fn binaries_come_back_as_images_or_base64_within_the_limit() {
    let ok = StatusCode::OK;
    let png = map_answer(&GET, ok, Some("image/png"), b"\x89PNG", &Value::Null).unwrap();
    assert_eq!(png.images, vec![Image::from_base64("image/png", "iVBORw==")]);
    let pdf = map_answer(&GET, ok, Some("application/pdf"), b"foobar", &Value::Null).unwrap();
    let toolgate_core::Payload::Json(result) = pdf.payload else { panic!() };
    assert_eq!(
        result["payload"],
        json!({"content": "binary", "media_type": "application/pdf", "bytes": 6, "base64": "Zm9vYmFy"})
    );
    let big = map_answer(&GET, ok, Some("application/pdf"), &[0; 65], &Value::Null).unwrap_err();
    assert_eq!(big.code, ErrorCode::ExecutionError);
    assert_eq!(big.details.as_ref().unwrap()["bytes"], 65);
    assert_eq!(big.details.as_ref().unwrap()["limit_bytes"], 64);
    // A file that repeats the request's credential is withheld whole.
    let keyed = Sent { secrets: &["sk_123"], ..GET };
    let leak = map_answer(&keyed, ok, Some("application/pdf"), b"%PDF sk_123", &Value::Null).unwrap_err();
    assert!(!format!("{leak:?}").contains("sk_123"));
    assert_eq!(leak.code, ErrorCode::ExecutionError);
    // An error answer is not a file: the error mapping reads it.
    let refused = map_answer(&GET, StatusCode::NOT_FOUND, Some("application/pdf"), b"{}", &Value::Null);
    assert_eq!(refused.unwrap_err().code, ErrorCode::NotFound);
}

#[test]
fn success_wraps_the_payload() {
    let ok = map(&GET, 200, r#"{"a": 1}"#).unwrap();
    assert_eq!(ok, json!({"ok": true, "status": 200, "method": "GET", "path": "/x/1", "payload": {"a": 1}}));
    assert_eq!(map(&POST, 204, "").unwrap()["payload"], Value::Null);
    // No type given (or JSON claimed) and not JSON: the result cannot be read.
    let err = map(&GET, 200, "<html>").unwrap_err();
    assert_eq!(err.code, ErrorCode::ParseError);
    assert!(!err.transient);
    assert_eq!(err.details.unwrap()["preview"], "<html>");
}

#[test]
fn statuses_map_to_codes_and_only_reads_are_transient() {
    let cases = [
        (404, ErrorCode::NotFound, false, false),
        (409, ErrorCode::Conflict, false, false),
        (400, ErrorCode::InvalidParams, false, false),
        (422, ErrorCode::InvalidParams, false, false),
        // The operator's credential (GET and POST carry no caller's one): not the user's to fix.
        (401, ErrorCode::ExecutionError, false, false),
        (403, ErrorCode::ExecutionError, false, false),
        (415, ErrorCode::ExecutionError, false, false),
        (429, ErrorCode::Unavailable, true, false),
        (500, ErrorCode::ExecutionError, true, false),
        (503, ErrorCode::ExecutionError, true, false),
        (302, ErrorCode::ExecutionError, false, false),
    ];
    for (status, code, get_transient, post_transient) in cases {
        let g = map(&GET, status, "{}").unwrap_err();
        let p = map(&POST, status, "{}").unwrap_err();
        assert_eq!((g.code, p.code), (code, code), "{status}");
        assert_eq!((g.transient, p.transient), (get_transient, post_transient), "{status}");
    }
    let callers = Sent { callers_credential: true, ..GET };
    for status in [401, 403] {
        let e = map(&callers, status, "{}").unwrap_err();
        assert_eq!((e.code, e.transient), (ErrorCode::PermissionDenied, false), "{status}");
    }
}

#[test]
fn refused_fields_point_into_the_parameters() {
    let body = r#"{"error": {"code": "invalid_params", "message": "invalid request: items[0].name: empty",
        "fields": [{"field": "items[0].name", "message": "empty"}, {"field": "body", "message": "give one"}]}}"#;
    let err = map(&POST, 422, body).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidParams);
    assert!(err.message.contains("invalid request: items[0].name: empty"), "{}", err.message);
    let details = err.details.unwrap();
    assert_eq!(details["errors"][0]["pointer"], "/items/0/name");
    assert_eq!(details["errors"][0]["actual"], "");
    assert_eq!(details["errors"][1]["pointer"], "");
    assert_eq!(details["status"], 422);
}

#[test]
fn server_errors_carry_a_truncated_body_and_warn_about_writes() {
    let err = map(&POST, 500, &"x".repeat(100)).unwrap_err();
    let body = err.details.as_ref().unwrap()["body"].as_str().unwrap().to_owned();
    assert!(body.starts_with(&"x".repeat(20)) && body.ends_with("(truncated)"), "{body}");
    assert!(err.message.contains("may or may not have been applied"));
    assert!(!map(&GET, 500, "").unwrap_err().message.contains("may or may not"));
}

#[test]
fn reasons_are_read_from_the_common_shapes() {
    let said = |body: Value| -> Vec<(Option<String>, String)> {
        reasons(&body).0.into_iter().map(|r| (r.at, r.message)).collect()
    };
    let one = |at: &str, message: &str| vec![(Some(at.to_owned()), message.to_owned())];
    // JSON:API: where in `source`.
    let jsonapi = json!({"errors": [{"status": "422", "title": "Invalid", "detail": "is too short",
        "source": {"pointer": "/data/attributes/name"}}]});
    assert_eq!(said(jsonapi), one("/data/attributes/name", "is too short"));
    // Google APIs: `error.details[].fieldViolations`.
    let google = json!({"error": {"code": 400, "message": "Invalid argument", "status": "INVALID_ARGUMENT",
        "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{"field": "name", "description": "must be set"}]}]}});
    assert_eq!(said(google), one("name", "must be set"));
    // Zod: a path list; plain strings in `errors`.
    assert_eq!(
        said(json!({"issues": [{"path": ["items", 0, "qty"], "message": "too small"}]})),
        one("items.0.qty", "too small")
    );
    assert_eq!(said(json!({"errors": ["name is required"]})), vec![(None, "name is required".to_owned())]);
    // Nothing to read: no reasons.
    assert!(said(json!({"detail": "bad", "errors": 3})).is_empty());
    assert!(said(json!([1, 2])).is_empty());
    assert_eq!(reason_pointer("body.items[0].name"), "/items/0/name");
    assert_eq!(reason_pointer("items.0.qty"), "/items/0/qty");
    assert_eq!(reason_pointer("/age"), "/age");
    assert_eq!(reason_pointer("body"), "");
}

#[test]
fn field_names_become_pointers() {
    assert_eq!(field_pointer("sets[12].reps"), "/sets/12/reps");
    assert_eq!(field_pointer("name"), "/name");
    assert_eq!(field_pointer("body"), "");
    assert_eq!(field_pointer("a/b"), "/a~1b");
}
