//! `vmap`: vectorizing a function over a batch axis, as `jax.vmap`.

use std::marker::PhantomData;
use std::sync::Arc;

use oxla_core::Location;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::pytree::{Pytree, TreeDef};
use crate::trace::BatchAxis;
use crate::transform::batching::vmap_flat;

/// A vectorized function; see [`vmap`].
pub struct Vmap<In, Out, F> {
    f: F,
    in_axes: Option<Vec<Option<i64>>>,
    out_axes: Option<Vec<Option<i64>>>,
    axis_size: Option<i64>,
    axis_name: Option<Arc<str>>,
    spmd_axis_name: Option<Arc<[Arc<str>]>>,
    _types: PhantomData<fn(In) -> Out>,
}

/// Vectorizes `f` over a new leading axis of every input and output leaf
/// (change with [`Vmap::in_axes`] / [`Vmap::out_axes`]), as `jax.vmap`.
///
/// `f` is written for one example; `vmap(f).call(batch)` runs it on the
/// whole batch at once, adding the batch axis to every operation (no loop).
/// Axes are given per leaf, or per top-level element of a tuple input
/// (JAX's pytree-prefix `in_axes`); `None` marks an unbatched input (its
/// value is shared by every example), negative axes count from the end,
/// and [`Vmap::axis_size`] gives the batch size when no input is batched.
/// An output with `out_axes` `None` must not depend on the batch (an error
/// otherwise). `vmap` composes with [`jit`](crate::jit),
/// [`grad`](crate::grad) and itself: `vmap(grad(f))` gives per-example
/// gradients. Under it, a batched [`lax::cond`](crate::lax::cond)
/// predicate runs every branch and selects, and a batched
/// [`lax::while_loop`](crate::lax::while_loop) runs until every example is
/// done.
///
/// ```
/// use oxla::{Array, numpy as jnp, vmap};
/// # fn main() -> oxla::Result<()> {
/// let xs = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// let w = Array::from_slice(&[1.0f32, 1.0, 0.0], &[3])?;
/// // One dot product per row of xs; w is the same for every row.
/// let ys = vmap(|(w, x): (Array, Array)| jnp::dot(&w, &x))
///     .in_axes(&[None, Some(0)])
///     .call((w, xs.clone()))?;
/// assert_eq!(ys.to_vec::<f32>()?, vec![3.0, 9.0]);
/// // Over the columns, each result stacked along axis 0.
/// let col_max = vmap(|c: Array| jnp::max(&c, None, false)).in_axes(&[Some(-1)]).call(xs)?;
/// assert_eq!(col_max.to_vec::<f32>()?, vec![4.0, 5.0, 6.0]);
/// # Ok(())
/// # }
/// ```
pub fn vmap<In: Pytree, Out: Pytree, F: Fn(In) -> Out>(f: F) -> Vmap<In, Out, F> {
    Vmap {
        f,
        in_axes: None,
        out_axes: None,
        axis_size: None,
        axis_name: None,
        spmd_axis_name: None,
        _types: PhantomData,
    }
}

/// Spells out per-leaf axes from a spec for each leaf, or for each
/// top-level element of a tuple (JAX's pytree-prefix `in_axes`).
pub(crate) fn per_leaf(
    function: &'static str,
    spec: &[Option<i64>],
    tree: &TreeDef,
    what: &str,
    location: Location,
) -> Result<Vec<Option<i64>>> {
    let leaves = tree.num_leaves();
    if spec.len() == leaves {
        return Ok(spec.to_vec());
    }
    if let TreeDef::Tuple(children) = tree
        && children.len() == spec.len()
    {
        return Ok(children
            .iter()
            .zip(spec)
            .flat_map(|(c, s)| std::iter::repeat_n(*s, c.num_leaves()))
            .collect());
    }
    Err(Error::Usage {
        function,
        message: format!(
            "{what} has {} entries, but the {} have {leaves} leaves (give one per leaf, or one per \
             top-level tuple element)",
            spec.len(),
            if what == "in_axes" {
                "inputs"
            } else {
                "outputs"
            }
        ),
        location,
    })
}

/// The mapped dimension of each leaf at `in_axes` (`None`: unmapped), and
/// the one size of those dimensions (or `axis_size`, which they must
/// match); an error of `function` when they differ, or when nothing is
/// mapped and no `axis_size` is given.
pub(crate) fn mapped_dims(
    function: &'static str,
    leaves: &[Array],
    in_axes: &[Option<i64>],
    axis_size: Option<i64>,
    location: Location,
) -> Result<(i64, Vec<Option<usize>>)> {
    let mut size: Option<(i64, String)> = axis_size.map(|n| (n, "axis_size".to_string()));
    let mut dims = Vec::with_capacity(leaves.len());
    for (i, (x, axis)) in leaves.iter().zip(in_axes).enumerate() {
        let Some(axis) = axis else {
            dims.push(None);
            continue;
        };
        let aval = x.aval()?;
        let what = format!("in_axes of input {i}");
        let d = normalize_axis(function, *axis, aval.rank(), &what, location)?;
        let n = aval.shape[d];
        match &size {
            Some((s, source)) if *s != n => {
                return Err(Error::Usage {
                    function,
                    message: format!(
                        "inconsistent sizes of the mapped axis (the mapped axes must have one \
                         size): input {i} ({aval}) has size {n} along axis {axis}, but {source} \
                         has {s}"
                    ),
                    location,
                });
            }
            Some(_) => {}
            None => size = Some((n, format!("input {i} ({aval})"))),
        }
        dims.push(Some(d));
    }
    match size {
        Some((n, _)) => Ok((n, dims)),
        None => Err(Error::Usage {
            function,
            message: "no input is mapped (every in_axes is None): give axis_size".into(),
            location,
        }),
    }
}

/// A possibly negative axis of a rank-`rank` array, checked (an error of
/// `function` otherwise).
pub(crate) fn normalize_axis(
    function: &'static str,
    axis: i64,
    rank: usize,
    what: &str,
    location: Location,
) -> Result<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(Error::Usage {
            function,
            message: format!("{what} is {axis}, out of range for an array of rank {rank}"),
            location,
        });
    }
    Ok((if axis < 0 { axis + r } else { axis }) as usize)
}

impl<In: Pytree, Out: Pytree, F: Fn(In) -> Out> Vmap<In, Out, F> {
    /// The batch axis of each input leaf (`None`: not batched; negative
    /// counts from the end), or one per top-level tuple element.
    pub fn in_axes(mut self, axes: &[Option<i64>]) -> Self {
        self.in_axes = Some(axes.to_vec());
        self
    }

    /// Where each output leaf gets the batch axis (`None`: the output must
    /// not depend on the batch), or one per top-level tuple element.
    ///
    /// ```
    /// use oxla::{Array, vmap};
    /// # fn main() -> oxla::Result<()> {
    /// let xs = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// // Each example's output is a row; out_axes 1 stacks them as columns.
    /// let t = vmap(|x: Array| &x * 10.0).out_axes(&[Some(1)]).call(xs)?;
    /// assert_eq!(t.to_vec::<f32>()?, vec![10.0, 30.0, 20.0, 40.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn out_axes(mut self, axes: &[Option<i64>]) -> Self {
        self.out_axes = Some(axes.to_vec());
        self
    }

    /// The batch size, needed when no input is batched.
    ///
    /// ```
    /// use oxla::{Array, vmap};
    /// # fn main() -> oxla::Result<()> {
    /// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
    /// let copies = vmap(|x: Array| &x + 1.0).in_axes(&[None]).axis_size(3).call(x)?;
    /// assert_eq!(copies.shape(), &[3, 2]);
    /// assert_eq!(copies.to_vec::<f32>()?, vec![2.0, 3.0, 2.0, 3.0, 2.0, 3.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn axis_size(mut self, size: i64) -> Self {
        self.axis_size = Some(size);
        self
    }

    /// Names the batch axis, so that collectives inside the function
    /// ([`psum`](crate::sharding::collectives::psum), `pmean`, `pmax`,
    /// `pmin`, `all_gather`, `psum_scatter`, `all_to_all`, `ppermute`,
    /// `axis_index`) run over the examples of the batch, as JAX's
    /// `vmap(axis_name=...)`. A name hides the same name of an enclosing
    /// `vmap` or `shard_map`.
    ///
    /// ```
    /// use oxla::sharding::collectives::{axis_index, psum};
    /// use oxla::{Array, vmap};
    /// # fn main() -> oxla::Result<()> {
    /// let xs = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4])?;
    /// // Each example divided by the sum over the batch.
    /// let shares = vmap(|x: Array| &x / &psum(&x, &["batch"])).axis_name("batch").call(xs)?;
    /// assert_eq!(shares.to_vec::<f32>()?, vec![0.1, 0.2, 0.3, 0.4]);
    /// let positions = vmap(|_x: Array| axis_index(&["b"])).axis_name("b").axis_size(3);
    /// let positions = positions.in_axes(&[None]).call(Array::scalar(0.0f32)?)?;
    /// assert_eq!(positions.to_vec::<i32>()?, vec![0, 1, 2]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn axis_name(mut self, name: &str) -> Self {
        self.axis_name = Some(Arc::from(name));
        self
    }

    /// Mesh axes the batch dimension is split over in every sharding
    /// constraint and `shard_map` inside the function (JAX's
    /// `spmd_axis_name`): under `jit` on a mesh, each device then holds its
    /// share of the examples, and a `shard_map`'s body maps over that share
    /// (the axes may not appear in its specs, and must divide the batch).
    pub fn spmd_axis_name(mut self, mesh_axes: &[&str]) -> Self {
        self.spmd_axis_name = Some(mesh_axes.iter().map(|a| Arc::from(*a)).collect());
        self
    }

    /// Calls the vectorized function (a function that returns `Result<T>`
    /// gives a `Result<T>` here, not a nested one).
    #[track_caller]
    pub fn call(&self, args: In) -> Result<Out::Value> {
        self.call_with_location(args, Location::from_caller(std::panic::Location::caller()))
    }

    pub(crate) fn call_with_location(&self, args: In, location: Location) -> Result<Out::Value> {
        let (leaves, in_tree) = args.flatten();
        let in_axes = match &self.in_axes {
            Some(spec) => per_leaf("vmap", spec, &in_tree, "in_axes", location)?,
            None => vec![Some(0); leaves.len()],
        };
        let (size, bdims) = mapped_dims("vmap", &leaves, &in_axes, self.axis_size, location)?;
        let out_spec = self.out_axes.clone();
        // Output axes need the output structure, known only after tracing:
        // they are resolved once, at the first output.
        let resolved: std::cell::RefCell<Option<Vec<Option<i64>>>> = Default::default();
        let out_tree_cell: std::cell::RefCell<Option<TreeDef>> = Default::default();
        let f = |xs: &[Array]| -> Result<Vec<Array>> {
            let args = In::unflatten_from(&in_tree, &mut xs.iter().cloned())?;
            let (outs, tree) = (self.f)(args).flatten();
            *out_tree_cell.borrow_mut() = Some(tree);
            Ok(outs)
        };
        let axis = BatchAxis {
            size,
            name: self.axis_name.clone(),
            spmd_axis_name: self.spmd_axis_name.clone(),
        };
        let outs = vmap_flat(f, &leaves, &bdims, axis, &|i| {
            let mut r = resolved.borrow_mut();
            if r.is_none() {
                let tree = out_tree_cell.borrow().clone().unwrap_or(TreeDef::Leaf);
                *r = Some(match &out_spec {
                    Some(spec) => per_leaf("vmap", spec, &tree, "out_axes", location)
                        .unwrap_or_else(|_| vec![Some(0); tree.num_leaves()]),
                    None => vec![Some(0); tree.num_leaves()],
                });
            }
            r.as_ref().and_then(|axes| axes.get(i).copied().flatten())
        })?;
        let tree = out_tree_cell.borrow().clone().expect("traced");
        if let Some(spec) = &out_spec {
            per_leaf("vmap", spec, &tree, "out_axes", location)?;
        }
        let paths = tree.leaf_paths();
        let arrays = outs
            .into_iter()
            .map(|r| {
                r.map_err(|i| Error::Usage {
                    function: "vmap",
                    message: format!(
                        "output {i}{} has out_axes None, but it depends on the batch",
                        paths.get(i).map(|p| format!(" {p}")).unwrap_or_default()
                    ),
                    location,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Out::unflatten_from(&tree, &mut arrays.into_iter())?.into_value()
    }
}
