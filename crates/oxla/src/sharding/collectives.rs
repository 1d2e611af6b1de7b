//! Collectives over named axes (JAX's `jax.lax.psum`, `pmean`, `pmax`,
//! `pmin`, `all_gather` and `all_gather_invariant`, `psum_scatter`,
//! `all_to_all`, `pswapaxes`, `ppermute`, `pshuffle`, `axis_index`), with
//! JAX's `axis_index_groups` through [`over`]`(axes).axis_index_groups(..)`. A name is a mesh axis of an enclosing `shard_map` (the
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

use oxla_core::primitive::{collective, shape};
use std::sync::Arc;

use oxla_core::{AxisGroup, Location, Primitive, ReduceOp};

use super::axis_env::{self, ResolvedAxis};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::lax::canonical_axis_of_rank;

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
                Some(_) | None => out.push(AxisGroup::devices(mesh, vec![Arc::from(*axis)].into())),
            },
        }
    }
    Ok(out)
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
    bind_at(
        Primitive::Collective(collective::Op::Pvary { group }),
        x,
        location,
    )
}

/// The named axes of a collective, with JAX's keyword options: the
/// builder behind the free functions of this module, for the options they
/// leave out.
///
/// ```no_run
/// # use oxla::{Array, sharding::collectives::over};
/// # fn body(x: Array) -> Array {
/// // Sums over devices 0 and 1, and over devices 2 and 3, of axis 'i'.
/// over(&["i"]).axis_index_groups(&[&[0, 1], &[2, 3]]).psum(&x)
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Over<'a> {
    axes: &'a [&'a str],
    index_groups: Option<Vec<Vec<usize>>>,
}

/// The collectives over the named axes `axes` (see [`Over`]).
pub fn over<'a>(axes: &'a [&'a str]) -> Over<'a> {
    Over {
        axes,
        index_groups: None,
    }
}

impl<'a> Over<'a> {
    /// JAX's `axis_index_groups`: run the collective within each of these
    /// groups of indices along the axes instead of over all of them. The
    /// groups must name each index once and have one size; devices are
    /// numbered in each group in the order listed. As in JAX, only outside
    /// a `shard_map` that checks varying axes (in `pmap`, or with
    /// `check_vma(false)`), and not over a vmap axis.
    pub fn axis_index_groups(mut self, groups: &[&[usize]]) -> Self {
        self.index_groups = Some(groups.iter().map(|g| g.to_vec()).collect());
        self
    }

    /// The groups of the axes, with the index groups on the one group
    /// they may split.
    fn resolve(&self, what: &str, location: Location) -> Result<Vec<AxisGroup>> {
        let mut all = groups(what, self.axes, location)?;
        let Some(index_groups) = &self.index_groups else {
            return Ok(all);
        };
        let fail = |message: String| Error::Sharding {
            message,
            location: Some(location),
        };
        if all.len() > 1 || all[0].vmap_axis().is_some() {
            return Err(fail(format!(
                "{what} with axis_index_groups over {:?}: index groups split the devices of one \
                 shard_map or pmap mesh, not vmap axes (JAX raises NotImplementedError)",
                self.axes
            )));
        }
        if axis_env::varying_mesh().is_some() {
            return Err(fail(format!(
                "{what} with axis_index_groups inside a shard_map that checks varying axes: as \
                 in JAX (NotImplementedError), use check_vma(false) or pmap"
            )));
        }
        let group = &mut all[0];
        let n = group.axes_size();
        let mut seen = vec![false; n];
        for index in index_groups.iter().flatten() {
            match seen.get_mut(*index) {
                Some(slot) if !*slot => *slot = true,
                _ => {
                    return Err(fail(format!(
                        "axis_index_groups {index_groups:?} must name each index of the {n} \
                         devices along {} exactly once",
                        group.names()
                    )));
                }
            }
        }
        if seen.contains(&false) {
            return Err(fail(format!(
                "axis_index_groups {index_groups:?} must cover all {n} indices along {}",
                group.names()
            )));
        }
        if index_groups
            .iter()
            .any(|g| g.len() != index_groups[0].len())
        {
            return Err(fail(format!(
                "axis_index_groups {index_groups:?} must all have one size"
            )));
        }
        group.index_groups = Some(
            index_groups
                .iter()
                .map(|g| Arc::from(g.as_slice()))
                .collect(),
        );
        Ok(all)
    }

    /// The one group of the axes, for the collectives that do not split
    /// over several.
    fn resolve_one(&self, what: &str, location: Location) -> Result<AxisGroup> {
        let mut all = self.resolve(what, location)?;
        if all.len() > 1 {
            return Err(Error::Sharding {
                message: format!(
                    "{what} over {:?} mixes vmap axes with other axes; give it the axes of one \
                     shard_map mesh, or one vmap axis",
                    self.axes
                ),
                location: Some(location),
            });
        }
        Ok(all.remove(0))
    }

    /// An elementwise reduction over every group, one after another.
    fn all_reduce(&self, what: &str, op: ReduceOp, x: &Array, location: Location) -> Array {
        match self.resolve(what, location) {
            Ok(groups) => reduce_over(groups, op, x, location),
            Err(e) => Array::error(e),
        }
    }

    /// Binds a collective of one group, made by `make` from the group and
    /// `x` (made to vary over it first).
    fn bind_one(
        &self,
        what: &str,
        x: &Array,
        location: Location,
        make: impl FnOnce(AxisGroup, &Array) -> Result<Primitive>,
    ) -> Array {
        match self.resolve_one(what, location) {
            Ok(group) => bind_group(group, x, location, make),
            Err(e) => Array::error(e),
        }
    }

    /// The sum of `x` over the devices of each group.
    #[track_caller]
    pub fn psum(&self, x: &Array) -> Array {
        self.all_reduce("psum", ReduceOp::Sum, x, super::mesh::here())
    }

    /// The mean of `x` over the devices of each group.
    #[track_caller]
    pub fn pmean(&self, x: &Array) -> Array {
        let location = super::mesh::here();
        match self.resolve("pmean", location) {
            Ok(groups) => {
                let n: usize = groups.iter().map(AxisGroup::size).product();
                reduce_over(groups, ReduceOp::Sum, x, location) / n as f64
            }
            Err(e) => Array::error(e),
        }
    }

    /// The elementwise maximum of `x` over each group.
    #[track_caller]
    pub fn pmax(&self, x: &Array) -> Array {
        self.all_reduce("pmax", ReduceOp::Max, x, super::mesh::here())
    }

    /// The elementwise minimum of `x` over each group.
    #[track_caller]
    pub fn pmin(&self, x: &Array) -> Array {
        self.all_reduce("pmin", ReduceOp::Min, x, super::mesh::here())
    }

    /// Every device's `x`, stacked along a new dimension `dim` (or,
    /// `tiled`, concatenated along `dim`), in the order of the devices'
    /// indices; a negative `dim` counts from the end of the result.
    #[track_caller]
    pub fn all_gather(&self, x: &Array, dim: i64, tiled: bool) -> Array {
        self.gather("all_gather", x, (dim, tiled), false, super::mesh::here())
    }

    /// `all_gather` (or, `invariant`, `all_gather_invariant`) at
    /// `location`.
    fn gather(
        &self,
        what: &'static str,
        x: &Array,
        (dim, tiled): (i64, bool),
        invariant: bool,
        location: Location,
    ) -> Array {
        self.bind_one(what, x, location, |group, x| {
            let rank = rank_of(x)? + usize::from(!tiled);
            let dim = canonical_axis_of_rank(what, "axis", x, dim, rank, location)?;
            Ok(Primitive::Collective(collective::Op::AllGather {
                group,
                dim,
                tiled,
                invariant,
            }))
        })
    }

    /// The sum over the group, of which device `i` keeps block `i` along
    /// `dim` (`tiled`), or element `i` of `dim` (which must have the
    /// group's size and is removed).
    #[track_caller]
    pub fn psum_scatter(&self, x: &Array, dim: i64, tiled: bool) -> Array {
        let location = super::mesh::here();
        self.bind_one("psum_scatter", x, location, |group, x| {
            let dim = canonical_axis_of_rank(
                "psum_scatter",
                "scatter_dimension",
                x,
                dim,
                rank_of(x)?,
                location,
            )?;
            Ok(Primitive::Collective(collective::Op::ReduceScatter {
                group,
                dim,
                tiled,
            }))
        })
    }

    /// JAX's `all_to_all`: the group's devices trade blocks of
    /// `split_dim`. `tiled`: device `i` splits `split_dim` into one block
    /// per device, sends block `j` to device `j`, and concatenates what it
    /// gets along `concat_dim` (no dimension is added or removed).
    /// Untiled (JAX's default): `split_dim` must have the group's size; it
    /// is removed, and the received elements form a new dimension of that
    /// size at `concat_dim` of the result.
    #[track_caller]
    pub fn all_to_all(&self, x: &Array, split_dim: i64, concat_dim: i64, tiled: bool) -> Array {
        let location = super::mesh::here();
        let rank = match rank_of(x) {
            Ok(rank) => rank,
            Err(e) => return Array::error(e),
        };
        let dims = canonical_axis_of_rank("all_to_all", "split_axis", x, split_dim, rank, location)
            .and_then(|split| {
                let concat = canonical_axis_of_rank(
                    "all_to_all",
                    "concat_axis",
                    x,
                    concat_dim,
                    rank,
                    location,
                )?;
                Ok((split, concat))
            });
        let (split, concat) = match dims {
            Ok(dims) => dims,
            Err(e) => return Array::error(e),
        };
        let group = match self.resolve_one("all_to_all", location) {
            Ok(group) => group,
            Err(e) => return Array::error(e),
        };
        let n = group.size();
        let bind = |x: &Array, split_dim: usize, concat_dim: usize| {
            bind_group(group.clone(), x, location, |group, _| {
                Ok(Primitive::Collective(collective::Op::AllToAll {
                    group,
                    split_dim,
                    concat_dim,
                }))
            })
        };
        if tiled {
            return bind(x, split, concat);
        }
        let size = x.shape_or_empty().get(split).copied().unwrap_or(0);
        if size != n as i64 {
            return Array::error(Error::Sharding {
                message: format!(
                    "all_to_all needs dimension {split} (split_axis) of {} to have the {n} \
                     devices of {:?}, but it has {size} (pass tiled to split it into blocks)",
                    x.aval().map(ToString::to_string).unwrap_or_default(),
                    self.axes
                ),
                location: Some(location),
            });
        }
        // As JAX: a dimension of 1 at the new position takes the received
        // elements, and the split dimension, left with 1, goes.
        let (x, split, concat) = match split.cmp(&concat) {
            std::cmp::Ordering::Equal => return bind(x, split, concat),
            std::cmp::Ordering::Less => (expand_dim(x, concat + 1, location), split, concat + 1),
            std::cmp::Ordering::Greater => (expand_dim(x, concat, location), split + 1, concat),
        };
        let out = bind(&x, split, concat);
        let mut shape = out.shape_or_empty().to_vec();
        if split < shape.len() {
            shape.remove(split);
        }
        reshape_at(&out, &shape, location)
    }

    /// JAX's `pswapaxes`: swaps the devices' axis with dimension `axis` of
    /// `x`, which must have the group's size (untiled
    /// [`all_to_all`](Over::all_to_all) from `axis` to `axis`).
    #[track_caller]
    pub fn pswapaxes(&self, x: &Array, axis: i64) -> Array {
        self.all_to_all(x, axis, axis, false)
    }
}

/// The rank of `x`.
fn rank_of(x: &Array) -> Result<usize> {
    Ok(x.aval()?.shape.len())
}

/// An elementwise reduction of `x` over each of `groups`, one after
/// another.
fn reduce_over(groups: Vec<AxisGroup>, op: ReduceOp, x: &Array, location: Location) -> Array {
    groups.into_iter().fold(x.clone(), |acc, group| {
        let acc = varying_over(&acc, &group, location);
        bind_at(
            Primitive::Collective(collective::Op::AllReduce { op, group }),
            &acc,
            location,
        )
    })
}

/// Binds a collective of `group`, made by `make` from the group and `x`
/// (made to vary over it first).
fn bind_group(
    group: AxisGroup,
    x: &Array,
    location: Location,
    make: impl FnOnce(AxisGroup, &Array) -> Result<Primitive>,
) -> Array {
    let x = varying_over(x, &group, location);
    match make(group, &x) {
        Ok(primitive) => bind_at(primitive, &x, location),
        Err(e) => Array::error(e),
    }
}

/// `x` with a dimension of 1 inserted at `dim`.
fn expand_dim(x: &Array, dim: usize, location: Location) -> Array {
    let mut shape = x.shape_or_empty().to_vec();
    shape.insert(dim, 1);
    reshape_at(x, &shape, location)
}

/// `x` reshaped to `shape`, bound at `location`.
fn reshape_at(x: &Array, shape: &[i64], location: Location) -> Array {
    let new_sizes = shape.iter().copied().collect();
    bind_at(
        Primitive::Shape(shape::Op::Reshape { new_sizes }),
        x,
        location,
    )
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
    match over(axes).resolve_one("pvary", location) {
        // Without varying axes (a vmap's axis, `check_vma(false)`), as in
        // JAX, it does nothing.
        Ok(group) if group.vmap_axis().is_some() || super::axis_env::varying_mesh().is_none() => {
            x.clone()
        }
        Ok(group) => bind_at(
            Primitive::Collective(collective::Op::Pvary { group }),
            x,
            location,
        ),
        Err(e) => Array::error(e),
    }
}

/// JAX's `pcast(x, axes, to)`: a change of `x`'s varying type over
/// `axes`. oxla's types are invariant or varying (no reduced or
/// unreduced values), so the cast is `to = "varying"` of an invariant
/// value ([`pvary`]); anything else is an error naming what was asked.
#[track_caller]
pub fn pcast(x: &Array, axes: &[&str], to: &str) -> Array {
    match to {
        "varying" => pvary(x, axes),
        other => Array::error(Error::Sharding {
            message: format!(
                "pcast to {other:?}: oxla's values are invariant or varying over mesh axes \
                 (no reduced or unreduced types), so only to = \"varying\" applies"
            ),
            location: Some(super::mesh::here()),
        }),
    }
}

/// JAX's `pbroadcast(x, axes, source)`: every device of each group of
/// `axes` gets the `x` of the group's device `source`, as
/// `psum(where(axis_index(axes) == source, x, 0), axes)`.
#[track_caller]
pub fn pbroadcast(x: &Array, axes: &[&str], source: usize) -> Array {
    let index = axis_index(axes);
    let source =
        crate::lax::convert_element_type(&Array::weak_scalar(source as i32), oxla_core::DType::I32);
    let mine = crate::numpy::equal(&index, &source);
    let masked = crate::numpy::where_(&mine, x, &crate::numpy::zeros_like(x));
    psum(&masked, axes)
}

/// The sum of `x` over the devices of each group of `axes`.
#[track_caller]
pub fn psum(x: &Array, axes: &[&str]) -> Array {
    over(axes).psum(x)
}

/// The mean of `x` over the devices of each group of `axes`.
#[track_caller]
pub fn pmean(x: &Array, axes: &[&str]) -> Array {
    over(axes).pmean(x)
}

/// The elementwise maximum of `x` over each group of `axes`.
#[track_caller]
pub fn pmax(x: &Array, axes: &[&str]) -> Array {
    over(axes).pmax(x)
}

/// The elementwise minimum of `x` over each group of `axes`.
#[track_caller]
pub fn pmin(x: &Array, axes: &[&str]) -> Array {
    over(axes).pmin(x)
}

/// Every device's `x`, stacked along a new dimension `dim` (or, `tiled`,
/// concatenated along `dim`), in the order of the devices' indices; a
/// negative `dim` counts from the end of the result.
#[track_caller]
pub fn all_gather(x: &Array, axes: &[&str], dim: i64, tiled: bool) -> Array {
    over(axes).all_gather(x, dim, tiled)
}

/// JAX's `all_gather_invariant`: [`all_gather`] whose result is
/// replicated over `axes` (in a `shard_map` that checks varying axes, it
/// may leave under an out spec that does not name them), and whose
/// transpose gives each device its own block of the cotangent instead of
/// summing the blocks over the devices.
#[track_caller]
pub fn all_gather_invariant(x: &Array, axes: &[&str], dim: i64, tiled: bool) -> Array {
    let location = super::mesh::here();
    over(axes).gather("all_gather_invariant", x, (dim, tiled), true, location)
}

/// The sum over the group, of which device `i` keeps block `i` along
/// `dim` (`tiled`), or element `i` of `dim` (which must have the group's
/// size and is removed).
#[track_caller]
pub fn psum_scatter(x: &Array, axes: &[&str], dim: i64, tiled: bool) -> Array {
    over(axes).psum_scatter(x, dim, tiled)
}

/// JAX's `all_to_all` (see [`Over::all_to_all`]): `tiled` trades blocks
/// of `split_dim`, concatenated along `concat_dim`; untiled (JAX's
/// default) moves the devices' axis to dimension `concat_dim` of the
/// result and spreads `split_dim` over the devices.
#[track_caller]
pub fn all_to_all(x: &Array, axes: &[&str], split_dim: i64, concat_dim: i64, tiled: bool) -> Array {
    over(axes).all_to_all(x, split_dim, concat_dim, tiled)
}

/// JAX's `pswapaxes`: swaps the devices' axis with dimension `axis` of
/// `x` (see [`Over::pswapaxes`]).
#[track_caller]
pub fn pswapaxes(x: &Array, axes: &[&str], axis: i64) -> Array {
    over(axes).pswapaxes(x, axis)
}

/// Device `src` (an index along `axes`) sends its `x` to device `dst`,
/// for each `(src, dst)` of `perm`; a device nobody sends to gets zeros.
/// Over several mesh axes the index is row-major in mesh order, whatever
/// order `axes` names them in, as JAX numbers them (unlike
/// [`axis_index`], which follows the order given, as JAX's does).
#[track_caller]
pub fn ppermute(x: &Array, axes: &[&str], perm: &[(usize, usize)]) -> Array {
    over(axes).bind_one("ppermute", x, super::mesh::here(), |group, _| {
        Ok(Primitive::Collective(collective::Op::Ppermute {
            group,
            perm: perm.to_vec(),
        }))
    })
}

/// JAX's `pshuffle`: device `i` gets the `x` of device `perm[i]` (a
/// permutation of the indices along `axes`).
#[track_caller]
pub fn pshuffle(x: &Array, axes: &[&str], perm: &[usize]) -> Array {
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if sorted.iter().enumerate().any(|(i, &p)| i != p) {
        return Array::error(Error::Sharding {
            message: format!("pshuffle: `perm` does not represent a permutation: {perm:?}"),
            location: Some(super::mesh::here()),
        });
    }
    let pairs: Vec<(usize, usize)> = perm
        .iter()
        .enumerate()
        .map(|(dst, &src)| (src, dst))
        .collect();
    ppermute(x, axes, &pairs)
}

/// This device's (or, over a vmap axis, this example's) index along
/// `axes` (int32; row-major over several).
#[track_caller]
pub fn axis_index(axes: &[&str]) -> Array {
    let location = super::mesh::here();
    let index = |group: AxisGroup| match crate::ops::bind_at(
        Primitive::Collective(collective::Op::AxisIndex { group }),
        &[],
        location,
    ) {
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
