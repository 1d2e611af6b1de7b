//! `oxla run` hands a user's module to a plugin, and some plugins end the
//! process on malformed input: LLVM's `report_fatal_error` ("LLVM ERROR:
//! unsupported integer type") calls abort, where no error can be returned.
//! So the command runs in a child process of this binary: its output
//! passes through, and a child killed by a signal becomes one `error:` line
//! naming the signal and the plugin's last words, with status 1.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode, Stdio};

/// Set in the child, which then does the work itself.
const CHILD: &str = "OXLA_SUPERVISED_CHILD";

/// In the child (or where no child can be started): `None`, and the caller
/// does the work. In the parent: runs the child with this process's
/// arguments and returns the exit code it ends with; `what` names the input
/// in the message for a crash.
pub fn run_in_child(what: &str) -> Option<ExitCode> {
    if std::env::var_os(CHILD).is_some() {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut child = Command::new(exe)
        .args(args)
        .env(CHILD, "1")
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let mut last_words = String::new();
    if let Some(stderr) = child.stderr.take() {
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            let _ = std::io::stderr().write_all(&line);
            let text = String::from_utf8_lossy(&line).trim().to_string();
            if !text.is_empty() && !text.starts_with("stack backtrace") {
                last_words = text;
            }
            line.clear();
        }
    }
    let status = match child.wait() {
        Ok(status) => status,
        Err(e) => {
            eprintln!("error: lost the process running {what}: {e}");
            return Some(ExitCode::FAILURE);
        }
    };
    Some(match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        (None, signal) => {
            let signal = signal.map_or("unknown".to_string(), |s| s.to_string());
            let said = if last_words.is_empty() {
                String::new()
            } else {
                format!("; it said: {last_words}")
            };
            eprintln!(
                "error: the plugin ended the process (signal {signal}) while running {what}, \
                 which it cannot handle{said}"
            );
            ExitCode::FAILURE
        }
    })
}
