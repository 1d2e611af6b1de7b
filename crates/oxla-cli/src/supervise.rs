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
    let mut last_words = LastWords::default();
    if let Some(stderr) = child.stderr.take() {
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            let _ = std::io::stderr().write_all(&line);
            last_words.hear(&String::from_utf8_lossy(&line));
            line.clear();
        }
    }
    let last_words = last_words.said().unwrap_or_default();
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

/// What a dying child said last that is worth quoting: the plugin's own
/// fatal message (absl's `F0000 … Check failed: …`, `LLVM ERROR: …`) when
/// there is one, else its last line that is not part of a stack trace
/// (`@ 0x… symbol` frames, `*** Check failure stack trace: ***`).
#[derive(Default)]
struct LastWords {
    fatal: Option<String>,
    last: Option<String>,
}

impl LastWords {
    /// Takes one line of the child's stderr.
    fn hear(&mut self, line: &str) {
        let text = line.trim();
        if text.is_empty() || is_stack_trace(text) {
            return;
        }
        if is_fatal(text) {
            self.fatal = Some(text.to_string());
        }
        self.last = Some(text.to_string());
    }

    /// The line to quote.
    fn said(self) -> Option<String> {
        self.fatal.or(self.last)
    }
}

/// A line of a stack trace, the plugin's or Rust's.
fn is_stack_trace(text: &str) -> bool {
    text.starts_with('@')
        || text.starts_with("*** ")
        || text.starts_with("stack backtrace")
        || text.starts_with("PC: @")
}

/// The plugin's own account of why it stops: an absl FATAL line (`F` and
/// the date's digits), a failed CHECK, or LLVM's fatal error.
fn is_fatal(text: &str) -> bool {
    let mut chars = text.chars();
    let absl_fatal = chars.next() == Some('F') && chars.take(4).all(|c| c.is_ascii_digit());
    absl_fatal || text.contains("Check failed") || text.starts_with("LLVM ERROR")
}

#[cfg(test)]
mod tests {
    use super::LastWords;

    fn said(stderr: &str) -> Option<String> {
        let mut words = LastWords::default();
        stderr.lines().for_each(|l| words.hear(l));
        words.said()
    }

    #[test]
    fn the_plugins_check_failure_is_quoted_not_a_stack_frame() {
        let stderr = "\
F0000 00:00:1764000000.000000   123 hlo_instruction.cc:42] Check failed: operand_maps.size() == 1
*** Check failure stack trace: ***
    @     0x7f0000001234  absl::log_internal::LogMessageFatal::~LogMessageFatal()
    @     0x7f0000005678  oxla_pjrt::guard::call
";
        assert_eq!(
            said(stderr).as_deref(),
            Some(
                "F0000 00:00:1764000000.000000   123 hlo_instruction.cc:42] Check failed: \
                 operand_maps.size() == 1"
            )
        );
    }

    #[test]
    fn llvm_errors_and_plain_last_lines_are_quoted() {
        assert_eq!(
            said("compiling\nLLVM ERROR: unsupported integer type\nPC: @ 0x1\n").as_deref(),
            Some("LLVM ERROR: unsupported integer type")
        );
        assert_eq!(
            said("first\nthe last words\n    @ 0x7f00 frame\n").as_deref(),
            Some("the last words")
        );
        assert_eq!(said("\n"), None);
    }
}
