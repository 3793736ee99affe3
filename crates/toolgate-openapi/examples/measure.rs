//! `cargo run -p toolgate-openapi --example measure -- FILE...`: per document, the operations
//! it has, how many were mapped, and the reasons of the ones left out (most frequent first).

use std::collections::BTreeMap;

fn main() {
    for arg in std::env::args().skip(1) {
        let path = std::path::Path::new(&arg);
        let started = std::time::Instant::now();
        match toolgate_openapi::import_file(path, &toolgate_openapi::Options::default()) {
            Err(e) => println!("{arg}: error: {e}"),
            Ok(import) => {
                let (mapped, skipped) = (import.ops(), import.skipped.len());
                let total = mapped + skipped;
                println!(
                    "{arg}: {total} operations, {mapped} mapped ({:.1} %), {skipped} left out, {} tools, {:.2} s",
                    100.0 * mapped as f64 / total.max(1) as f64,
                    import.tables.len(),
                    started.elapsed().as_secs_f64()
                );
                let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
                for s in &import.skipped {
                    let key: String = s.reason.chars().take(90).collect();
                    *reasons.entry(key).or_default() += 1;
                }
                let mut reasons: Vec<_> = reasons.into_iter().collect();
                reasons.sort_by_key(|r| std::cmp::Reverse(r.1));
                for (reason, n) in reasons.iter().take(25) {
                    println!("  {n:4}  {reason}");
                }
                if std::env::var_os("MEASURE_ALL").is_some() {
                    for s in &import.skipped {
                        println!("  - {s}");
                    }
                }
            }
        }
    }
}
