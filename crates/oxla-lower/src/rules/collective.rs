//! The lowering rules of the collective family (`oxla_core::primitive::collective`)
//! to StableHLO.
//!
//! `shard_map` and the collectives inside it, lowered as JAX lowers them:
//! an `sdy.manual_computation` over every mesh axis, and StableHLO
//! collectives whose replica groups are mesh positions (partition ids, with
//! `use_global_device_ids`) and whose channel handle marks them as
//! cross-partition.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values, first_result};
use crate::emit::{Emitter, LowerError};
use melior::ir::{Location, Value};
use oxla_core::primitive::collective::Op;
use oxla_core::{Aval, AxisGroup, DType, Jaxpr, ReduceOp, Scalar, ShardingDesc};

/// The StableHLO of a primitive of this family.
pub(crate) fn lower<'c, 'a>(
    op: &Op,
    e: &mut Emitter<'c, 'a>,
    input: &LowerArgs<'_, 'c, 'a>,
) -> Result<Values<'c, 'a>, LowerError> {
    let LowerArgs {
        inputs,
        in_avals,
        out_avals,
        loc,
        ..
    } = *input;
    let out = &*first_result(out_avals);
    match op {
        // A type change only: the value is the operand.
        Op::Pvary { .. } => Ok(vec![inputs[0]]),
        Op::AllReduce { op, group } => all_reduce(e, *op, group, inputs[0], out, loc),
        Op::AllGather {
            group, dim, tiled, ..
        } => all_gather(e, group, (*dim, *tiled), inputs[0], in_avals[0], out, loc),
        Op::ReduceScatter { group, dim, tiled } => {
            reduce_scatter(e, group, (*dim, *tiled), inputs[0], in_avals[0], out, loc)
        }
        Op::AllToAll {
            group,
            split_dim,
            concat_dim,
        } => all_to_all(e, group, (*split_dim, *concat_dim), inputs[0], out, loc),
        Op::Ppermute { group, perm } => ppermute(e, group, perm, inputs[0], out, loc),
        Op::AxisIndex { group } => axis_index(e, group, out, loc),
    }
}

/// `dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>`.
fn i64_matrix(rows: &[Vec<i64>]) -> String {
    let width = rows.first().map_or(0, Vec::len);
    let text: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "[{}]",
                r.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    format!(
        "dense<[{}]> : tensor<{}x{}xi64>",
        text.join(", "),
        rows.len(),
        width
    )
}

/// `group`, if its axes are a mesh's: a collective over a `vmap` axis is
/// computed by that `vmap`'s batching rule, so one here was taken out of
/// its `vmap` (a jaxpr traced inside it and lowered outside).
fn device_group(group: &AxisGroup) -> Result<&AxisGroup, LowerError> {
    match group.vmap_axis() {
        None => Ok(group),
        Some(name) => Err(LowerError::Mlir(format!(
            "a collective over the vmap axis '{name}' outside that vmap: the axis name is not \
             bound here"
        ))),
    }
}

/// The attributes every cross-partition collective of `group` carries.
fn group_attributes(group: &AxisGroup) -> Result<Vec<(&'static str, String)>, LowerError> {
    let group = device_group(group)?;
    Ok(vec![
        (
            "channel_handle",
            "#stablehlo.channel_handle<handle = 1, type = 1>".to_string(),
        ),
        ("replica_groups", i64_matrix(&group.groups())),
        ("use_global_device_ids", "unit".to_string()),
    ])
}

fn combiner(op: ReduceOp) -> Result<&'static str, LowerError> {
    match op {
        ReduceOp::Sum => Ok("stablehlo.add"),
        ReduceOp::Max => Ok("stablehlo.maximum"),
        ReduceOp::Min => Ok("stablehlo.minimum"),
        ReduceOp::Prod | ReduceOp::And | ReduceOp::Or => Err(LowerError::Mlir(format!(
            "{op:?} is not a collective reduction"
        ))),
    }
}

/// `psum` / `pmax` / `pmin`.
pub(crate) fn all_reduce<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    op: ReduceOp,
    group: &AxisGroup,
    x: Value<'c, 'a>,
    out: &Aval,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let scalar = Aval::new(out.dtype, &[]);
    let body = e.binary_region(combiner(op)?, &scalar, loc)?;
    e.op_with_regions(
        "stablehlo.all_reduce",
        &[x],
        &[out],
        &group_attributes(group)?,
        vec![body],
        loc,
    )
}

/// `all_gather` (stacked: the operand gets a dimension of 1 at `dim` first).
pub(crate) fn all_gather<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    group: &AxisGroup,
    (dim, tiled): (usize, bool),
    x: Value<'c, 'a>,
    x_aval: &Aval,
    out: &Aval,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let operand = if tiled {
        x
    } else {
        let mut shape = x_aval.shape.to_vec();
        shape.insert(dim, 1);
        e.op(
            "stablehlo.reshape",
            &[x],
            &[&x_aval.with_shape(&shape)],
            &[],
            loc,
        )?[0]
    };
    let mut attributes = group_attributes(group)?;
    attributes.push(("all_gather_dim", format!("{dim} : i64")));
    e.op("stablehlo.all_gather", &[operand], &[out], &attributes, loc)
}

/// `psum_scatter` (untiled: the scattered dimension of 1 is then removed).
pub(crate) fn reduce_scatter<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    group: &AxisGroup,
    (dim, tiled): (usize, bool),
    x: Value<'c, 'a>,
    x_aval: &Aval,
    out: &Aval,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let scalar = Aval::new(out.dtype, &[]);
    let body = e.binary_region("stablehlo.add", &scalar, loc)?;
    let mut block = x_aval.shape.to_vec();
    block[dim] /= group.size() as i64;
    let block = x_aval.with_shape(&block);
    let mut attributes = group_attributes(group)?;
    attributes.push(("scatter_dimension", format!("{dim} : i64")));
    let scattered = e.op_with_regions(
        "stablehlo.reduce_scatter",
        &[x],
        &[&block],
        &attributes,
        vec![body],
        loc,
    )?;
    if tiled {
        Ok(scattered)
    } else {
        e.op("stablehlo.reshape", &scattered, &[out], &[], loc)
    }
}

/// `all_to_all`.
pub(crate) fn all_to_all<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    group: &AxisGroup,
    (split_dim, concat_dim): (usize, usize),
    x: Value<'c, 'a>,
    out: &Aval,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let mut attributes = group_attributes(group)?;
    attributes.retain(|(name, _)| *name != "use_global_device_ids");
    attributes.push(("split_dimension", format!("{split_dim} : i64")));
    attributes.push(("concat_dimension", format!("{concat_dim} : i64")));
    attributes.push(("split_count", format!("{} : i64", group.size())));
    e.op("stablehlo.all_to_all", &[x], &[out], &attributes, loc)
}

/// `ppermute`: the pairs of every group, as partition ids.
pub(crate) fn ppermute<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    group: &AxisGroup,
    perm: &[(usize, usize)],
    x: Value<'c, 'a>,
    out: &Aval,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    // JAX numbers a ppermute's devices by mesh position, whatever order
    // the axes are named in (axis_index, by contrast, follows the names).
    let group = device_group(group)?;
    let mut in_mesh_order = group.clone();
    let mut axes = group.axes.to_vec();
    axes.sort_by_key(|a| group.mesh.axes.iter().position(|(n, _)| n == a));
    in_mesh_order.axes = axes.into();
    let pairs: Vec<Vec<i64>> = in_mesh_order
        .groups()
        .iter()
        .flat_map(|members| perm.iter().map(move |&(s, d)| vec![members[s], members[d]]))
        .collect();
    let pairs_attribute = if pairs.is_empty() {
        "dense<> : tensor<0x2xi64>".to_string()
    } else {
        i64_matrix(&pairs)
    };
    e.op(
        "stablehlo.collective_permute",
        &[x],
        &[out],
        &[
            (
                "channel_handle",
                "#stablehlo.channel_handle<handle = 1, type = 1>".to_string(),
            ),
            ("source_target_pairs", pairs_attribute),
        ],
        loc,
    )
}

/// `axis_index`: from the partition id, each axis's coordinate
/// (`pid / stride % size`), combined major first.
pub(crate) fn axis_index<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    group: &AxisGroup,
    out: &Aval,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let group = device_group(group)?;
    let u32_scalar = Aval::new(DType::U32, &[]);
    let pid = e.op("stablehlo.partition_id", &[], &[&u32_scalar], &[], loc)?[0];
    let mut index: Option<Value<'c, 'a>> = None;
    for axis in group.axis_indices() {
        let size = group.mesh.axes[axis].1 as i64;
        let stride = e.constant(&u32_scalar, Scalar::Int(group.stride(axis) as i64), loc)?;
        let modulus = e.constant(&u32_scalar, Scalar::Int(size), loc)?;
        let shifted = e.op("stablehlo.divide", &[pid, stride], &[&u32_scalar], &[], loc)?[0];
        let coordinate = e.op(
            "stablehlo.remainder",
            &[shifted, modulus],
            &[&u32_scalar],
            &[],
            loc,
        )?[0];
        index = Some(match index {
            None => coordinate,
            Some(major) => {
                let scale = e.constant(&u32_scalar, Scalar::Int(size), loc)?;
                let scaled = e.op(
                    "stablehlo.multiply",
                    &[major, scale],
                    &[&u32_scalar],
                    &[],
                    loc,
                )?[0];
                e.op(
                    "stablehlo.add",
                    &[scaled, coordinate],
                    &[&u32_scalar],
                    &[],
                    loc,
                )?[0]
            }
        });
    }
    let index = match index {
        Some(i) => i,
        None => e.constant(&u32_scalar, Scalar::Int(0), loc)?,
    };
    e.op("stablehlo.convert", &[index], &[out], &[], loc)
}

/// `#sdy.sharding_per_value<[<@mesh, [...]>, ...]>` of values of `avals`.
fn per_value(
    e: &Emitter<'_, '_>,
    shardings: &[ShardingDesc],
    avals: &[&Aval],
) -> Result<String, LowerError> {
    let items: Vec<String> = shardings
        .iter()
        .zip(avals)
        .map(|(s, a)| Ok(s.sdy_body(&e.mesh_symbol(&s.mesh)?, a.shape.len())))
        .collect::<Result<_, LowerError>>()?;
    Ok(format!("#sdy.sharding_per_value<[{}]>", items.join(", ")))
}

/// `shard_map`: an `sdy.manual_computation` over every mesh axis whose
/// body is `body` on the blocks.
#[allow(clippy::too_many_arguments)]
pub(crate) fn shard_map<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    body: &Jaxpr,
    (in_shardings, out_shardings): (&[ShardingDesc], &[ShardingDesc]),
    inputs: &[Value<'c, 'a>],
    in_avals: &[&Aval],
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let mesh = in_shardings
        .first()
        .or(out_shardings.first())
        .map(|s| s.mesh.clone())
        .ok_or_else(|| LowerError::Sharding("a shard_map with no operands or results".into()))?;
    let manual: Vec<String> = mesh.axes.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    let block_avals: Vec<&Aval> = body.invars.iter().map(|v| body.aval(*v)).collect();
    let shardings = (
        per_value(e, in_shardings, in_avals)?,
        per_value(e, out_shardings, out_avals)?,
    );
    let region = e.region_returning(&block_avals, "sdy.return", loc, |inner, args| {
        crate::body::lower_body(inner, body, args)
    })?;
    e.op_with_regions(
        "sdy.manual_computation",
        inputs,
        out_avals,
        &[
            ("in_shardings", shardings.0),
            ("out_shardings", shardings.1),
            (
                "manual_axes",
                format!("#sdy<manual_axes{{{}}}>", manual.join(", ")),
            ),
        ],
        vec![region],
        loc,
    )
}
