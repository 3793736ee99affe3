//! Round trip: fitness-api serves `GET /openapi.json` generated from its route specs;
//! importing it gives tables equivalent to the shipped ones: the same ops in tools of the
//! same domain and effect, with the same methods, paths and fields (type, format, required,
//! limits, nested items and fields).

use std::collections::BTreeMap;

use toolgate_openapi::{DomainBy, Options};
use toolgate_schema::{Field, Items, RouteTable};

/// A field as far as the round trip must keep it (descriptions may be worded differently).
fn shape(f: &Field) -> String {
    format!(
        "{}:{:?}:{:?}:req={}:{:?}:{:?}:{:?}:{:?}:{:?}:{:?}:{:?}:[{}]:{{{}}}",
        f.name,
        f.ty,
        f.format,
        f.required,
        f.enum_values,
        f.minimum,
        f.maximum,
        f.min_length,
        f.max_length,
        f.min_items,
        f.max_items,
        f.items.as_deref().map(items_shape).unwrap_or_default(),
        sorted(&f.fields).join(",")
    )
}

fn items_shape(i: &Items) -> String {
    format!(
        "{:?}:{:?}:{:?}:{:?}:{:?}:[{}]:{{{}}}",
        i.ty,
        i.format,
        i.enum_values,
        i.minimum,
        i.maximum,
        i.items.as_deref().map(items_shape).unwrap_or_default(),
        sorted(&i.fields).join(",")
    )
}

fn sorted(fields: &[Field]) -> Vec<String> {
    let mut out: Vec<String> = fields.iter().map(shape).collect();
    out.sort();
    out
}

/// op -> (tool's domain, read?, method, path, fields)
fn by_op(tables: &[RouteTable]) -> BTreeMap<String, (String, bool, String, String, Vec<String>)> {
    let mut out = BTreeMap::new();
    for t in tables {
        let read = t.effect().unwrap() == toolgate_core::Effect::Read;
        for r in &t.routes {
            let entry = (t.domain.clone(), read, r.method.to_string(), r.path.clone(), sorted(&r.fields));
            assert!(out.insert(r.op.clone(), entry).is_none(), "op {} twice", r.op);
        }
    }
    out
}

#[tokio::test]
async fn the_fitness_api_document_imports_to_the_shipped_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = toolgate_fitness_api::connect(&format!("sqlite:{}?mode=rwc", dir.path().join("f.db").display()))
        .await
        .unwrap();
    let server = toolgate_fitness_api::spawn("127.0.0.1:0", db).await.unwrap();
    let response = reqwest::get(format!("{}/openapi.json", server.url())).await.unwrap();
    assert_eq!(response.status(), 200, "served without a token");
    let text = response.text().await.unwrap();

    let import = toolgate_openapi::import(&text, &Options::default()).unwrap();
    assert!(import.skipped.is_empty(), "{:#?}", import.skipped);
    assert_eq!(import.auth.to_toml(), r#"{ kind = "bearer_from_caller" }"#);
    let shipped = toolgate_fitness::tables().unwrap();
    assert_eq!(import.tables.len(), shipped.len(), "one read and one write tool per domain");
    let ours = by_op(&import.tables);
    let theirs = by_op(&shipped);
    assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>());
    for (op, shipped) in &theirs {
        assert_eq!(&ours[op], shipped, "op {op}");
    }
    // By path, the domains are the same here (each tag is the first path segment).
    let by_path =
        toolgate_openapi::import(&text, &Options::default().with_domain_by(DomainBy::Path)).unwrap();
    assert_eq!(by_op(&by_path.tables), ours);
    server.shutdown().await.unwrap();
}
