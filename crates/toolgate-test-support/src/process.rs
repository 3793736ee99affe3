//! Servers and binaries as child processes: killed and reaped on drop, so a
//! failed assertion never leaves one running, and found by the line they print.

use std::io::{BufRead, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// A child process killed when dropped.
#[derive(Debug)]
pub struct Running {
    pub child: Child,
    /// Stdout once read from: kept open, so the child never writes to a closed pipe.
    stdout: Option<Lines<BufReader<ChildStdout>>>,
}

impl Running {
    pub fn new(child: Child) -> Self {
        Self { child, stdout: None }
    }

    /// Spawn `command` with stdout piped (for [`Running::read_until`]).
    pub fn spawn(command: &mut Command) -> Self {
        Self::new(
            command.stdout(Stdio::piped()).spawn().unwrap_or_else(|e| panic!("spawning {command:?}: {e}")),
        )
    }

    /// Read stdout until a line starts with `prefix` (within 30 s); the rest
    /// of that line and every line read, that one included.
    pub fn read_until(&mut self, prefix: &str) -> (String, String) {
        let lines = self
            .stdout
            .get_or_insert_with(|| BufReader::new(self.child.stdout.take().expect("stdout piped")).lines());
        let (mut seen, started) = (String::new(), Instant::now());
        loop {
            let line = lines.next().unwrap_or_else(|| panic!("no `{prefix}` line in:\n{seen}")).unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if let Some(rest) = line.strip_prefix(prefix) {
                return (rest.to_owned(), seen);
            }
            assert!(started.elapsed() < Duration::from_secs(30), "no `{prefix}` line in:\n{seen}");
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Wait until something listens on 127.0.0.1:`port` (within 10 s).
pub fn wait_for_port(port: u16, what: &str) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(10), "{what} did not start listening on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Run to the end; (success, stdout then stderr).
pub fn output(command: &mut Command) -> (bool, String) {
    let out = command.output().unwrap_or_else(|e| panic!("running {command:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_found_and_the_child_dies_with_its_guard() {
        let mut running = Running::spawn(
            Command::new("sh").args(["-c", "echo starting; echo 'ready at http://x'; sleep 30"]),
        );
        let (rest, seen) = running.read_until("ready at ");
        assert_eq!((rest.as_str(), seen.as_str()), ("http://x", "starting\nready at http://x\n"));
        let pid = running.child.id();
        drop(running);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "the child was killed and reaped");
    }

    #[test]
    fn output_joins_stdout_and_stderr() {
        let (ok, text) = output(Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]));
        assert_eq!((ok, text.as_str()), (false, "out\nerr\n"));
    }
}
