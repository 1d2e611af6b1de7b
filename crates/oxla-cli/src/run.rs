//! `oxla run FILE`: compile a StableHLO module or a `jax.export` file and
//! run it on .npy inputs.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use oxla_npy::HostArray;
use oxla_pjrt::{Buffer, Client, LoadedExecutable, Program, ProgramShape, Shape};

use oxla_export::{Exported, LoadedExport};

use crate::artifact::{Artifact, export_signature, read_artifact};
use crate::plugin_args::PluginArgs;
use crate::summary::{summarize, type_string};

/// Arguments of `oxla run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The program: StableHLO as MLIR text (.mlir) or MLIR bytecode, or a
    /// file written by JAX's `Exported.serialize()`.
    file: PathBuf,
    /// An input as a .npy file; give one per parameter (for an export, one
    /// per leaf of its input pytree), in order.
    #[arg(long = "input", short = 'i', value_name = "X.npy")]
    inputs: Vec<PathBuf>,
    /// Directory to write the outputs to, as out_0.npy, out_1.npy, ...
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    plugin: PluginArgs,
}

/// `main(f32[2,3], i32[]) -> (f32[2,3])`.
pub fn signature(shape: &ProgramShape) -> String {
    let parameters: Vec<String> = shape.parameters.iter().map(Shape::to_string).collect();
    format!("main({}) -> {}", parameters.join(", "), shape.result)
}

/// Reads each input and checks it against the parameter it feeds.
fn read_inputs(
    file: &Path,
    inputs: &[PathBuf],
    shape: &ProgramShape,
) -> anyhow::Result<Vec<HostArray>> {
    if inputs.len() != shape.parameters.len() {
        bail!(
            "{} takes {} inputs ({}), {} given",
            file.display(),
            shape.parameters.len(),
            signature(shape),
            inputs.len()
        );
    }
    inputs
        .iter()
        .zip(&shape.parameters)
        .enumerate()
        .map(|(i, (path, parameter))| {
            let array = HostArray::read_file(path).with_context(|| format!("input {i}"))?;
            let fits = parameter
                .as_array()
                .is_some_and(|(t, dims)| array.npy_type.feeds(t) && array.dims == dims);
            if !fits {
                bail!(
                    "input {i} ({}) is {}, but {} expects {parameter}",
                    path.display(),
                    type_string(&array),
                    file.display()
                );
            }
            Ok(array)
        })
        .collect()
}

/// Copies the inputs to the device, runs, and returns the outputs on the host.
fn execute(
    client: &Client,
    executable: &LoadedExecutable,
    inputs: &[HostArray],
    shape: &ProgramShape,
) -> anyhow::Result<Vec<HostArray>> {
    let device = executable
        .addressable_devices()
        .into_iter()
        .next()
        .context("the executable has no device")?;
    let buffers: Vec<Buffer> = inputs
        .iter()
        .zip(&shape.parameters)
        .map(|(array, parameter)| {
            let (element_type, dims) = parameter.as_array().context("non-array parameter")?;
            Ok(client.buffer_from_bytes(&array.bytes, element_type, dims, Some(&device))?)
        })
        .collect::<anyhow::Result<_>>()?;
    let refs: Vec<&Buffer> = buffers.iter().collect();
    let outputs = executable.execute(&refs)?;
    outputs
        .iter()
        .map(|b| {
            let (element_type, dims) = b.array_type()?;
            Ok(HostArray::new(
                element_type,
                dims.to_vec(),
                b.to_host_bytes()?,
            ))
        })
        .collect()
}

/// Prints each output's summary and writes it to `out` if given.
fn report_outputs(outputs: &[HostArray], out: Option<&Path>) -> anyhow::Result<()> {
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    for (i, output) in outputs.iter().enumerate() {
        println!("out[{i}]: {}", summarize(output));
        if let Some(dir) = out {
            output.write_file(&dir.join(format!("out_{i}.npy")))?;
        }
    }
    Ok(())
}

impl RunArgs {
    /// The program file.
    pub fn file(&self) -> &std::path::Path {
        &self.file
    }
}

/// Runs `oxla run`.
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    match read_artifact(&args.file)? {
        Artifact::Module(program) => run_module(args, &program),
        Artifact::Export(exported) => run_export(args, &exported),
    }
}

/// Runs an export: one input per leaf of its input pytree.
fn run_export(args: &RunArgs, exported: &Exported) -> anyhow::Result<()> {
    if args.inputs.is_empty() && !exported.in_avals.is_empty() {
        println!("{}", export_signature(exported));
        println!("(give one --input X.npy per input leaf, in this order, to run it)");
        return Ok(());
    }
    let inputs = args
        .inputs
        .iter()
        .enumerate()
        .map(|(i, path)| HostArray::read_file(path).with_context(|| format!("input {i}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // A shape-polymorphic export is refined to the inputs' dims first, as
    // JAX does before it compiles one; the refined module is what the
    // compile cache keys.
    let refined;
    let exported = if exported.is_shape_polymorphic() {
        let dims: Vec<Vec<i64>> = inputs.iter().map(|x| x.dims.clone()).collect();
        refined = exported
            .refine(&dims)
            .with_context(|| format!("cannot run {}", args.file.display()))?;
        &refined
    } else {
        exported
    };
    let devices = (exported.nr_devices > 1).then_some(exported.nr_devices as usize);
    let client = args.plugin.client_for_devices(devices)?;
    let cache = oxla_cache::DiskCache::from_env();
    let (loaded, source, warnings) = LoadedExport::with_cache(&client, exported, cache.as_ref())
        .with_context(|| format!("cannot run {}", args.file.display()))?;
    crate::plugin_args::report(&args.file, source, &warnings);
    let outputs = loaded.call(&inputs)?;
    report_outputs(&outputs, args.out.as_deref())
}

/// Compiles and runs a StableHLO module.
fn run_module(args: &RunArgs, program: &Program) -> anyhow::Result<()> {
    let client = args.plugin.client()?;
    let cache = oxla_cache::DiskCache::from_env();
    let compiled = oxla_cache::compile(
        &client,
        program,
        &client.default_compile_options(),
        cache.as_ref(),
    )
    .with_context(|| format!("cannot compile {}", args.file.display()))?;
    crate::plugin_args::report(&args.file, compiled.source, &compiled.warnings);
    let executable = compiled.executable;
    let shape = executable.program_shape()?.clone();
    if args.inputs.is_empty() && !shape.parameters.is_empty() {
        println!("{}", signature(&shape));
        println!("(give one --input X.npy per parameter to run it)");
        return Ok(());
    }
    let inputs = read_inputs(&args.file, &args.inputs, &shape)?;
    let outputs = execute(&client, &executable, &inputs, &shape)?;
    report_outputs(&outputs, args.out.as_deref())
}
