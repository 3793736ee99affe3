//! `cargo xtask bench import`: `toolgate import openapi` (the release binary) on every
//! document of the OpenAPI corpus (`crates/toolgate/tests/openapi/`, the documents the Prism
//! test serves), each imported `--rounds` times into a fresh folder: the median and the
//! slowest wall time from spawn to exit, and the peak resident memory of the process
//! (`ru_maxrss`, as GNU time reports it). Writes `docs/bench-import.md`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::setup;
use crate::workspace_root;

const USAGE: &str = "usage: cargo xtask bench import [--rounds R] [--no-build] [--no-write]";

/// The corpus: (name, file under crates/toolgate/tests/openapi; a `.gz` is unpacked first).
const DOCUMENTS: [(&str, &str); 9] = [
    ("Swagger Petstore 3.0 (JSON)", "petstore-3.0.json"),
    ("Swagger Petstore 2.0 (YAML)", "petstore-swagger-2.0.yaml"),
    ("Train Travel 3.1 (YAML)", "train-travel-3.1.yaml"),
    ("Spotify Web API 3.0 (YAML)", "spotify-fixed-open-api.yml"),
    ("Box Platform 3.0 (JSON)", "box-openapi.json.gz"),
    ("OpenAI 3.1 (YAML)", "openai-openapi.yaml.gz"),
    ("Twilio api_v2010 3.0 (JSON)", "twilio_api_v2010.json.gz"),
    ("Asana 3.0 (YAML)", "asana_oas.yaml.gz"),
    ("DigitalOcean 3.0 (YAML, multi-file)", "digitalocean/specification/DigitalOcean-public.v2.yaml"),
];

/// `cargo xtask bench import [options]`.
pub(super) fn run(args: &[&str]) -> Result<()> {
    let (mut rounds, mut build, mut write) = (5usize, true, true);
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--rounds" => {
                rounds = rest.next().context(USAGE)?.parse().context("--rounds takes a number")?;
            }
            "--no-build" => build = false,
            "--no-write" => write = false,
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    if rounds == 0 {
        bail!("--rounds must be above zero");
    }
    let root = workspace_root();
    let toolgate = setup::release_toolgate(&root, build)?;
    let work = tempfile_dir()?;
    let mut table = String::from(
        "| document | bytes | wall median (ms) | wall slowest (ms) | peak RSS (MiB) | result |\n| --- | ---: | ---: | ---: | ---: | --- |\n",
    );
    for (name, file) in DOCUMENTS {
        let document = materialize(&root.join("crates/toolgate/tests/openapi").join(file), &work)?;
        let bytes = std::fs::metadata(&document)?.len();
        let mut walls = Vec::new();
        let mut peak_kib = 0;
        let mut summary = String::new();
        for round in 0..rounds {
            let out = work.join(format!("routes-{round}"));
            let _ = std::fs::remove_dir_all(&out);
            let (ms, kib, stdout) = timed(&toolgate, &document, &out)?;
            walls.push(ms);
            peak_kib = peak_kib.max(kib);
            summary =
                stdout.lines().find(|l| l.contains(" operation(s) imported, ")).unwrap_or("").to_owned();
        }
        walls.sort_by(f64::total_cmp);
        let median = walls[walls.len() / 2];
        let slowest = walls[walls.len() - 1];
        let result = summary.split_once(": ").map_or(summary.as_str(), |(_, r)| r).to_owned();
        eprintln!(
            "bench: {name}: median {median:.0} ms, slowest {slowest:.0} ms, peak {:.1} MiB",
            peak_kib as f64 / 1024.0
        );
        table.push_str(&format!(
            "| {name} | {bytes} | {median:.0} | {slowest:.0} | {:.1} | {result} |\n",
            peak_kib as f64 / 1024.0
        ));
    }
    let _ = std::fs::remove_dir_all(&work);
    let report = format!(
        "<!-- Written by `cargo xtask bench import` (a measured report, not codegen output). -->\n\n\
         # OpenAPI import: time and memory\n\n\
         `toolgate import openapi DOC --out DIR` with the release binary, {rounds} rounds per document, \
         each into a fresh folder: wall time from spawn to exit and the process's peak resident memory \
         (`ru_maxrss`). Measured {} on {}.\n\n{table}",
        date(),
        machine()
    );
    print!("{report}");
    if write {
        let path = root.join("docs/bench-import.md");
        std::fs::write(&path, report).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("bench: wrote {}", path.display());
    }
    Ok(())
}

/// One import: wall milliseconds, peak RSS in KiB (GNU time's `%M`, the child's `ru_maxrss`),
/// stdout.
fn timed(toolgate: &Path, document: &Path, out: &Path) -> Result<(f64, u64, String)> {
    let started = Instant::now();
    let output = std::process::Command::new("/usr/bin/time")
        .args(["-f", "bench-import-rss-kib %M"])
        .arg(toolgate)
        .args(["import", "openapi"])
        .arg(document)
        .arg("--out")
        .arg(out)
        .stdin(std::process::Stdio::null())
        .output()
        .context("starting /usr/bin/time (GNU time: apt-get install time)")?;
    let wall = started.elapsed().as_secs_f64() * 1000.0;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!("toolgate import openapi {} failed ({}):\n{stdout}{stderr}", document.display(), output.status);
    }
    let kib = stderr
        .lines()
        .find_map(|l| l.strip_prefix("bench-import-rss-kib "))
        .and_then(|n| n.trim().parse().ok())
        .context("GNU time printed no peak memory")?;
    Ok((wall, kib, stdout))
}

fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("toolgate-bench-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The document as a file: a `.gz` unpacked (with `gzip -dc`) into `work`.
fn materialize(path: &Path, work: &Path) -> Result<PathBuf> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".gz")) else {
        return Ok(path.to_owned());
    };
    let out = work.join(name);
    let unpacked =
        std::process::Command::new("gzip").arg("-dc").arg(path).output().context("running gzip")?;
    if !unpacked.status.success() {
        bail!("gzip -dc {} failed", path.display());
    }
    std::fs::write(&out, unpacked.stdout)?;
    Ok(out)
}

fn date() -> String {
    command_line("date", &["-u", "+%Y-%m-%d"])
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "an unknown CPU".into());
    format!("{cores} cores of {model}")
}

fn command_line(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
