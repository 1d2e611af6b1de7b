//! Compiling a jaxpr for a mesh (one SPMD program that XLA's Shardy
//! partitioner splits over the mesh's devices) and running it on arrays.

use oxla_core::{Jaxpr, Location, ShardingDesc};
use oxla_pjrt::{
    DeviceAssignment, ExecuteOptions, HloSharding, LoadedExecutable, Partitioner, Program,
};

use super::mesh::Mesh;
use super::placement::{ShardLayout, Sharded, shards_for};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::runtime::client;

/// A program compiled for a mesh, with the layout XLA chose for each
/// parameter and result.
pub(crate) struct SpmdProgram {
    /// The executable (one partition per mesh device).
    pub executable: LoadedExecutable,
    /// The mesh.
    pub mesh: Mesh,
    /// The layout of each parameter (constants first).
    pub parameters: Vec<HloSharding>,
    /// The layout of each result.
    pub results: Vec<ShardLayout>,
}

/// The mesh whose description is `desc`: the arrays' meshes are searched
/// first (they hold the devices), then the default client's devices.
pub(crate) fn mesh_of(desc: &oxla_core::MeshDesc, known: &[&Mesh]) -> Result<Mesh> {
    if let Some(mesh) = known.iter().find(|m| m.desc() == desc) {
        return Ok((*mesh).clone());
    }
    let devices = client()?.addressable_devices()?;
    let chosen = desc
        .device_ids
        .iter()
        .map(|id| {
            devices
                .iter()
                .find(|d| d.id().ok().map(i64::from) == Some(*id))
                .cloned()
                .ok_or_else(|| Error::Sharding {
                    message: format!(
                        "the mesh {desc} names device {id}, which this client does not have"
                    ),
                    location: None,
                })
        })
        .collect::<Result<Vec<_>>>()?;
    let axes: Vec<(&str, usize)> = desc.axes.iter().map(|(n, s)| (&**n, *s)).collect();
    Mesh::with_devices(chosen, &axes)
}

/// Lowers `jaxpr` with these shardings (one per parameter, constants
/// first; one per result, `None` where XLA chooses) and donation aliases,
/// and compiles it for `mesh` through the persistent cache.
pub(crate) fn compile(
    jaxpr: &Jaxpr,
    mesh: &Mesh,
    arg_shardings: &[Option<ShardingDesc>],
    result_shardings: &[Option<ShardingDesc>],
    aliases: &[(usize, usize)],
    function: &str,
) -> Result<(SpmdProgram, oxla_cache::Source)> {
    let text = oxla_lower::lower(
        jaxpr,
        &oxla_lower::Lowering {
            platform: crate::runtime::lowering_platform(),
            aliases,
            arg_shardings,
            result_shardings,
            ..oxla_lower::Lowering::default()
        },
    )?;
    let client = client()?;
    let options = client
        .default_compile_options()
        .device_assignment(DeviceAssignment::new(&[mesh.device_ids().to_vec()])?)
        .spmd(Partitioner::Shardy);
    let cache = crate::runtime::prepare_compile(client, &text)?;
    let span = tracing::info_span!("compile", function = %function, source = tracing::field::Empty)
        .entered();
    let compiled = oxla_cache::compile(client, &Program::mlir(text), &options, cache.as_deref())
        .map_err(|e| Error::Compile {
            function: function.to_string(),
            source: std::sync::Arc::new(e),
        })?;
    span.record("source", tracing::field::debug(&compiled.source));
    drop(span);
    for warning in &compiled.warnings {
        crate::config::diagnostic(warning);
    }
    let executable = compiled.executable;
    let shape = executable.program_shape()?;
    let count = jaxpr.constvars.len() + jaxpr.invars.len();
    let parameters = shape
        .parameter_shardings
        .clone()
        .unwrap_or_else(|| vec![HloSharding::Replicated; count]);
    let ranks = jaxpr.outvars.iter().map(|a| jaxpr.atom_aval(a).shape.len());
    let results = match &shape.output_shardings {
        Some(layouts) => layouts
            .iter()
            .zip(ranks)
            .map(|(hlo, rank)| ShardLayout::of_hlo(mesh, hlo, rank))
            .collect(),
        None => ranks
            .map(|rank| ShardLayout::of_hlo(mesh, &HloSharding::Replicated, rank))
            .collect(),
    };
    Ok((
        SpmdProgram {
            executable,
            mesh: mesh.clone(),
            parameters,
            results,
        },
        compiled.source,
    ))
}

impl SpmdProgram {
    /// Runs the program on `args` (constants first): each argument's blocks
    /// go to their devices (an array already laid out as the parameter is
    /// passed as it is); each result is a sharded array of `out_avals`.
    pub(crate) fn run(
        &self,
        args: &[&Array],
        out_avals: &[oxla_core::Aval],
        options: &ExecuteOptions,
        location: Location,
    ) -> Result<Vec<Array>> {
        if args.len() != self.parameters.len() {
            return Err(Error::InvalidArgument(format!(
                "the program takes {} arguments, {} given",
                self.parameters.len(),
                args.len()
            )));
        }
        let per_argument = args
            .iter()
            .zip(&self.parameters)
            .map(|(x, layout)| shards_for(x, &self.mesh, layout, location))
            .collect::<Result<Vec<_>>>()?;
        let per_device: Vec<Vec<&oxla_pjrt::Buffer>> = (0..self.mesh.size())
            .map(|p| per_argument.iter().map(|shards| shards[p].get()).collect())
            .collect();
        let outputs = self.executable.execute_sharded(&per_device, options)?;
        drop(per_device);
        drop(per_argument);
        let mut by_result: Vec<Vec<oxla_pjrt::Buffer>> =
            (0..out_avals.len()).map(|_| Vec::new()).collect();
        for device_outputs in outputs {
            for (j, buffer) in device_outputs.into_iter().enumerate() {
                by_result[j].push(buffer);
            }
        }
        Ok(crate::ops::with_rule_location(location, || {
            by_result
                .into_iter()
                .zip(out_avals)
                .zip(&self.results)
                .map(|((shards, aval), layout)| {
                    Array::wrap_sharded(
                        Sharded {
                            shards,
                            layout: layout.clone(),
                        },
                        aval.clone(),
                    )
                })
                .collect()
        }))
    }
}
