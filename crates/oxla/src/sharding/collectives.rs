//! Collectives over named axes (JAX's `jax.lax.psum`, `pmean`, `pmax`,
//! `pmin`, `all_gather`, `psum_scatter`, `all_to_all`, `ppermute`,
//! `axis_index`). A name is a mesh axis of an enclosing `shard_map` (the
//! devices that differ only along the named axes form a group) or the
//! `axis_name` of an enclosing [`vmap`](crate::vmap) (the examples of the
//! batch form the group, and the collective is computed along the batch
//! dimension, as JAX's batching rules do). The innermost binding of a name
//! wins. `psum`, `pmean`, `pmax`, `pmin` and `axis_index` take any mix of
//! mesh and vmap axes; the others take the axes of one mesh or one vmap
//! axis. A name nothing binds is an error.
//!
//! They are differentiable as JAX's: `psum`, `pmean`, `all_gather`,
//! `psum_scatter`, `all_to_all` and `ppermute` are linear (`all_gather`
//! and `psum_scatter` transpose to each other, `all_to_all` to itself with
//! the dimensions swapped, `ppermute` to the inverse permutation); `pmax`
//! and `pmin` pass the tangent of the devices holding the extreme,
//! averaged over ties (JAX raises `NotImplementedError` for them: a
//! deliberate difference); `axis_index` has none.
//!
//! Inside a `shard_map` that checks varying axes (JAX's default
//! `check_vma=True`), values know the mesh axes they vary over: `psum` of a
//! varying value is replicated and transposes to [`pvary`] (each device
//! gets the cotangent), `pvary` transposes to `psum`, and ops mixing
//! replicated and varying values insert `pvary` first, so the gradient of
//! a replicated value is summed over the devices, as JAX's is. A
//! collective given a value replicated along its axes makes it vary first.
//! With `check_vma(false)` (and in `pmap`), `psum` transposes to `psum`
//! and the `shard_map` divides each result cotangent by the copies its out
//! spec leaves and sums each operand cotangent over the mesh axes its in
//! spec does not name, as JAX's `check_vma=False`.

use std::sync::Arc;

use oxla_core::{AxisGroup, Location, Primitive, ReduceOp};

use super::axis_env::{self, ResolvedAxis};
use crate::array::Array;
use crate::error::{Error, Result};

/// The groups of `axes`, in order: each run of consecutive axes of one
/// `shard_map` mesh is one group, each vmap axis is a group of its own.
fn groups(what: &str, axes: &[&str], location: Location) -> Result<Vec<AxisGroup>> {
    let fail = |message: String| Error::Sharding {
        message,
        location: Some(location),
    };
    if axes.is_empty() {
        return Err(fail(format!("{what} needs at least one axis name")));
    }
    let mut out: Vec<AxisGroup> = Vec::new();
    for (i, axis) in axes.iter().enumerate() {
        if axes[..i].contains(axis) {
            return Err(fail(format!("{what} names axis '{axis}' twice")));
        }
        match axis_env::resolve(axis) {
            None => {
                let in_scope = axis_env::names_in_scope();
                return Err(fail(if in_scope.is_empty() {
                    format!(
                        "{what} over {axes:?} outside shard_map and vmap: no axis names are in \
                         scope (call it inside the function given to shard_map, or to a vmap \
                         with an axis_name)"
                    )
                } else {
                    format!(
                        "{what} over unknown axis name '{axis}'; the axes in scope are {}",
                        in_scope.join(", ")
                    )
                }));
            }
            Some(ResolvedAxis::Vmap(group)) => out.push(group),
            Some(ResolvedAxis::Mesh(mesh)) => match out.last_mut() {
                Some(last) if last.vmap_axis().is_none() && last.mesh == mesh => {
                    let mut names = last.axes.to_vec();
                    names.push(Arc::from(*axis));
                    last.axes = names.into();
                }
                Some(_) | None => out.push(AxisGroup {
                    mesh,
                    axes: vec![Arc::from(*axis)].into(),
                    scope: oxla_core::AxisScope::Devices,
                }),
            },
        }
    }
    Ok(out)
}

/// The one group of `axes`, for the collectives that do not split over
/// several (axes of one mesh, or one vmap axis).
fn one_group(what: &str, axes: &[&str], location: Location) -> Result<AxisGroup> {
    let mut all = groups(what, axes, location)?;
    if all.len() > 1 {
        return Err(Error::Sharding {
            message: format!(
                "{what} over {axes:?} mixes vmap axes with other axes; give it the axes of one \
                 shard_map mesh, or one vmap axis"
            ),
            location: Some(location),
        });
    }
    Ok(all.remove(0))
}

/// Binds `primitive` on `x` at `location`.
fn bind_at(primitive: Primitive, x: &Array, location: Location) -> Array {
    match crate::ops::bind_at(primitive, &[x], location) {
        Ok(mut outs) => outs.swap_remove(0),
        Err(e) => Array::error(e),
    }
}

/// `x` made to vary over every axis of `group`, inside a `shard_map` that
/// checks varying axes (JAX's automatic `pvary` before a collective); `x`
/// itself elsewhere, or when it already does.
fn varying_over(x: &Array, group: &AxisGroup, location: Location) -> Array {
    if group.vmap_axis().is_some() || super::axis_env::varying_mesh().is_none() {
        return x.clone();
    }
    let vma = match x.aval() {
        Ok(aval) => aval.vma.clone(),
        Err(e) => return Array::error(e),
    };
    let missing: Vec<Arc<str>> = group
        .axes
        .iter()
        .filter(|a| !vma.contains(a))
        .cloned()
        .collect();
    if missing.is_empty() {
        return x.clone();
    }
    let group = AxisGroup {
        axes: missing.into(),
        ..group.clone()
    };
    bind_at(Primitive::Pvary { group }, x, location)
}

/// An elementwise reduction over every group of `axes`, one after another.
fn all_reduce(what: &str, op: ReduceOp, x: &Array, axes: &[&str], location: Location) -> Array {
    match groups(what, axes, location) {
        Ok(groups) => groups.into_iter().fold(x.clone(), |acc, group| {
            let acc = varying_over(&acc, &group, location);
            bind_at(Primitive::AllReduce { op, group }, &acc, location)
        }),
        Err(e) => Array::error(e),
    }
}

/// `x` typed as varying over the mesh axes `axes` (JAX's
/// `lax.pcast(x, axes, to='varying')`, formerly `pvary`): the
/// same values, whose cotangent reverse mode sums over those axes. Inside
/// a `shard_map` body that checks varying axes (elsewhere it is `x`); ops
/// mixing values of different varying axes insert it themselves, but a
/// loop carry that starts replicated and becomes varying needs it.
#[track_caller]
pub fn pvary(x: &Array, axes: &[&str]) -> Array {
    let location = super::mesh::here();
    match one_group("pvary", axes, location) {
        // Without varying axes (a vmap's axis, `check_vma(false)`), as in
        // JAX, it does nothing.
        Ok(group) if group.vmap_axis().is_some() || super::axis_env::varying_mesh().is_none() => {
            x.clone()
        }
        Ok(group) => bind_at(Primitive::Pvary { group }, x, location),
        Err(e) => Array::error(e),
    }
}

/// Binds a collective of one group at `location`.
fn bind1(
    what: &str,
    axes: &[&str],
    x: &Array,
    location: Location,
    make: impl FnOnce(AxisGroup) -> Primitive,
) -> Array {
    match one_group(what, axes, location) {
        Ok(g) => {
            let x = varying_over(x, &g, location);
            bind_at(make(g), &x, location)
        }
        Err(e) => Array::error(e),
    }
}

/// The sum of `x` over the devices of each group of `axes`.
#[track_caller]
pub fn psum(x: &Array, axes: &[&str]) -> Array {
    all_reduce("psum", ReduceOp::Sum, x, axes, super::mesh::here())
}

/// The mean of `x` over the devices of each group of `axes`.
#[track_caller]
pub fn pmean(x: &Array, axes: &[&str]) -> Array {
    let location = super::mesh::here();
    match groups("pmean", axes, location) {
        Ok(groups) => {
            let n: usize = groups.iter().map(AxisGroup::size).product();
            all_reduce("pmean", ReduceOp::Sum, x, axes, location) / n as f64
        }
        Err(e) => Array::error(e),
    }
}

/// The elementwise maximum of `x` over each group of `axes`.
#[track_caller]
pub fn pmax(x: &Array, axes: &[&str]) -> Array {
    all_reduce("pmax", ReduceOp::Max, x, axes, super::mesh::here())
}

/// The elementwise minimum of `x` over each group of `axes`.
#[track_caller]
pub fn pmin(x: &Array, axes: &[&str]) -> Array {
    all_reduce("pmin", ReduceOp::Min, x, axes, super::mesh::here())
}

/// Every device's `x`, stacked along a new dimension `dim` (or, `tiled`,
/// concatenated along `dim`), in the order of the devices' indices.
#[track_caller]
pub fn all_gather(x: &Array, axes: &[&str], dim: usize, tiled: bool) -> Array {
    bind1("all_gather", axes, x, super::mesh::here(), |group| {
        Primitive::AllGather { group, dim, tiled }
    })
}

/// The sum over the group, of which device `i` keeps block `i` along
/// `dim` (`tiled`), or element `i` of `dim` (which must have the group's
/// size and is removed).
#[track_caller]
pub fn psum_scatter(x: &Array, axes: &[&str], dim: usize, tiled: bool) -> Array {
    bind1("psum_scatter", axes, x, super::mesh::here(), |group| {
        Primitive::ReduceScatter { group, dim, tiled }
    })
}

/// Device `i` splits `split_dim` into one block per device of its group,
/// sends block `j` to device `j`, and concatenates what it gets along
/// `concat_dim`.
#[track_caller]
pub fn all_to_all(x: &Array, axes: &[&str], split_dim: usize, concat_dim: usize) -> Array {
    bind1("all_to_all", axes, x, super::mesh::here(), |group| {
        Primitive::AllToAll {
            group,
            split_dim,
            concat_dim,
        }
    })
}

/// Device `src` (an index along `axes`) sends its `x` to device `dst`,
/// for each `(src, dst)` of `perm`; a device nobody sends to gets zeros.
/// Over several mesh axes the index is row-major in mesh order, whatever
/// order `axes` names them in, as JAX numbers them (unlike
/// [`axis_index`], which follows the order given, as JAX's does).
#[track_caller]
pub fn ppermute(x: &Array, axes: &[&str], perm: &[(usize, usize)]) -> Array {
    bind1("ppermute", axes, x, super::mesh::here(), |group| {
        Primitive::Ppermute {
            group,
            perm: perm.to_vec(),
        }
    })
}

/// This device's (or, over a vmap axis, this example's) index along
/// `axes` (int32; row-major over several).
#[track_caller]
pub fn axis_index(axes: &[&str]) -> Array {
    let location = super::mesh::here();
    let index =
        |group: AxisGroup| match crate::ops::bind_at(Primitive::AxisIndex { group }, &[], location)
        {
            Ok(mut outs) => outs.swap_remove(0),
            Err(e) => Array::error(e),
        };
    match groups("axis_index", axes, location) {
        Ok(groups) => {
            let mut out: Option<Array> = None;
            for group in groups {
                let n = group.size() as i32;
                let minor = index(group);
                out = Some(match out {
                    None => minor,
                    Some(major) => &(&major * n) + &minor,
                });
            }
            out.unwrap_or_else(|| {
                Array::error(Error::Sharding {
                    message: "axis_index needs at least one axis name".into(),
                    location: Some(location),
                })
            })
        }
        Err(e) => Array::error(e),
    }
}

/// The number of devices (or vmap examples) in a group of `axes`.
#[track_caller]
pub fn axis_size(axes: &[&str]) -> Result<usize> {
    let groups = groups("axis_size", axes, super::mesh::here())?;
    Ok(groups.iter().map(AxisGroup::size).product())
}
