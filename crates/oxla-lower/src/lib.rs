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
mod control;
mod emit;
mod rules;

use melior::Context;
use melior::ir::attribute::{StringAttribute, TypeAttribute};
use melior::ir::operation::OperationLike;
use melior::ir::r#type::FunctionType;
use melior::ir::{Block, BlockLike, Identifier, Location, Module, Region, RegionLike};
use oxla_core::{Jaxpr, Var};

pub use emit::LowerError;

/// Lowers `jaxpr` to the text of a StableHLO module whose `main` takes the
/// jaxpr's constants then its parameters, and returns its results.
pub fn lower_to_text(jaxpr: &Jaxpr) -> Result<String, LowerError> {
    lower_with_aliases(jaxpr, &[])
}

/// [`lower_to_text`] with input/output aliases: each `(parameter, output)`
/// pair lets the output reuse the (donated) parameter's buffer
/// (`tf.aliasing_output` on the parameter, as JAX emits for donation).
pub fn lower_with_aliases(jaxpr: &Jaxpr, aliases: &[(usize, usize)]) -> Result<String, LowerError> {
    let context = Context::new();
    context.set_allow_unregistered_dialects(true);
    let unknown = Location::unknown(&context);
    let module = Module::new(unknown);

    let params: Vec<Var> = jaxpr
        .constvars
        .iter()
        .chain(&jaxpr.invars)
        .copied()
        .collect();
    let param_types = params
        .iter()
        .map(|v| emit::tensor_type(&context, jaxpr.aval(*v)))
        .collect::<Result<Vec<_>, _>>()?;
    let result_types = jaxpr
        .outvars
        .iter()
        .map(|a| emit::tensor_type(&context, jaxpr.atom_aval(a)))
        .collect::<Result<Vec<_>, _>>()?;

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
        let mut emitter = emit::Emitter::new(&context, &block);
        let results = body::lower_body(&mut emitter, jaxpr, &args)?;
        emitter.op("func.return", &results, &[], &[], unknown)?;
    }
    let region = Region::new();
    region.append_block(block);
    let mut attributes = Vec::new();
    if !aliases.is_empty() {
        let dicts: Vec<String> = (0..params.len())
            .map(|p| match aliases.iter().find(|(param, _)| *param == p) {
                Some((_, output)) => format!("{{tf.aliasing_output = {output} : i32}}"),
                None => "{}".to_string(),
            })
            .collect();
        let text = format!("[{}]", dicts.join(", "));
        let arg_attrs = melior::ir::attribute::Attribute::parse(&context, &text)
            .ok_or_else(|| LowerError::Mlir(format!("cannot parse arg_attrs {text}")))?;
        attributes.push((Identifier::new(&context, "arg_attrs"), arg_attrs));
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
    module.body().append_operation(function);
    // With debug info, each op keeps its `loc("file.rs":line:col)`, so a
    // plugin's error about an op names the user's source line.
    let flags = melior::ir::operation::OperationPrintingFlags::new().enable_debug_info(true, false);
    module
        .as_operation()
        .to_string_with_flags(flags)
        .map_err(emit::melior_error)
}
