//! A JAX twin process: a Python script in oxla's venv that prints its
//! one-shot results as a JSON line, then serves timing blocks of its compiled
//! step over a pipe (each input line "N" runs N steps and answers with the
//! microseconds per step), so a benchmark can alternate blocks of oxla and
//! JAX steps and machine drift hits both alike.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use anyhow::Context;

/// A running JAX twin; killed when dropped.
pub struct Twin {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Twin {
    /// Starts `script` (a file of the bench crate) and reads its results.
    pub fn start(script: &str) -> anyhow::Result<(Twin, serde_json::Value)> {
        Twin::start_with_args(script, &[])
    }

    /// [`Twin::start`] with command-line arguments for the script.
    pub fn start_with_args(
        script: &str,
        args: &[&Path],
    ) -> anyhow::Result<(Twin, serde_json::Value)> {
        let python = oxla_pjrt::oxla_home().join("venv/bin/python");
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
        // JAX on the platform oxla runs on (a GPU machine runs both there).
        let platform = oxla::client()?.platform_name()?;
        let jax_platforms = platform
            .parse::<oxla_pjrt::Platform>()
            .map_or(platform, |p| p.jax_platforms());
        let mut child = Command::new(&python)
            .arg(&path)
            .args(args)
            .env("JAX_PLATFORMS", &jax_platforms)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("running {} {}", python.display(), path.display()))?;
        let input = child.stdin.take().context("twin stdin")?;
        let mut output = BufReader::new(child.stdout.take().context("twin stdout")?);
        let mut line = String::new();
        output.read_line(&mut line)?;
        let results = serde_json::from_str(&line)
            .with_context(|| format!("the first line of {script}: {line:?}"))?;
        Ok((
            Twin {
                child,
                input,
                output,
            },
            results,
        ))
    }

    /// µs per step over a block of `n` JAX steps.
    pub fn block(&mut self, n: usize) -> anyhow::Result<f64> {
        self.request(&n.to_string())
    }

    /// µs per step over a block of `n` steps of the twin's step `name` (for
    /// twins that serve several).
    pub fn block_named(&mut self, name: &str, n: usize) -> anyhow::Result<f64> {
        self.request(&format!("{name} {n}"))
    }

    fn request(&mut self, line_out: &str) -> anyhow::Result<f64> {
        writeln!(self.input, "{line_out}")?;
        let mut line = String::new();
        self.output.read_line(&mut line)?;
        line.trim()
            .parse()
            .with_context(|| format!("the twin's block answer {line:?}"))
    }

    /// Median µs per step of oxla's `step` and of the twin's, over `blocks`
    /// alternating blocks of `calls` steps each (after a warm-up of both).
    pub fn alternate(
        &mut self,
        blocks: usize,
        calls: usize,
        step: impl FnMut() -> anyhow::Result<()>,
    ) -> anyhow::Result<(f64, f64)> {
        self.alternate_with(blocks, calls, step, |twin, n| twin.block(n))
    }

    /// [`Twin::alternate`] against the twin's step `name`.
    pub fn alternate_named(
        &mut self,
        name: &str,
        blocks: usize,
        calls: usize,
        step: impl FnMut() -> anyhow::Result<()>,
    ) -> anyhow::Result<(f64, f64)> {
        self.alternate_with(blocks, calls, step, |twin, n| twin.block_named(name, n))
    }

    fn alternate_with(
        &mut self,
        blocks: usize,
        calls: usize,
        mut step: impl FnMut() -> anyhow::Result<()>,
        mut block: impl FnMut(&mut Twin, usize) -> anyhow::Result<f64>,
    ) -> anyhow::Result<(f64, f64)> {
        step()?;
        block(self, calls.div_ceil(4))?;
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..blocks {
            let start = std::time::Instant::now();
            for _ in 0..calls {
                step()?;
            }
            ours.push(start.elapsed().as_secs_f64() / calls as f64 * 1e6);
            theirs.push(block(self, calls)?);
        }
        Ok((median(ours), median(theirs)))
    }
}

impl Drop for Twin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
