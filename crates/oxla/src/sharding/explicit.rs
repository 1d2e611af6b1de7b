//! JAX's explicit sharding mode: on a mesh whose axes are
//! [`AxisType::Explicit`](oxla_core::AxisType::Explicit), an array's type
//! says how it is split over them (`f32[8@x,4]`, what [`Array::aval`]
//! shows, JAX's `jax.typeof`), every op's result is split as its sharding
//! rule says (or the op is rejected as ambiguous, naming the op, the types
//! and the caller's line), and the compiled program lays values out as
//! their types say. [`reshard`] moves a value to another split;
//! [`auto_axes`] runs a function with the partitioner choosing, and
//! [`explicit_axes`] the reverse; [`use_mesh`] and [`set_mesh`] name the
//! mesh a bare [`PartitionSpec`] refers to.

use std::cell::RefCell;
use std::sync::Arc;

use oxla_core::primitive::sharding;
use oxla_core::{AxisType, Location, MeshDesc, Primitive, ShardingDesc};

use super::mesh::{Mesh, here};
use super::named::NamedSharding;
use super::spec::PartitionSpec;
use crate::array::Array;
use crate::error::{Error, Result};

thread_local! {
    /// The meshes [`use_mesh`] entered, innermost last.
    static ENTERED: RefCell<Vec<Mesh>> = const { RefCell::new(Vec::new()) };
    /// The mesh [`set_mesh`] set.
    static DEFAULT: RefCell<Option<Mesh>> = const { RefCell::new(None) };
}

/// Makes `mesh` the current mesh of this thread until the guard drops
/// (JAX's `with jax.set_mesh(mesh):`): a bare [`PartitionSpec`] passed to
/// [`reshard`], [`auto_axes`] or a product's `out_sharding` refers to it.
pub fn use_mesh(mesh: &Mesh) -> MeshGuard {
    ENTERED.with(|m| m.borrow_mut().push(mesh.clone()));
    MeshGuard { _private: () }
}

/// The current mesh until dropped (see [`use_mesh`]).
#[must_use = "the mesh is current only while the guard lives"]
pub struct MeshGuard {
    _private: (),
}

impl Drop for MeshGuard {
    fn drop(&mut self) {
        ENTERED.with(|m| m.borrow_mut().pop());
    }
}

/// Sets (or, with `None`, clears) this thread's mesh outside any
/// [`use_mesh`] (JAX's `jax.set_mesh(mesh)` called as a function).
pub fn set_mesh(mesh: Option<&Mesh>) {
    DEFAULT.with(|d| *d.borrow_mut() = mesh.cloned());
}

/// The current mesh: the innermost [`use_mesh`], else the one
/// [`set_mesh`] set (JAX's `jax.sharding.get_mesh`).
pub fn current_mesh() -> Option<Mesh> {
    ENTERED
        .with(|m| m.borrow().last().cloned())
        .or_else(|| DEFAULT.with(|d| d.borrow().clone()))
}

/// Where a value's explicit sharding should go: a [`NamedSharding`], or a
/// [`PartitionSpec`] on the current mesh (or, without one, on the mesh of
/// the values it applies to).
pub trait ShardingTarget {
    /// The explicit sharding type this names, for values `operands`.
    fn explicit_type(&self, operands: &[&Array], location: Location) -> Result<ShardingDesc>;
}

impl ShardingTarget for NamedSharding {
    fn explicit_type(&self, _operands: &[&Array], location: Location) -> Result<ShardingDesc> {
        typed_on(self.mesh().desc(), self.spec(), location)
    }
}

impl ShardingTarget for PartitionSpec {
    fn explicit_type(&self, operands: &[&Array], location: Location) -> Result<ShardingDesc> {
        let mesh = match current_mesh() {
            Some(mesh) => mesh.desc().clone(),
            None => operands
                .iter()
                .find_map(|x| x.aval().ok().and_then(|a| a.sharding.clone()))
                .map(|s| s.mesh)
                .ok_or_else(|| Error::Sharding {
                    message: format!(
                        "{self} names no mesh: enter one with oxla::sharding::use_mesh, or pass a \
                         NamedSharding"
                    ),
                    location: Some(location),
                })?,
        };
        typed_on(&mesh, self, location)
    }
}

/// The explicit sharding type `spec` gives on `mesh`: every axis it names
/// must be an explicit axis of the mesh.
fn typed_on(mesh: &MeshDesc, spec: &PartitionSpec, location: Location) -> Result<ShardingDesc> {
    let fail = |message: String| Error::Sharding {
        message,
        location: Some(location),
    };
    let mut dims = Vec::new();
    for entry in spec.entries() {
        if entry.is_unconstrained() {
            return Err(fail(format!(
                "{spec} leaves a dimension unconstrained, which an explicit sharding type \
                 cannot; use with_sharding_constraint"
            )));
        }
        for axis in entry.names() {
            if mesh.axis_type(axis) != AxisType::Explicit {
                return Err(fail(format!(
                    "{spec} names mesh axis '{axis}', which is not an explicit axis of {mesh}"
                )));
            }
        }
        let axes: Arc<[Arc<str>]> = entry
            .names()
            .iter()
            .map(|a| Arc::from(a.as_str()))
            .collect();
        dims.push(axes);
    }
    Ok(ShardingDesc::new(mesh.clone(), dims.into()))
}

/// `x` split as `target` says (JAX's `jax.sharding.reshard`): its type
/// becomes `target`'s, and the program moves its blocks between devices
/// as that needs. `x` must be on a mesh with explicit axes; under
/// gradients the cotangent is resharded back to `x`'s split.
#[track_caller]
pub fn reshard(x: &Array, target: &impl ShardingTarget) -> Array {
    let location = here();
    match target.explicit_type(&[x], location) {
        Ok(sharding) => cast(x, Some(sharding), location),
        Err(e) => Array::error(e),
    }
}

/// Binds the `reshard` primitive to `sharding` (`None`: into auto axes).
pub(crate) fn cast(x: &Array, sharding: Option<ShardingDesc>, location: Location) -> Array {
    let primitive = Primitive::Sharding(sharding::Op::Reshard { sharding });
    match crate::ops::bind_at(primitive, &[x], location) {
        Ok(mut outs) => outs.swap_remove(0),
        Err(e) => Array::error(e),
    }
}

/// Runs `f` on `args` with the mesh's explicit axes handed to the
/// partitioner (JAX's `jax.sharding.auto_axes`): inside, the values carry
/// no explicit sharding and no sharding rule applies, and each result
/// leaves with the explicit sharding its `out_shardings` entry names (one
/// per result). For an op whose sharding rule rejects the operands' splits
/// when the user has no better split to give.
#[track_caller]
pub fn auto_axes<T: ShardingTarget>(
    args: &[Array],
    out_shardings: &[T],
    f: impl FnOnce(&[Array]) -> Vec<Array>,
) -> Result<Vec<Array>> {
    let location = here();
    let refs: Vec<&Array> = args.iter().collect();
    let targets = out_shardings
        .iter()
        .map(|t| t.explicit_type(&refs, location))
        .collect::<Result<Vec<_>>>()?;
    let inside: Vec<Array> = args.iter().map(|x| cast(x, None, location)).collect();
    let outs = f(&inside);
    finish(outs, targets.into_iter().map(Some).collect(), location)
}

/// Runs `f` on `args` split as `in_shardings` say, over explicit axes
/// (JAX's `jax.sharding.explicit_axes`, the reverse of [`auto_axes`]):
/// inside, sharding rules apply; the results leave without explicit
/// sharding, for the partitioner to lay out.
#[track_caller]
pub fn explicit_axes<T: ShardingTarget>(
    args: &[Array],
    in_shardings: &[T],
    f: impl FnOnce(&[Array]) -> Vec<Array>,
) -> Result<Vec<Array>> {
    let location = here();
    if args.len() != in_shardings.len() {
        return Err(Error::Sharding {
            message: format!(
                "explicit_axes got {} arguments and {} in_shardings",
                args.len(),
                in_shardings.len()
            ),
            location: Some(location),
        });
    }
    let inside = args
        .iter()
        .zip(in_shardings)
        .map(|(x, t)| Ok(cast(x, Some(t.explicit_type(&[x], location)?), location)))
        .collect::<Result<Vec<Array>>>()?;
    let outs = f(&inside);
    let untyped = vec![None; outs.len()];
    finish(outs, untyped, location)
}

/// Each result of `f` cast to its target type, after checking there is one
/// target per result and that no result carries an error.
fn finish(
    outs: Vec<Array>,
    targets: Vec<Option<ShardingDesc>>,
    location: Location,
) -> Result<Vec<Array>> {
    if outs.len() != targets.len() {
        return Err(Error::Sharding {
            message: format!(
                "the function returned {} results for {} out_shardings",
                outs.len(),
                targets.len()
            ),
            location: Some(location),
        });
    }
    outs.iter()
        .zip(targets)
        .map(|(x, target)| {
            let cast = cast(x, target, location);
            cast.check()?;
            Ok(cast)
        })
        .collect()
}
