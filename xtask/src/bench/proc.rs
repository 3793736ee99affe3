//! What /proc says about a server process and the machine.

use std::path::Path;

use anyhow::{Context, Result};

/// VmRSS and VmHWM of a process, in KiB.
pub(crate) fn rss_kib(pid: u32) -> Result<(u64, u64)> {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).context("reading /proc/PID/status")?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok((field("VmRSS:"), field("VmHWM:")))
}

/// User plus system CPU time of a process (all its threads), in microseconds.
pub(crate) fn cpu_us(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).context("reading /proc/PID/stat")?;
    // Fields after the command name (which may hold spaces) start after ") ".
    let rest = stat.rsplit_once(") ").map(|(_, r)| r).context("odd /proc/PID/stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 11 and 12 here.
    let ticks: u64 = fields
        .get(11..13)
        .context("short /proc/PID/stat")?
        .iter()
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    let hz = clock_ticks();
    Ok(ticks * 1_000_000 / hz)
}

fn clock_ticks() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(100)
}

pub(crate) fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

pub(crate) fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("model name").map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The first line a command prints (stdout, else stderr), or "unknown".
pub(crate) fn output_of(program: &Path, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            let text = if o.stdout.is_empty() { o.stderr } else { o.stdout };
            String::from_utf8_lossy(&text).lines().next().unwrap_or_default().trim().to_owned()
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
