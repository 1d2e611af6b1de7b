//! Collectives over the mesh axes of the enclosing `shard_map` (JAX's
//! `jax.lax.psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `psum_scatter`,
//! `all_to_all`, `ppermute`, `axis_index`). Each names mesh axes; the
//! devices that differ only along them form a group. Calling one outside
//! a `shard_map` body, or over an axis its mesh lacks, is an error.
//!
//! They are differentiable as JAX's: `psum`, `pmean`, `all_gather`,
//! `psum_scatter`, `all_to_all` and `ppermute` are linear (`psum`
//! transposes to `psum`, `all_gather` and `psum_scatter` to each other,
//! `all_to_all` to itself with the dimensions swapped, `ppermute` to the
//! inverse permutation); `pmax` and `pmin` pass the tangent of the devices
//! holding the extreme, averaged over ties; `axis_index` has none. Under
//! reverse mode a `shard_map` divides each result cotangent by the copies
//! its out spec leaves and sums each operand cotangent over the mesh axes
//! its in spec does not name, which is JAX's `shard_map` without
//! replication types (`check_vma=False`); the gradients equal JAX's.

use std::sync::Arc;

use oxla_core::{AxisGroup, Primitive, ReduceOp};

use super::shard_map::current_mesh;
use crate::array::Array;
use crate::error::{Error, Result};

/// The group of `axes` in the enclosing `shard_map`'s mesh.
#[track_caller]
fn group(what: &str, axes: &[&str]) -> Result<AxisGroup> {
    let location = super::mesh::here();
    let mesh = current_mesh().ok_or_else(|| Error::Sharding {
        message: format!(
            "{what} over {axes:?} outside shard_map: no mesh axes are in scope (call it inside \
             the function given to shard_map)"
        ),
        location: Some(location),
    })?;
    if axes.is_empty() {
        return Err(Error::Sharding {
            message: format!("{what} needs at least one mesh axis"),
            location: Some(location),
        });
    }
    for (i, axis) in axes.iter().enumerate() {
        if mesh.axis_size(axis).is_none() {
            let names: Vec<String> = mesh.axes.iter().map(|(n, _)| format!("'{n}'")).collect();
            return Err(Error::Sharding {
                message: format!(
                    "{what} over unknown mesh axis '{axis}'; the shard_map's mesh has axes {}",
                    names.join(", ")
                ),
                location: Some(location),
            });
        }
        if axes[..i].contains(axis) {
            return Err(Error::Sharding {
                message: format!("{what} names mesh axis '{axis}' twice"),
                location: Some(location),
            });
        }
    }
    Ok(AxisGroup {
        mesh,
        axes: axes.iter().map(|a| Arc::from(*a)).collect(),
    })
}

/// Binds a one-operand collective at the caller's line.
#[track_caller]
fn bind1(what: &str, axes: &[&str], x: &Array, make: impl FnOnce(AxisGroup) -> Primitive) -> Array {
    match group(what, axes) {
        Ok(g) => crate::ops::bind(make(g), &[x]),
        Err(e) => Array::error(e),
    }
}

/// The sum of `x` over the devices of each group of `axes`.
#[track_caller]
pub fn psum(x: &Array, axes: &[&str]) -> Array {
    bind1("psum", axes, x, |group| Primitive::AllReduce {
        op: ReduceOp::Sum,
        group,
    })
}

/// The mean of `x` over the devices of each group of `axes`.
#[track_caller]
pub fn pmean(x: &Array, axes: &[&str]) -> Array {
    match axis_size(axes) {
        Ok(n) => psum(x, axes) / n as f64,
        Err(e) => Array::error(e),
    }
}

/// The elementwise maximum of `x` over each group of `axes`.
#[track_caller]
pub fn pmax(x: &Array, axes: &[&str]) -> Array {
    bind1("pmax", axes, x, |group| Primitive::AllReduce {
        op: ReduceOp::Max,
        group,
    })
}

/// The elementwise minimum of `x` over each group of `axes`.
#[track_caller]
pub fn pmin(x: &Array, axes: &[&str]) -> Array {
    bind1("pmin", axes, x, |group| Primitive::AllReduce {
        op: ReduceOp::Min,
        group,
    })
}

/// Every device's `x`, stacked along a new dimension `dim` (or, `tiled`,
/// concatenated along `dim`), in the order of the devices' indices.
#[track_caller]
pub fn all_gather(x: &Array, axes: &[&str], dim: usize, tiled: bool) -> Array {
    bind1("all_gather", axes, x, |group| Primitive::AllGather {
        group,
        dim,
        tiled,
    })
}

/// The sum over the group, of which device `i` keeps block `i` along
/// `dim` (`tiled`), or element `i` of `dim` (which must have the group's
/// size and is removed).
#[track_caller]
pub fn psum_scatter(x: &Array, axes: &[&str], dim: usize, tiled: bool) -> Array {
    bind1("psum_scatter", axes, x, |group| Primitive::ReduceScatter {
        group,
        dim,
        tiled,
    })
}

/// Device `i` splits `split_dim` into one block per device of its group,
/// sends block `j` to device `j`, and concatenates what it gets along
/// `concat_dim`.
#[track_caller]
pub fn all_to_all(x: &Array, axes: &[&str], split_dim: usize, concat_dim: usize) -> Array {
    bind1("all_to_all", axes, x, |group| Primitive::AllToAll {
        group,
        split_dim,
        concat_dim,
    })
}

/// Device `src` (an index along `axes`) sends its `x` to device `dst`,
/// for each `(src, dst)` of `perm`; a device nobody sends to gets zeros.
#[track_caller]
pub fn ppermute(x: &Array, axes: &[&str], perm: &[(usize, usize)]) -> Array {
    bind1("ppermute", axes, x, |group| Primitive::Ppermute {
        group,
        perm: perm.to_vec(),
    })
}

/// This device's index along `axes` (int32; row-major over several).
#[track_caller]
pub fn axis_index(axes: &[&str]) -> Array {
    match group("axis_index", axes) {
        Ok(group) => crate::ops::bind(Primitive::AxisIndex { group }, &[]),
        Err(e) => Array::error(e),
    }
}

/// The number of devices in a group of `axes`.
#[track_caller]
pub fn axis_size(axes: &[&str]) -> Result<usize> {
    Ok(group("axis_size", axes)?.size())
}
