//! Lowers an oxla [`Jaxpr`] to a StableHLO module through melior.
//!
//! Every op is built as a generic operation (`"stablehlo.add"(...)`) in a
//! context that allows unregistered dialects: MLIR checks only the structure
//! (SSA, regions, types), so oxla-core's shape rules must be exact, and every
//! lowering is tested by compiling the module in the real PJRT plugin. Each
//! op carries the user's source line as its location.
#![warn(missing_docs)]

mod attrs;
mod body;
mod emit;
mod merge;
mod rules;
mod special;

use melior::Context;
use melior::ir::attribute::{StringAttribute, TypeAttribute};
use melior::ir::operation::{OperationLike, OperationMutLike};
use melior::ir::r#type::FunctionType;
use melior::ir::{Block, BlockLike, Identifier, Location, Module, Region, RegionLike};
use oxla_core::{ExportedFunction, Jaxpr, MeshDesc, ShardingDesc, Var};

pub use emit::LowerError;
pub use merge::check_exported_module;

/// The symbol of the one mesh an SPMD module declares (`sdy.mesh @mesh`).
pub const MESH_SYMBOL: &str = "mesh";

/// The platform a program is lowered for, where JAX's lowering differs by
/// platform: linear algebra calls LAPACK on the CPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Platform {
    /// Any (a program for several platforms): portable StableHLO, with
    /// the decompositions StableHLO lacks as XLA's own expansions (which
    /// every XLA compiler runs); eig alone calls LAPACK.
    #[default]
    Any,
    /// The CPU: JAX's CPU lowering, LAPACK's `lapack_*_ffi` calls.
    Cpu,
    /// NVIDIA or AMD GPUs, or TPUs: StableHLO's ops, and XLA's expansions
    /// of QR, eigh, LU and SVD (as JAX's TPU lowering); eig is an error.
    Accelerator,
}

/// How to lower a jaxpr besides its equations: the platform, donation
/// aliases and the shardings of parameters and results.
#[derive(Debug, Clone, Default)]
pub struct Lowering<'a> {
    /// The platform the program is for.
    pub platform: Platform,
    /// `(parameter, output)` pairs: the output reuses the donated
    /// parameter's buffer (`tf.aliasing_output`, as JAX emits).
    pub aliases: &'a [(usize, usize)],
    /// The sharding of each parameter (constants first), `None` for one the
    /// partitioner may lay out as it likes; empty for none at all.
    pub arg_shardings: &'a [Option<ShardingDesc>],
    /// The sharding of each result, as `arg_shardings`.
    pub result_shardings: &'a [Option<ShardingDesc>],
    /// The value of each constvar (little-endian, row-major bytes of its
    /// aval), embedded in the module as a `stablehlo.constant` instead of
    /// passed as a parameter: `main` then takes the invars only, and
    /// `arg_shardings` and `aliases` count from the first invar. For
    /// self-contained programs (exports).
    pub embedded_constants: Option<&'a [Vec<u8>]>,
    /// Extra attributes of the module: (name, attribute in MLIR syntax).
    pub module_attributes: &'a [(String, String)],
    /// Prints every op in MLIR's generic form and without locations (what
    /// `oxla_export::stablehlo_text_to_artifact` reads) instead of the
    /// custom forms with the source line of each op.
    pub generic_form: bool,
}

/// Checks that a multi-device exported function is called in a program
/// partitioned over a mesh with its axes (whose `@mesh` its shardings name).
fn check_mesh(function: &ExportedFunction, mesh: Option<&MeshDesc>) -> Result<(), LowerError> {
    let Some(axes) = function.mesh_axes() else {
        return Ok(());
    };
    let wanted: Vec<String> = axes.iter().map(|(n, s)| format!("'{n}': {s}")).collect();
    let same = mesh.is_some_and(|m| {
        m.axes.len() == axes.len()
            && m.axes
                .iter()
                .zip(axes)
                .all(|((n, s), (wn, ws))| **n == **wn && s == ws)
    });
    if same {
        return Ok(());
    }
    let got = match mesh {
        Some(m) => format!("is sharded over {m}"),
        None => "runs on one device".to_string(),
    };
    Err(LowerError::Sharding(format!(
        "the exported function {} is partitioned over Mesh({}) and the program calling it {got}; \
         call it inside a jit whose shardings use a mesh with the same axes",
        function.name(),
        wanted.join(", ")
    )))
}

/// The mesh a program with these shardings and constraints runs on (the
/// first met): `None` for a single-device program; an error when two
/// meshes lay out different devices (see [`program_meshes`]).
pub fn program_mesh(
    jaxpr: &Jaxpr,
    arg_shardings: &[Option<ShardingDesc>],
    result_shardings: &[Option<ShardingDesc>],
) -> Result<Option<MeshDesc>, LowerError> {
    Ok(program_meshes(jaxpr, arg_shardings, result_shardings)?
        .into_iter()
        .next())
}

/// Every mesh of a program's shardings and constraints, each once, in the
/// order met. Meshes of different shapes or axis names may meet in one
/// program when they lay out the same devices in the same order, as JAX
/// allows (each is declared under its own symbol); otherwise an error.
pub fn program_meshes(
    jaxpr: &Jaxpr,
    arg_shardings: &[Option<ShardingDesc>],
    result_shardings: &[Option<ShardingDesc>],
) -> Result<Vec<MeshDesc>, LowerError> {
    let mut meshes: Vec<MeshDesc> = Vec::new();
    let given = arg_shardings.iter().chain(result_shardings).flatten();
    for mesh in given
        .map(|s| s.mesh.clone())
        .chain(oxla_core::sharding::program_meshes(jaxpr))
    {
        if let Some(first) = meshes.first()
            && first.device_ids != mesh.device_ids
        {
            return Err(LowerError::Sharding(format!(
                "one program uses two meshes over different devices, {first} on devices {:?} and \
                 {mesh} on devices {:?}; put every sharded value of a jit on meshes of the same \
                 devices in the same order",
                first.device_ids, mesh.device_ids
            )));
        }
        if !meshes.contains(&mesh) {
            meshes.push(mesh);
        }
    }
    Ok(meshes)
}

/// The symbol the program declares mesh `index` of its meshes under:
/// `mesh`, then `mesh_0`, `mesh_1`, ... (as JAX names them).
pub fn mesh_symbol(index: usize) -> String {
    match index {
        0 => MESH_SYMBOL.to_string(),
        i => format!("{MESH_SYMBOL}_{}", i - 1),
    }
}

/// The symbol of `mesh` among a program's `meshes`.
pub(crate) fn symbol_of(meshes: &[MeshDesc], mesh: &MeshDesc) -> Result<String, LowerError> {
    meshes
        .iter()
        .position(|m| m == mesh)
        .map(mesh_symbol)
        .ok_or_else(|| LowerError::Sharding(format!("{mesh} is not a mesh of this program")))
}

/// Lowers `jaxpr` to the text of a StableHLO module whose `main` takes the
/// jaxpr's constants then its parameters, and returns its results.
pub fn lower_to_text(jaxpr: &Jaxpr) -> Result<String, LowerError> {
    lower_with_aliases(jaxpr, &[])
}

/// [`lower_to_text`] with input/output aliases: each `(parameter, output)`
/// pair lets the output reuse the (donated) parameter's buffer
/// (`tf.aliasing_output` on the parameter, as JAX emits for donation).
pub fn lower_with_aliases(jaxpr: &Jaxpr, aliases: &[(usize, usize)]) -> Result<String, LowerError> {
    lower(
        jaxpr,
        &Lowering {
            aliases,
            ..Lowering::default()
        },
    )
}

/// The attribute dictionary of each of `count` parameters or results:
/// its sharding and, for parameters, its donation alias.
fn value_attributes(
    ranks: &[usize],
    shardings: &[Option<ShardingDesc>],
    aliases: &[(usize, usize)],
    meshes: &[MeshDesc],
) -> Result<Option<String>, LowerError> {
    if shardings.iter().all(Option::is_none) && aliases.is_empty() {
        return Ok(None);
    }
    let dicts: Vec<String> = (0..ranks.len())
        .map(|i| {
            let mut entries = Vec::new();
            if let Some((_, output)) = aliases.iter().find(|(param, _)| *param == i) {
                entries.push(format!("tf.aliasing_output = {output} : i32"));
            }
            if let Some(Some(sharding)) = shardings.get(i) {
                let symbol = symbol_of(meshes, &sharding.mesh)?;
                entries.push(format!(
                    "sdy.sharding = {}",
                    sharding.sdy_attribute(&symbol, ranks[i])
                ));
            }
            Ok(format!("{{{}}}", entries.join(", ")))
        })
        .collect::<Result<_, LowerError>>()?;
    Ok(Some(format!("[{}]", dicts.join(", "))))
}

// Long by design: one MLIR context builds the module in order (the body,
// the signature's sharding and alias attributes, the mesh declarations and
// partition count, the checks, the printing); each step reads what the
// ones before it made in that context.
/// Lowers `jaxpr` as [`lower_to_text`] does, with `lowering`'s aliases and
/// shardings; a program with shardings declares its mesh (`sdy.mesh`) and
/// its number of partitions, for XLA's Shardy partitioner.
pub fn lower(jaxpr: &Jaxpr, lowering: &Lowering<'_>) -> Result<String, LowerError> {
    let meshes = program_meshes(jaxpr, lowering.arg_shardings, lowering.result_shardings)?;
    let context = Context::new();
    context.set_allow_unregistered_dialects(true);
    let unknown = Location::unknown(&context);
    let module = Module::new(unknown);

    let embedded = lowering.embedded_constants;
    if let Some(values) = embedded
        && values.len() != jaxpr.constvars.len()
    {
        return Err(LowerError::Mlir(format!(
            "{} embedded constant values for {} constants",
            values.len(),
            jaxpr.constvars.len()
        )));
    }
    let params: Vec<Var> = match embedded {
        Some(_) => jaxpr.invars.clone(),
        None => jaxpr
            .constvars
            .iter()
            .chain(&jaxpr.invars)
            .copied()
            .collect(),
    };
    let param_types = params
        .iter()
        .map(|v| emit::tensor_type(&context, jaxpr.aval(*v)))
        .collect::<Result<Vec<_>, _>>()?;
    let result_types = jaxpr
        .outvars
        .iter()
        .map(|a| emit::tensor_type(&context, jaxpr.atom_aval(a)))
        .collect::<Result<Vec<_>, _>>()?;

    let exported;
    let block = Block::new(
        &param_types
            .iter()
            .map(|t| (*t, unknown))
            .collect::<Vec<_>>(),
    );
    {
        let args = (0..params.len())
            .map(|i| {
                block
                    .argument(i)
                    .map(Into::into)
                    .map_err(emit::melior_error)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut emitter = emit::Emitter::new(&context, &block, &meshes, lowering.platform);
        let args = match embedded {
            Some(values) => {
                let mut all = jaxpr
                    .constvars
                    .iter()
                    .zip(values)
                    .map(|(v, bytes)| emitter.embedded_constant(jaxpr.aval(*v), bytes, unknown))
                    .collect::<Result<Vec<_>, _>>()?;
                all.extend(args);
                all
            }
            None => args,
        };
        let results = body::lower_body(&mut emitter, jaxpr, &args)?;
        emitter.op("func.return", &results, &[], &[], unknown)?;
        exported = emitter.exported_functions();
    }
    let region = Region::new();
    region.append_block(block);
    let mut attributes = Vec::new();
    let parse = |text: &str| {
        melior::ir::attribute::Attribute::parse(&context, text)
            .ok_or_else(|| LowerError::Mlir(format!("cannot parse attribute {text}")))
    };
    let param_ranks: Vec<usize> = params.iter().map(|v| jaxpr.aval(*v).shape.len()).collect();
    let result_ranks: Vec<usize> = jaxpr
        .outvars
        .iter()
        .map(|a| jaxpr.atom_aval(a).shape.len())
        .collect();
    if let Some(text) = value_attributes(
        &param_ranks,
        lowering.arg_shardings,
        lowering.aliases,
        &meshes,
    )? {
        attributes.push((Identifier::new(&context, "arg_attrs"), parse(&text)?));
    }
    if let Some(text) = value_attributes(&result_ranks, lowering.result_shardings, &[], &meshes)? {
        attributes.push((Identifier::new(&context, "res_attrs"), parse(&text)?));
    }
    let function = melior::ir::operation::OperationBuilder::new("func.func", unknown)
        .add_attributes(&attributes)
        .add_attributes(&[
            (
                Identifier::new(&context, "sym_name"),
                StringAttribute::new(&context, "main").into(),
            ),
            (
                Identifier::new(&context, "sym_visibility"),
                StringAttribute::new(&context, "public").into(),
            ),
            (
                Identifier::new(&context, "function_type"),
                TypeAttribute::new(FunctionType::new(&context, &param_types, &result_types).into())
                    .into(),
            ),
        ])
        .add_regions([region])
        .build()
        .map_err(emit::melior_error)?;
    let mut module = module;
    for (index, mesh) in meshes.iter().enumerate() {
        let declaration = melior::ir::operation::OperationBuilder::new("sdy.mesh", unknown)
            .add_attributes(&[
                (
                    Identifier::new(&context, "sym_name"),
                    StringAttribute::new(&context, &mesh_symbol(index)).into(),
                ),
                (
                    Identifier::new(&context, "mesh"),
                    parse(&mesh.sdy_attribute())?,
                ),
            ])
            .build()
            .map_err(emit::melior_error)?;
        module.body().append_operation(declaration);
    }
    if let Some(mesh) = meshes.first() {
        module.as_operation_mut().set_attribute(
            "mhlo.num_partitions",
            parse(&format!("{} : i32", mesh.size()))?,
        );
        module
            .as_operation_mut()
            .set_attribute("mhlo.num_replicas", parse("1 : i32")?);
    }
    for (name, value) in lowering.module_attributes {
        module.as_operation_mut().set_attribute(name, parse(value)?);
    }
    module.body().append_operation(function);
    for function in &exported {
        check_mesh(function, meshes.first())?;
        merge::merge_into(&context, &module, function)?;
    }
    // With debug info, each op keeps its `loc("file.rs":line:col)`, so a
    // plugin's error about an op names the user's source line.
    let flags = if lowering.generic_form {
        melior::ir::operation::OperationPrintingFlags::new().print_generic_operation_form()
    } else {
        melior::ir::operation::OperationPrintingFlags::new().enable_debug_info(true, false)
    };
    module
        .as_operation()
        .to_string_with_flags(flags)
        .map_err(emit::melior_error)
}
