//! `oxla run FILE`: compile a StableHLO module and run it on .npy inputs.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use oxla_npy::HostArray;
use oxla_pjrt::{Buffer, Client, CompileOptions, LoadedExecutable, Program, ProgramShape, Shape};

use crate::plugin_args::PluginArgs;
use crate::summary::{summarize, type_string};

/// Arguments of `oxla run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The module: StableHLO as MLIR text (.mlir) or MLIR bytecode.
    file: PathBuf,
    /// An input as a .npy file; give one per parameter, in order.
    #[arg(long = "input", short = 'i', value_name = "X.npy")]
    inputs: Vec<PathBuf>,
    /// Directory to write the outputs to, as out_0.npy, out_1.npy, ...
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    plugin: PluginArgs,
}

/// `main(f32[2,3], i32[]) -> (f32[2,3])`.
fn signature(shape: &ProgramShape) -> String {
    let parameters: Vec<String> = shape.parameters.iter().map(Shape::to_string).collect();
    format!("main({}) -> {}", parameters.join(", "), shape.result)
}

/// Reads the module, refusing files that are neither MLIR text nor bytecode.
fn read_program(file: &Path) -> anyhow::Result<Program> {
    let code = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let program = Program::mlir(code);
    if !program.is_mlir_bytecode() && std::str::from_utf8(program.code()).is_err() {
        bail!("{} is neither MLIR text nor MLIR bytecode", file.display());
    }
    Ok(program)
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

/// Runs `oxla run`.
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    let program = read_program(&args.file)?;
    let client = args.plugin.client()?;
    let executable = client
        .compile(&program, &CompileOptions::new())
        .with_context(|| format!("cannot compile {}", args.file.display()))?;
    let shape = executable.program_shape()?.clone();
    if args.inputs.is_empty() && !shape.parameters.is_empty() {
        println!("{}", signature(&shape));
        println!("(give one --input X.npy per parameter to run it)");
        return Ok(());
    }
    let inputs = read_inputs(&args.file, &args.inputs, &shape)?;
    let outputs = execute(&client, &executable, &inputs, &shape)?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    for (i, output) in outputs.iter().enumerate() {
        println!("out[{i}]: {}", summarize(output));
        if let Some(dir) = &args.out {
            let path = dir.join(format!("out_{i}.npy"));
            output.write_file(&path)?;
        }
    }
    Ok(())
}
