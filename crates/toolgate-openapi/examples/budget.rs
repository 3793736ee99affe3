//! `cargo run --release -p toolgate-openapi --example budget -- FILE...`: per document, the
//! generated tools without a per-tool limit and with the default one
//! ([`toolgate_openapi::budget::DEFAULT_TOOL_TOKENS`]): how many, their tokens in all (what
//! direct mode lists) and the largest, in tokens of the `toolgate-tokens` crate's estimate.

use toolgate_openapi::Options;
use toolgate_openapi::budget::table_tokens;

fn main() {
    for arg in std::env::args().skip(1) {
        let path = std::path::Path::new(&arg);
        println!("{arg}:");
        for (label, limit) in [("no limit", Some(usize::MAX)), ("default limit", None)] {
            let options = match limit {
                Some(tokens) => Options::default().with_max_tool_tokens(tokens),
                None => Options::default(),
            };
            match toolgate_openapi::import_file(path, &options) {
                Err(e) => println!("  {label}: error: {e}"),
                Ok(import) => {
                    let sizes: Vec<(usize, &str)> =
                        import.tables.iter().map(|t| (table_tokens(t), t.tool.as_str())).collect();
                    let all: usize = sizes.iter().map(|s| s.0).sum();
                    let (largest, name) = sizes.iter().max().copied().unwrap_or_default();
                    println!(
                        "  {label:<13} {:>4} tools {:>8} tokens in all, largest {name} {largest} tokens; {} split or trimmed, {} still over",
                        sizes.len(),
                        all,
                        import.budget.changes.len(),
                        import.budget.over().count()
                    );
                    if std::env::var_os("BUDGET_REPORT").is_some() {
                        print!("{}", import.budget);
                    }
                }
            }
        }
    }
}
