//! Writing oxla functions as `jax.export` files: [`Jit::export`] traces a
//! jitted function for example arguments and returns an
//! [`oxla_export::Exported`] whose bytes ([`Exported::to_bytes`]) Python's
//! `jax.export.deserialize` loads, calls (inside `jax.jit` too) and, when
//! the vjp was written ([`ExportOptions::vjp_order`]), differentiates.
//!
//! The module is a StableHLO portable artifact (constants embedded)
//! written by oxla's own VHLO writer (`oxla_export::stablehlo_text_to_artifact`).
//! `#[derive(Pytree)]` structs become dicts of their fields, the jitted
//! function's top-level tuple its positional arguments.
//!
//! [`Exported::to_bytes`]: oxla_export::Exported::to_bytes

mod call;
mod program;
mod tree;

pub use call::ExportedFn;

use oxla_core::primitive::host;
use oxla_core::{Location, ShardingDesc};
use oxla_export::{AbstractMesh, AxisType, Exported, NamedSharding, Sharding};

use crate::error::{Error, Result};
use crate::jit::Jit;
use crate::pytree::Pytree;
use program::{FlatProgram, Slot};

/// The calling convention oxla's exports follow (JAX's current one).
const CALLING_CONVENTION: u16 = 10;

/// How [`Jit::export`] writes an export: `ExportOptions::new()` writes
/// no vjp, for the platform of oxla's runtime.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    vjp_order: usize,
    platforms: Option<Vec<String>>,
}

impl ExportOptions {
    /// The defaults: no vjp, the platform of oxla's runtime.
    pub fn new() -> ExportOptions {
        ExportOptions::default()
    }

    /// Also writes the vjp, and its vjp, up to `order` (as
    /// `Exported.serialize(vjp_order=...)`): 1 lets JAX take `jax.grad` of
    /// the loaded function, 2 `jax.grad(jax.grad(...))`.
    pub fn vjp_order(mut self, order: usize) -> ExportOptions {
        self.vjp_order = order;
        self
    }

    /// The platforms the export may run on (`cpu`, `cuda`, `rocm`, `tpu`):
    /// one platform's export is lowered as for it (linear algebra calls
    /// LAPACK on the CPU, as JAX's), several platforms' share portable
    /// StableHLO.
    pub fn platforms(mut self, platforms: &[&str]) -> ExportOptions {
        self.platforms = Some(platforms.iter().map(|p| p.to_string()).collect());
        self
    }
}

/// The name of a host callback `jaxpr` (or a jaxpr inside it) calls.
fn host_callback_in(jaxpr: &oxla_core::Jaxpr) -> Option<String> {
    jaxpr.eqns.iter().find_map(|e| match &e.primitive {
        oxla_core::Primitive::Host(host::Op::HostCallback { callback, .. }) => {
            Some(callback.name.clone())
        }
        other => other
            .nested_jaxprs()
            .into_iter()
            .find_map(|inner| host_callback_in(inner.jaxpr())),
    })
}

/// A module's shardings in JAX's form.
fn named_sharding(desc: &ShardingDesc, platform: &str) -> NamedSharding {
    NamedSharding {
        mesh: AbstractMesh {
            axis_names: desc.mesh.axes.iter().map(|(n, _)| n.to_string()).collect(),
            axis_sizes: desc.mesh.axes.iter().map(|(_, s)| *s as u32).collect(),
            axis_types: vec![AxisType::Auto; desc.mesh.axes.len()],
            device_kind: Some(platform.to_string()),
            num_cores: None,
            platform: Some(platform.to_string()),
        },
        spec: desc
            .dims
            .iter()
            .map(|axes| axes.iter().map(|a| a.to_string()).collect())
            .collect(),
        reduced: Vec::new(),
        unreduced: Vec::new(),
        memory_kind: None,
    }
}

/// What one export (the function, or one of its vjps) is made of.
struct ExportParts<'a> {
    name: String,
    program: FlatProgram,
    in_tree: oxla_export::PyTreeDef,
    out_tree: oxla_export::PyTreeDef,
    in_slots: Vec<Slot>,
    out_slots: Vec<Slot>,
    arg_shardings: Vec<Option<ShardingDesc>>,
    result_shardings: Vec<Option<ShardingDesc>>,
    platforms: &'a [String],
}

/// Builds the export of `parts` with its vjps up to `vjp_order`.
fn build(parts: ExportParts<'_>, vjp_order: usize, location: Location) -> Result<Exported> {
    let mesh_size = parts
        .arg_shardings
        .iter()
        .chain(&parts.result_shardings)
        .flatten()
        .map(|s| s.mesh.size())
        .next();
    let platform = parts.platforms.first().map(String::as_str).unwrap_or("cpu");
    let shardings = |descs: &[Option<ShardingDesc>], count: usize| -> Vec<Sharding> {
        (0..count)
            .map(|i| match descs.get(i) {
                Some(Some(desc)) => Sharding::Named(named_sharding(desc, platform)),
                Some(None) | None => Sharding::Unspecified,
            })
            .collect()
    };
    // One platform's export is lowered as for it (LAPACK on the CPU);
    // several platforms' share portable StableHLO.
    let lowering = match parts.platforms {
        [only] => only.parse::<oxla_pjrt::Platform>().map_or(
            oxla_lower::Platform::Any,
            crate::runtime::lowering_platform_of,
        ),
        _ => oxla_lower::Platform::Any,
    };
    let module = parts.program.module(
        lowering,
        parts.platforms.len() > 1,
        &parts.arg_shardings,
        &parts.result_shardings,
        location,
    )?;
    let vjp = if vjp_order > 0 {
        let (program, in_slots, out_slots) =
            parts
                .program
                .vjp(&parts.in_slots, &parts.out_slots, location)?;
        Some(Box::new(build(
            ExportParts {
                name: format!("{}_vjp", parts.name),
                program,
                in_tree: tree::flat_input_tree(in_slots.len()),
                out_tree: oxla_export::PyTreeDef::Tuple(vec![
                    oxla_export::PyTreeDef::Leaf;
                    out_slots.len()
                ]),
                in_slots,
                out_slots,
                arg_shardings: Vec::new(),
                result_shardings: Vec::new(),
                platforms: parts.platforms,
            },
            vjp_order - 1,
            location,
        )?))
    } else {
        None
    };
    Ok(Exported {
        serialization_version: 3,
        format_version: 11,
        function_name: parts.name,
        jax_version: None,
        in_tree: parts.in_tree,
        in_avals: parts.in_slots.iter().map(Slot::abstract_value).collect(),
        out_tree: parts.out_tree,
        out_avals: parts.out_slots.iter().map(Slot::abstract_value).collect(),
        in_shardings: shardings(&parts.arg_shardings, parts.in_slots.len()),
        out_shardings: shardings(&parts.result_shardings, parts.out_slots.len()),
        nr_devices: mesh_size.unwrap_or(1) as u32,
        platforms: parts.platforms.to_vec(),
        ordered_effects: Vec::new(),
        unordered_effects: Vec::new(),
        disabled_checks: Vec::new(),
        mlir_module: module,
        calling_convention_version: CALLING_CONVENTION,
        module_kept_var_idx: parts
            .in_slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.float0)
            .map(|(i, _)| i)
            .collect(),
        uses_global_constants: parts.platforms.len() > 1,
        vjp,
    })
}

impl<In: Pytree, Out: Pytree, F: Fn(In) -> Out> Jit<In, Out, F> {
    /// Writes this function, traced for `args`' types and structure, as a
    /// `jax.export` [`Exported`]: its bytes ([`Exported::to_bytes`]) load in
    /// Python with `jax.export.deserialize` and run with `.call`, inside
    /// `jax.jit` too, and under `jax.grad` when `options` asks for the vjp.
    /// `in_shardings`/`out_shardings` of the jit are written as named
    /// shardings over the mesh. A `Static` input has no JAX form: close
    /// over it instead.
    ///
    /// The function's top-level tuple becomes JAX's positional arguments,
    /// `#[derive(Pytree)]` structs and `BTreeMap`s dicts, `Vec`s lists (JAX
    /// orders a dict's leaves by key where oxla orders a struct's by field:
    /// the export's inputs and outputs are in JAX's order). The
    /// module is a StableHLO portable artifact with the captured constants
    /// embedded, written by oxla's own VHLO writer. A program that calls a
    /// host callback cannot be exported (its closure lives in this process).
    ///
    /// ```
    /// use oxla::{Array, ExportOptions, jit};
    /// # fn main() -> oxla::Result<()> {
    /// let f = jit(|(x, y): (Array, Array)| &x * &y + 1.0).named("affine");
    /// let args = (Array::from_slice(&[1.0f32, 2.0], &[2])?, Array::from_slice(&[3.0f32, 4.0], &[2])?);
    /// let exported = f.export(&args, &ExportOptions::new().vjp_order(1))?;
    /// assert_eq!(exported.function_name, "affine");
    /// assert_eq!(exported.in_avals.len(), 2);
    /// assert!(exported.vjp.is_some());
    /// // In Python: jax.export.deserialize(data).call(x, y), jax.grad too.
    /// let data: Vec<u8> = exported.to_bytes();
    /// assert!(!data.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn export(&self, args: &In, options: &ExportOptions) -> Result<Exported> {
        let location = Location::from_caller(std::panic::Location::caller());
        let (traced, in_tree, arg_shardings, result_shardings) =
            self.trace_for_export(args, location)?;
        if let Some(callback) = host_callback_in(&traced.jaxpr) {
            return Err(Error::Usage {
                function: "export",
                message: format!(
                    "the program calls the host callback {callback}, a closure of this process \
                     that no export can carry"
                ),
                location,
            });
        }
        let unexportable = |e: tree::Unexportable| Error::Usage {
            function: "export",
            message: format!("input{} is {}", e.path, e.what),
            location,
        };
        let inputs = tree::input_tree(&in_tree).map_err(unexportable)?;
        let outputs = tree::output_tree(&traced.out_tree).map_err(|e| Error::Usage {
            function: "export",
            message: format!("output{} is {}", e.path, e.what),
            location,
        })?;
        let consts = traced.jaxpr.constvars.len();
        let pick = |descs: &[Option<ShardingDesc>], order: &[usize]| -> Vec<Option<ShardingDesc>> {
            if descs.iter().all(Option::is_none) {
                return Vec::new();
            }
            order.iter().map(|&i| descs[i].clone()).collect()
        };
        let arg_shardings = pick(&arg_shardings[consts..], &inputs.oxla_leaf);
        let result_shardings = pick(&result_shardings, &outputs.oxla_leaf);
        let program = FlatProgram::reordered(
            traced.jaxpr,
            traced.consts,
            &inputs.oxla_leaf,
            &outputs.oxla_leaf,
        );
        let platforms = match &options.platforms {
            Some(p) if !p.is_empty() => p.clone(),
            Some(_) | None => vec![crate::runtime::client()?.platform_name()?.to_lowercase()],
        };
        build(
            ExportParts {
                name: self.name().to_string(),
                in_slots: program.in_slots(),
                out_slots: program.out_slots(),
                program,
                in_tree: inputs.tree,
                out_tree: outputs.tree,
                arg_shardings,
                result_shardings,
                platforms: &platforms,
            },
            options.vjp_order,
            location,
        )
    }
}
