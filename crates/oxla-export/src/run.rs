//! Running an export through PJRT with JAX's calling convention: an `i32`
//! platform index first when several platforms were exported, then the kept
//! inputs; SPMD exports are compiled for their devices, their inputs split
//! and their outputs assembled by the shardings of the partitioned program.
//! A shape-polymorphic export compiles once per distinct input shape, each
//! refined to static shapes first ([`Exported::refine`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use oxla_npy::HostArray;
use oxla_pjrt::{
    Buffer, Client, DeviceAssignment, ElementType, ExecuteOptions, HloSharding, LoadedExecutable,
    Partitioner, Program, ProgramShape,
};

use crate::error::{ExportError, Result};
use crate::model::{AbstractValue, Exported};

/// An export compiled for a client, ready to call. An export for several
/// platforms runs its `main` with the client's platform index bound as a
/// constant (see [`crate::bind_platform_index`]). A shape-polymorphic export
/// compiles on its first call with each distinct set of input shapes.
pub struct LoadedExport {
    exported: Exported,
    client: Client,
    compiled: Compiled,
}

/// The executable of a static export, or a polymorphic export's
/// specializations by input dims.
enum Compiled {
    Static(StaticExecutable),
    PerShape(Mutex<HashMap<Vec<Vec<i64>>, Arc<LoadedExport>>>),
}

/// A compiled static export.
struct StaticExecutable {
    executable: LoadedExecutable,
    /// The `i32` platform index passed first, when several platforms were exported.
    platform_index: Option<i32>,
    program: ProgramShape,
}

fn cannot_run(message: String) -> ExportError {
    ExportError::CannotRun(message)
}

/// Symbolic dimensions of the inputs, as `input i (path): aval` lines.
fn symbolic_inputs(exported: &Exported) -> (Vec<String>, Vec<String>) {
    let paths = exported.in_tree.leaf_paths();
    let mut names = Vec::new();
    let mut where_ = Vec::new();
    for (i, aval) in exported.in_avals.iter().enumerate() {
        let dims = aval.symbolic_dims();
        if dims.is_empty() {
            continue;
        }
        for d in dims {
            if !names.iter().any(|n| n == d) {
                names.push(d.to_string());
            }
        }
        where_.push(format!(
            "input {i} {} {aval}",
            paths.get(i).map_or("", String::as_str)
        ));
    }
    (names, where_)
}

fn element_type(aval: &AbstractValue, what: &str) -> Result<ElementType> {
    aval.dtype.element_type().ok_or_else(|| {
        cannot_run(format!(
            "{what} has dtype {}, which oxla cannot move between host and device",
            aval.dtype.name()
        ))
    })
}

impl LoadedExport {
    /// Checks that `exported` can run on `client` and compiles it; a
    /// shape-polymorphic export is compiled by [`call`](Self::call), once
    /// per distinct set of input shapes.
    pub fn new(client: &Client, exported: &Exported) -> Result<LoadedExport> {
        if exported.is_shape_polymorphic() {
            return Ok(LoadedExport {
                exported: exported.clone(),
                client: client.clone(),
                compiled: Compiled::PerShape(Mutex::new(HashMap::new())),
            });
        }
        Ok(Self::with_cache(client, exported, None)?.0)
    }

    /// [`new`](Self::new), compiling through a persistent compile cache;
    /// also returns where the executable came from and cache warnings.
    pub fn with_cache(
        client: &Client,
        exported: &Exported,
        cache: Option<&oxla_cache::DiskCache>,
    ) -> Result<(LoadedExport, oxla_cache::Source, Vec<String>)> {
        let cc = exported.calling_convention_version;
        if !(crate::MIN_CALLING_CONVENTION..=crate::MAX_CALLING_CONVENTION).contains(&cc) {
            return Err(ExportError::UnsupportedCallingConvention(cc));
        }
        let (symbolic, where_) = symbolic_inputs(exported);
        if !symbolic.is_empty() {
            return Err(cannot_run(format!(
                "this export is shape-polymorphic in dimension(s) {} ({}); compile it for \
                 concrete input dims with `Exported::refine` first (LoadedExport::new compiles \
                 it per input shape when called)",
                symbolic.join(", "),
                where_.join("; ")
            )));
        }
        for (i, aval) in exported.in_avals.iter().enumerate() {
            element_type(aval, &format!("input {i}"))?;
        }
        for (i, aval) in exported.out_avals.iter().enumerate() {
            element_type(aval, &format!("output {i}"))?;
        }
        let platform = client.platform_name()?.to_lowercase();
        let index = exported
            .platforms
            .iter()
            .position(|p| *p == platform)
            .ok_or_else(|| {
                cannot_run(format!(
                    "exported for platform(s) {}, but this client's platform is {platform}",
                    exported.platforms.join(", ")
                ))
            })?;
        let platform_index = (exported.platforms.len() > 1).then_some(index as i32);
        // A portable artifact gets the index as a constant of its `main`, so
        // the plugin never compiles another platform's branches; any other
        // module takes it as its first parameter.
        let (module, platform_index) = match (platform_index, exported.module_form()) {
            (Some(index), crate::ModuleForm::PortableArtifact(v)) => {
                let version = format!("{}.{}.{}", v.major, v.minor, v.patch);
                let bound = crate::bind_platform_index(&exported.mlir_module, index, &version)
                    .map_err(|e| {
                        cannot_run(format!(
                            "cannot bind the platform index of this {}-platform export: {e}",
                            exported.platforms.len()
                        ))
                    })?;
                (bound, None)
            }
            (index, _) => (exported.mlir_module.clone(), index),
        };
        if !exported.ordered_effects.is_empty() {
            return Err(cannot_run(format!(
                "this export has ordered effects ({}), which take runtime tokens; oxla does not \
                 create tokens yet",
                exported.ordered_effects.join(", ")
            )));
        }
        let devices = client.addressable_devices()?;
        let needed = exported.nr_devices.max(1) as usize;
        if devices.len() < needed {
            return Err(cannot_run(format!(
                "exported for {needed} devices, but this client has {} (the CPU plugin takes \
                 cpu_device_count = {needed})",
                devices.len()
            )));
        }
        let options = if needed > 1 {
            let ids = devices[..needed]
                .iter()
                .map(|d| d.id().map(i64::from))
                .collect::<oxla_pjrt::Result<Vec<i64>>>()?;
            client
                .default_compile_options()
                .device_assignment(DeviceAssignment::new(&[ids])?)
                .spmd(Partitioner::Shardy)
        } else {
            client.default_compile_options()
        };
        let versions = (
            crate::StablehloVersion::of_artifact(&exported.mlir_module),
            crate::StablehloVersion::of_plugin(client.api()),
        );
        let compiled = oxla_cache::compile(client, &Program::mlir(module), &options, cache)
            .map_err(|e| match versions {
                // Only the plugin's own refusal may be the version's fault.
                (Some(artifact), Some(plugin))
                    if artifact > plugin && matches!(e, oxla_pjrt::Error::Plugin { .. }) =>
                {
                    ExportError::TooNew {
                        artifact,
                        plugin,
                        message: e.to_string(),
                    }
                }
                _ => e.into(),
            })?;
        let executable = compiled.executable;
        let program = executable.program_shape()?.clone();
        let expected = usize::from(platform_index.is_some()) + exported.module_kept_var_idx.len();
        if program.parameters.len() != expected {
            return Err(cannot_run(format!(
                "the module takes {} parameters, but its calling convention gives {expected}",
                program.parameters.len()
            )));
        }
        let loaded = LoadedExport {
            exported: exported.clone(),
            client: client.clone(),
            compiled: Compiled::Static(StaticExecutable {
                executable,
                platform_index,
                program,
            }),
        };
        Ok((loaded, compiled.source, compiled.warnings))
    }

    /// The export.
    pub fn exported(&self) -> &Exported {
        &self.exported
    }

    /// The compiled executable; `None` for a shape-polymorphic export,
    /// which has one per input shape it was called with.
    pub fn executable(&self) -> Option<&LoadedExecutable> {
        match &self.compiled {
            Compiled::Static(s) => Some(&s.executable),
            Compiled::PerShape(_) => None,
        }
    }

    /// The static export compiled for the dims of `inputs`, refined and
    /// compiled on first use.
    fn specialization(
        &self,
        specializations: &Mutex<HashMap<Vec<Vec<i64>>, Arc<LoadedExport>>>,
        inputs: &[HostArray],
    ) -> Result<Arc<LoadedExport>> {
        let dims: Vec<Vec<i64>> = inputs.iter().map(|x| x.dims.clone()).collect();
        let mut map = specializations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(done) = map.get(&dims) {
            return Ok(Arc::clone(done));
        }
        let refined = self.exported.refine(&dims)?;
        let loaded = Arc::new(LoadedExport::new(&self.client, &refined)?);
        map.insert(dims, Arc::clone(&loaded));
        Ok(loaded)
    }

    /// Checks the number of inputs.
    fn check_count(&self, inputs: &[HostArray]) -> Result<()> {
        let avals = &self.exported.in_avals;
        if inputs.len() != avals.len() {
            return Err(ExportError::BadInput(format!(
                "{} takes {} inputs ({}), {} given",
                self.exported.function_name,
                avals.len(),
                avals
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                inputs.len()
            )));
        }
        Ok(())
    }

    /// Checks `inputs` (the flat input leaves, in order) against the
    /// exported types: their count, dtypes, ranks and static dims (a
    /// symbolic dim takes any size).
    fn check_inputs(&self, inputs: &[HostArray]) -> Result<()> {
        self.check_count(inputs)?;
        let paths = self.exported.in_tree.leaf_paths();
        for (i, (input, aval)) in inputs.iter().zip(&self.exported.in_avals).enumerate() {
            let want_type = element_type(aval, &format!("input {i}"))?;
            let dims_fit = input.dims.len() == aval.shape.len()
                && input
                    .dims
                    .iter()
                    .zip(&aval.shape)
                    .all(|(&d, want)| match want {
                        crate::Dim::Known(w) => d == *w,
                        crate::Dim::Symbolic(_) => true,
                    });
            if !(input.npy_type.feeds(want_type) && dims_fit) {
                let dims: Vec<String> = input.dims.iter().map(i64::to_string).collect();
                return Err(ExportError::BadInput(format!(
                    "input {i} {} is {}[{}], but the export expects {aval}",
                    paths.get(i).map_or("", String::as_str),
                    input.element_type(),
                    dims.join(",")
                )));
            }
        }
        Ok(())
    }

    /// Calls the export on the host arrays of its flat input leaves; returns
    /// its flat output leaves.
    pub fn call(&self, inputs: &[HostArray]) -> Result<Vec<HostArray>> {
        let compiled = match &self.compiled {
            Compiled::Static(compiled) => compiled,
            Compiled::PerShape(specializations) => {
                self.check_inputs(inputs)?;
                return self.specialization(specializations, inputs)?.call(inputs);
            }
        };
        self.check_inputs(inputs)?;
        let mut globals: Vec<HostArray> = Vec::with_capacity(compiled.program.parameters.len());
        if let Some(index) = compiled.platform_index {
            globals.push(HostArray::new(
                ElementType::S32,
                vec![],
                index.to_le_bytes().to_vec(),
            ));
        }
        globals.extend(
            self.exported
                .module_kept_var_idx
                .iter()
                .map(|&i| inputs[i].clone()),
        );

        let devices = compiled.executable.addressable_devices();
        let replicated = HloSharding::Replicated;
        let parameter_sharding = |k: usize| -> &HloSharding {
            compiled
                .program
                .parameter_shardings
                .as_ref()
                .and_then(|s| s.get(k))
                .unwrap_or(&replicated)
        };
        let mut arguments: Vec<Vec<Buffer>> = Vec::with_capacity(devices.len());
        for (partition, device) in devices.iter().enumerate() {
            let mut list = Vec::with_capacity(globals.len());
            for (k, global) in globals.iter().enumerate() {
                let sharding = parameter_sharding(k);
                let shard_dims = sharding.shard_dims(&global.dims)?;
                let ranges = sharding
                    .block(partition as i64, &global.dims)?
                    .unwrap_or_else(|| global.dims.iter().map(|_| 0..0).collect());
                let shard = global.block(&ranges, &shard_dims);
                list.push(self.client.buffer_from_bytes(
                    &shard.bytes,
                    shard.element_type(),
                    &shard.dims,
                    Some(device),
                )?);
            }
            arguments.push(list);
        }
        let outputs = compiled
            .executable
            .execute_sharded(&arguments, &ExecuteOptions::default())?;
        self.assemble_outputs(compiled, &outputs)
    }

    /// Puts each output together from the partitions' blocks.
    fn assemble_outputs(
        &self,
        compiled: &StaticExecutable,
        outputs: &[Vec<Buffer>],
    ) -> Result<Vec<HostArray>> {
        let replicated = HloSharding::Replicated;
        self.exported
            .out_avals
            .iter()
            .enumerate()
            .map(|(j, aval)| {
                let element_type = element_type(aval, &format!("output {j}"))?;
                let dims = aval.static_dims().unwrap_or_default();
                let sharding = compiled
                    .program
                    .output_shardings
                    .as_ref()
                    .and_then(|s| s.get(j))
                    .unwrap_or(&replicated);
                let size = oxla_pjrt::expected_byte_len(element_type, &dims)?;
                let mut global = HostArray::new(element_type, dims.clone(), vec![0; size]);
                for (partition, device_outputs) in outputs.iter().enumerate() {
                    let buffer = device_outputs.get(j).ok_or_else(|| {
                        cannot_run(format!("partition {partition} returned no output {j}"))
                    })?;
                    let Some(ranges) = sharding.block(partition as i64, &dims)? else {
                        continue;
                    };
                    let (t, shard_dims) = buffer.array_type()?;
                    let shard = HostArray::new(t, shard_dims.to_vec(), buffer.to_host_bytes()?);
                    global.put_block(&ranges, &shard);
                }
                Ok(global)
            })
            .collect()
    }
}
