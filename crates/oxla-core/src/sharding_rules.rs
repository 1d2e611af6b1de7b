//! Explicit sharding in types (JAX's sharding rules): on a mesh with
//! [`Explicit`](crate::sharding::AxisType::Explicit) axes, every value's
//! type says how it is split over them (`f32[8@x,4]`), and each primitive's
//! rule gives its results' split from its operands' or says why that split
//! would be ambiguous or illegal. Each family's rule is `output_shardings`
//! in `primitive/<family>.rs`; this module holds the dispatcher and the
//! pieces several families share.

use std::sync::Arc;

use crate::aval::Aval;
use crate::primitive::{
    Primitive, collective, contract, elementwise, fft, index, linalg, marker, reduce, rng, shape,
    sharding,
};
use crate::shape_rules::{RuleResult, ShapeError};
use crate::sharding::{DimAxes, MeshDesc, ShardingDesc};

/// The split of each dimension of one value: the explicit mesh axes per
/// dimension (empty: not split).
pub type Spec = Vec<DimAxes>;

/// Sets the explicit sharding of each of `outs`, the results of
/// `primitive` on `inputs` (whose types the shape rule gave), by the
/// primitive's sharding rule.
pub(crate) fn apply(primitive: &Primitive, inputs: &[&Aval], outs: &mut [Aval]) -> RuleResult<()> {
    let mesh = common_mesh(inputs)?;
    match primitive {
        // A called body's types are its results' (the shape rule returned
        // them, and checked that branches and loop bodies agree, splits
        // included, and that a scan's xs are unsplit along the axis it
        // slices); an exported function's and a callback's results are
        // typed as they declare.
        Primitive::Call(_) | Primitive::Host(_) | Primitive::Control(_) => return Ok(()),
        Primitive::Sharding(op) => return sharding::output_shardings(op, outs),
        Primitive::Elementwise(_)
        | Primitive::Shape(_)
        | Primitive::Index(_)
        | Primitive::Reduce(_)
        | Primitive::Contract(_)
        | Primitive::Collective(_)
        | Primitive::Marker(_)
        | Primitive::Fft(_)
        | Primitive::Linalg(_)
        | Primitive::Rng(_) => {}
    }
    let Some(mesh) = mesh else {
        return Ok(());
    };
    let specs = match primitive {
        Primitive::Elementwise(op) => elementwise::output_shardings(op, inputs, outs)?,
        Primitive::Shape(op) => shape::output_shardings(op, inputs, outs)?,
        Primitive::Index(op) => index::output_shardings(op, inputs, outs)?,
        Primitive::Reduce(op) => reduce::output_shardings(op, inputs, outs)?,
        Primitive::Contract(op) => contract::output_shardings(op, inputs, outs)?,
        Primitive::Collective(op) => collective::output_shardings(op, inputs)?,
        Primitive::Marker(op) => marker::output_shardings(op, inputs)?,
        Primitive::Fft(op) => fft::output_shardings(op, inputs)?,
        Primitive::Linalg(op) => linalg::output_shardings(op, inputs)?,
        Primitive::Rng(op) => rng::output_shardings(op, inputs)?,
        Primitive::Call(_)
        | Primitive::Host(_)
        | Primitive::Control(_)
        | Primitive::Sharding(_) => return Ok(()),
    };
    set_types(&mesh, specs, inputs, outs)
}

/// Gives each result its spec on `mesh`, after checking that no mesh axis
/// splits two of its dimensions.
fn set_types(
    mesh: &MeshDesc,
    specs: Vec<Spec>,
    inputs: &[&Aval],
    outs: &mut [Aval],
) -> RuleResult<()> {
    for (out, spec) in outs.iter_mut().zip(specs) {
        let typed = out.with_sharding(Some(ShardingDesc::new(mesh.clone(), spec.into())));
        let dims = typed.dim_axes();
        let mut seen: Vec<&Arc<str>> = Vec::new();
        for axis in dims.iter().flat_map(|axes| axes.iter()) {
            if seen.contains(&axis) {
                return Err(ShapeError::Invalid(format!(
                    "the operands {} give an illegally split result {typed}: mesh axis '{axis}' \
                     would split two of its dimensions; reshard an operand first",
                    types_text(inputs)
                )));
            }
            seen.push(axis);
        }
        *out = typed;
    }
    Ok(())
}

/// The mesh of the operands with explicit shardings, which must be one.
fn common_mesh(inputs: &[&Aval]) -> RuleResult<Option<MeshDesc>> {
    let mut mesh: Option<&MeshDesc> = None;
    for sharding in inputs.iter().filter_map(|a| a.sharding.as_ref()) {
        match mesh {
            Some(first) if *first != sharding.mesh => {
                return Err(ShapeError::Invalid(format!(
                    "operands are on two meshes, {first} and {}; reshard them onto one",
                    sharding.mesh
                )));
            }
            Some(_) => {}
            None => mesh = Some(&sharding.mesh),
        }
    }
    Ok(mesh.cloned())
}

/// `f32[8@x,4], f32[4@y]`.
pub(crate) fn types_text(inputs: &[&Aval]) -> String {
    inputs
        .iter()
        .map(|a| a.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A spec as JAX prints one in its sharding errors: `('x', None)`.
pub(crate) fn spec_tuple(spec: &[DimAxes]) -> String {
    let entries: Vec<String> = spec
        .iter()
        .map(|axes| crate::sharding::entry_text(axes.iter().map(|a| &**a)))
        .collect();
    match entries.len() {
        1 => format!("({},)", entries[0]),
        _ => format!("({})", entries.join(", ")),
    }
}

/// No split of any dimension, for a value of rank `rank`.
pub(crate) fn unsplit(rank: usize) -> Spec {
    vec![Arc::from([]); rank]
}

/// The result spec of an elementwise op with NumPy broadcasting: each
/// result dimension takes the split of the operands' matching dimensions
/// (aligned from the right; broadcast size-1 dimensions count for
/// nothing), which must agree where more than one is split.
pub(crate) fn broadcast_spec(inputs: &[&Aval], out: &Aval) -> RuleResult<Spec> {
    let rank = out.rank();
    let mut spec = unsplit(rank);
    for input in inputs {
        let offset = rank.saturating_sub(input.rank());
        for (d, axes) in input.dim_axes().into_iter().enumerate() {
            let o = offset + d;
            let broadcast = input.shape[d] == 1 && out.shape.get(o) != Some(&1);
            if !broadcast && !merge_dim(&mut spec[o], axes) {
                return Err(disagreement("broadcasting", inputs));
            }
        }
    }
    Ok(spec)
}

/// The spec the operands of equal rank agree on (a concatenation's): per
/// dimension, the split of those operands that split it, which must be
/// one.
pub(crate) fn agreed_spec(inputs: &[&Aval]) -> RuleResult<Spec> {
    let mut spec = unsplit(inputs.first().map_or(0, |a| a.rank()));
    for input in inputs {
        for (entry, axes) in spec.iter_mut().zip(input.dim_axes()) {
            if !merge_dim(entry, axes) {
                return Err(disagreement("joining", inputs));
            }
        }
    }
    Ok(spec)
}

/// Merges one operand's split of a dimension into the result's; false
/// when both are split, differently.
fn merge_dim(entry: &mut DimAxes, axes: DimAxes) -> bool {
    if axes.is_empty() || *entry == axes {
        return true;
    }
    if entry.is_empty() {
        *entry = axes;
        return true;
    }
    false
}

/// The error for operands split differently along one dimension.
fn disagreement(what: &str, inputs: &[&Aval]) -> ShapeError {
    let specs: Vec<String> = inputs
        .iter()
        .filter(|a| a.rank() > 0)
        .map(|a| spec_tuple(&a.dim_axes()))
        .collect();
    ShapeError::Invalid(format!(
        "incompatible shardings for {what}: {}; reshard an operand first",
        specs.join(", ")
    ))
}

/// An error unless dimension `dim` of `aval` is unsplit; `why` says what
/// the primitive does along it.
pub(crate) fn require_unsplit(aval: &Aval, dim: usize, why: &str) -> RuleResult<()> {
    match aval.dim_axes().get(dim) {
        Some(axes) if !axes.is_empty() => Err(ShapeError::Invalid(format!(
            "dimension {dim} of {aval} is split over mesh axes, but {why}, so it must not be; \
             reshard it first (or run the op under auto_axes)"
        ))),
        _ => Ok(()),
    }
}

/// The spec of `aval` without dimensions `removed`.
pub(crate) fn without_dims(aval: &Aval, removed: &[i64]) -> Spec {
    aval.dim_axes()
        .into_iter()
        .enumerate()
        .filter(|(d, _)| !removed.contains(&(*d as i64)))
        .map(|(_, axes)| axes)
        .collect()
}

/// How a reshape from `from` to `to` carries the operand's split: the
/// dimensions (size 1 aside) fall into runs of equal product; a run of
/// one dimension on both sides keeps its split, merged dimensions keep the
/// split of the major one when only it is split, and a split dimension cut
/// into several gives its split to the major piece when that divides it.
/// Anything else is ambiguous.
pub(crate) fn reshape_spec(operand: &Aval, to: &[i64]) -> RuleResult<Spec> {
    let axes = operand.dim_axes();
    let from: Vec<usize> = (0..operand.rank())
        .filter(|&d| operand.shape[d] != 1)
        .collect();
    let into: Vec<usize> = (0..to.len()).filter(|&d| to[d] != 1).collect();
    let mut spec = unsplit(to.len());
    let ambiguous = || {
        ShapeError::Invalid(format!(
            "the split of {operand} does not carry over to shape ({}); reshard the operand first \
             (or reshape under auto_axes)",
            to.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        ))
    };
    let (mut i, mut k) = (0, 0);
    while i < from.len() && k < into.len() {
        let (start_i, start_k) = (i, k);
        let (mut a, mut b) = (operand.shape[from[i]], to[into[k]]);
        while a != b {
            if a < b {
                i += 1;
                a *= operand.shape[*from.get(i).ok_or_else(ambiguous)?];
            } else {
                k += 1;
                b *= to[*into.get(k).ok_or_else(ambiguous)?];
            }
        }
        let run_in = &from[start_i..=i];
        let run_out = &into[start_k..=k];
        let major = &axes[run_in[0]];
        let minor_split = run_in[1..].iter().any(|&d| !axes[d].is_empty());
        match (run_in.len(), run_out.len()) {
            _ if major.is_empty() && !minor_split => {}
            (_, 1) if !minor_split => spec[run_out[0]] = major.clone(),
            (1, _) => {
                let tiles: usize = major
                    .iter()
                    .map(|a| {
                        operand
                            .sharding
                            .as_ref()
                            .and_then(|s| s.mesh.axis_size(a))
                            .unwrap_or(1)
                    })
                    .product();
                if to[run_out[0]] % tiles as i64 != 0 {
                    return Err(ambiguous());
                }
                spec[run_out[0]] = major.clone();
            }
            _ => return Err(ambiguous()),
        }
        i += 1;
        k += 1;
    }
    Ok(spec)
}
