//! What oxla-pjrt adds to a raw `PJRT_LoadedExecutable_Execute`.
//!
//! One run, one plugin, one compiled tiny program (a scalar add): the same
//! execution through the C API directly (argument structs built by hand,
//! outputs destroyed by hand) and through `LoadedExecutable::execute`, in
//! interleaved blocks. Three workloads: dispatch only (execute, release the
//! output unread), synchronous (also wait for the output to be ready), and
//! a chain as in a training loop (each execution takes the last one's
//! output, which is then released).
//!
//! `cargo run --release -p oxla-bench --bin pjrt_overhead [-- --plugin PATH]`
//!
//! `-- --alone oxla chain` (or `raw`; `release`, `wait`, `chain`) runs
//! only that side of that workload, two million calls, for a profiler.

use std::ptr::null_mut;

use anyhow::{Context, bail};
use oxla_bench::{interleave, print_header, print_row};
use oxla_pjrt::{
    Api, Buffer, Client, ClientOptions, CompileOptions, LoadedExecutable, Platform, Program, ffi,
    find_plugin,
};

const TINY: &str = r#"
func.func public @main(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %b : tensor<f32>
  return %0 : tensor<f32>
}
"#;

/// The raw C API path, written as a C caller would: no checks beyond the
/// returned error.
struct Raw<'a> {
    api: &'a ffi::PJRT_Api,
    executable: *mut ffi::PJRT_LoadedExecutable,
    args: [*mut ffi::PJRT_Buffer; 2],
}

impl Raw<'_> {
    fn fail(&self, error: *mut ffi::PJRT_Error, what: &str) -> anyhow::Result<()> {
        if error.is_null() {
            return Ok(());
        }
        let mut destroy: ffi::PJRT_Error_Destroy_Args = unsafe { std::mem::zeroed() };
        destroy.struct_size = ffi::PJRT_Error_Destroy_Args_STRUCT_SIZE as usize;
        destroy.error = error;
        unsafe { self.api.PJRT_Error_Destroy.unwrap()(&mut destroy) };
        bail!("{what} failed")
    }

    fn execute(&self, wait: bool) -> anyhow::Result<()> {
        let output = self.launch(self.args)?;
        unsafe {
            if wait {
                let mut ready: ffi::PJRT_Buffer_ReadyEvent_Args = std::mem::zeroed();
                ready.struct_size = ffi::PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE as usize;
                ready.buffer = output;
                self.fail(
                    self.api.PJRT_Buffer_ReadyEvent.unwrap()(&mut ready),
                    "ready event",
                )?;
                let mut wait_args: ffi::PJRT_Event_Await_Args = std::mem::zeroed();
                wait_args.struct_size = ffi::PJRT_Event_Await_Args_STRUCT_SIZE as usize;
                wait_args.event = ready.event;
                self.fail(self.api.PJRT_Event_Await.unwrap()(&mut wait_args), "await")?;
                let mut destroy_event: ffi::PJRT_Event_Destroy_Args = std::mem::zeroed();
                destroy_event.struct_size = ffi::PJRT_Event_Destroy_Args_STRUCT_SIZE as usize;
                destroy_event.event = ready.event;
                self.fail(
                    self.api.PJRT_Event_Destroy.unwrap()(&mut destroy_event),
                    "destroy event",
                )?;
            }
        }
        self.destroy(output)
    }

    /// Executes on `args`; returns the output.
    fn launch(&self, args: [*mut ffi::PJRT_Buffer; 2]) -> anyhow::Result<*mut ffi::PJRT_Buffer> {
        unsafe {
            let mut options: ffi::PJRT_ExecuteOptions = std::mem::zeroed();
            options.struct_size = ffi::PJRT_ExecuteOptions_STRUCT_SIZE as usize;
            let arg_list: *const *mut ffi::PJRT_Buffer = args.as_ptr();
            let mut output: *mut ffi::PJRT_Buffer = null_mut();
            let mut output_list: *mut *mut ffi::PJRT_Buffer = &mut output;
            let mut exec: ffi::PJRT_LoadedExecutable_Execute_Args = std::mem::zeroed();
            exec.struct_size = ffi::PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE as usize;
            exec.executable = self.executable;
            exec.options = &mut options;
            exec.argument_lists = &arg_list;
            exec.num_devices = 1;
            exec.num_args = 2;
            exec.output_lists = &mut output_list;
            self.fail(
                self.api.PJRT_LoadedExecutable_Execute.unwrap()(&mut exec),
                "execute",
            )?;
            Ok(output)
        }
    }

    fn destroy(&self, buffer: *mut ffi::PJRT_Buffer) -> anyhow::Result<()> {
        unsafe {
            let mut destroy: ffi::PJRT_Buffer_Destroy_Args = std::mem::zeroed();
            destroy.struct_size = ffi::PJRT_Buffer_Destroy_Args_STRUCT_SIZE as usize;
            destroy.buffer = buffer;
            self.fail(
                self.api.PJRT_Buffer_Destroy.unwrap()(&mut destroy),
                "destroy buffer",
            )
        }
    }

    /// One step of a chain: executes on `a` and the last output, then
    /// releases the last output; the new one becomes the last.
    fn chain_step(&self, last: &std::cell::Cell<*mut ffi::PJRT_Buffer>) -> anyhow::Result<()> {
        let output = self.launch([self.args[0], last.get()])?;
        self.destroy(last.replace(output))
    }
}

fn oxla_execute(exe: &LoadedExecutable, args: &[&Buffer], wait: bool) -> anyhow::Result<()> {
    let outputs = exe.execute(args)?;
    if wait {
        outputs[0].block_until_ready()?;
    }
    Ok(())
}

/// Calls of one side and workload in `--alone` mode.
const ALONE_CALLS: usize = 2_000_000;

/// `--alone SIDE WORKLOAD`: one side (`raw` or `oxla`) of one workload
/// (`release`, `wait` or `chain`), [`ALONE_CALLS`] times and nothing else,
/// for a profiler (`perf record`) or a whole-process timer to see where
/// that side's time goes.
fn run_alone(
    raw: &Raw,
    exe: &LoadedExecutable,
    [a, b]: [&Buffer; 2],
    side: Option<&str>,
    workload: Option<&str>,
) -> anyhow::Result<()> {
    let raw_last = std::cell::Cell::new(raw.launch(raw.args)?);
    let mut oxla_last = exe.execute(&[a, b])?.remove(0);
    for _ in 0..ALONE_CALLS {
        match (side, workload) {
            (Some("raw"), Some("release")) => raw.execute(false)?,
            (Some("raw"), Some("wait")) => raw.execute(true)?,
            (Some("raw"), Some("chain")) => raw.chain_step(&raw_last)?,
            (Some("oxla"), Some("release")) => oxla_execute(exe, &[a, b], false)?,
            (Some("oxla"), Some("wait")) => oxla_execute(exe, &[a, b], true)?,
            (Some("oxla"), Some("chain")) => {
                oxla_last = exe.execute(&[a, &oxla_last])?.remove(0);
            }
            _ => bail!("--alone takes a side (raw, oxla) and a workload (release, wait, chain)"),
        }
    }
    raw.destroy(raw_last.get())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let explicit = args
        .iter()
        .position(|a| a == "--plugin")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from);
    let path = find_plugin(Platform::Cpu, explicit.as_deref())?;
    let api = Api::load(&path)?;
    let client = Client::new(api.clone(), &ClientOptions::new().cpu_device_count(1))?;
    let exe = client.compile(&Program::mlir(TINY), &CompileOptions::new())?;
    let a = client.buffer_from_slice(&[1.5f32], &[], None)?;
    let b = client.buffer_from_slice(&[2.0f32], &[], None)?;
    let result = exe.execute(&[&a, &b])?;
    anyhow::ensure!(result[0].to_vec::<f32>()? == vec![3.5], "wrong result");

    // SAFETY: the table outlives this function (plugins are never unloaded).
    let table = unsafe { api.raw().as_ref() }.context("null PJRT_Api")?;
    let raw = Raw {
        api: table,
        executable: exe.raw(),
        args: [a.raw(), b.raw()],
    };
    if let Some(i) = args.iter().position(|a| a == "--alone") {
        let side = args.get(i + 1).map(String::as_str);
        let workload = args.get(i + 2).map(String::as_str);
        return run_alone(&raw, &exe, [&a, &b], side, workload);
    }
    println!("plugin: {} (PJRT C API {})", path.display(), api.version());
    print_header("raw C API");
    let (blocks, calls) = (31, 20_000);
    for (name, wait) in [
        ("execute + release output", false),
        ("execute + wait + release", true),
    ] {
        let (r, o) = interleave(
            blocks,
            calls,
            || raw.execute(wait),
            || oxla_execute(&exe, &[&a, &b], wait),
        )?;
        print_row(name, &r, &o);
        println!(
            "|   fastest block: raw {:.3} µs, oxla {:.3} µs, oxla adds {:+.3} µs",
            r.min_ns() / 1000.0,
            o.min_ns() / 1000.0,
            (o.min_ns() - r.min_ns()) / 1000.0
        );
    }
    let raw_last = std::cell::Cell::new(raw.launch(raw.args)?);
    let oxla_last = std::cell::RefCell::new(exe.execute(&[&a, &b])?.remove(0));
    let (r, o) = interleave(
        blocks,
        calls,
        || raw.chain_step(&raw_last),
        || {
            let next = exe.execute(&[&a, &oxla_last.borrow()])?.remove(0);
            *oxla_last.borrow_mut() = next;
            Ok(())
        },
    )?;
    print_row("chain: execute on the last output", &r, &o);
    println!(
        "|   fastest block: raw {:.3} µs, oxla {:.3} µs, oxla adds {:+.3} µs",
        r.min_ns() / 1000.0,
        o.min_ns() / 1000.0,
        (o.min_ns() - r.min_ns()) / 1000.0
    );
    raw.destroy(raw_last.get())?;
    Ok(())
}
