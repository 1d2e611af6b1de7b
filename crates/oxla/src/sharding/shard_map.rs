//! `shard_map`: a function written for one device's blocks, run on every
//! device of a mesh (JAX's `jax.shard_map`). Inside it, the mesh's axes are
//! in scope for the collectives of [`super::collectives`].

use oxla_core::primitive::{collective, sharding};
use std::marker::PhantomData;
use std::sync::Arc;

use oxla_core::{Aval, Location, Primitive, ShardingDesc, SubJaxpr};

use super::mesh::Mesh;
use super::named::NamedSharding;
use super::spec::PartitionSpec;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::pytree::{Pytree, TreeDef};

/// A function mapped over the blocks of its arguments; see [`shard_map`].
pub struct ShardMap<In, Out, F> {
    f: F,
    mesh: Mesh,
    in_specs: Specs,
    out_specs: Specs,
    check_vma: bool,
    _signature: PhantomData<fn(In) -> Out>,
}

/// The spec of each leaf of a `shard_map`'s inputs or outputs, from their
/// structure.
pub(crate) type LeafSpecs = std::rc::Rc<dyn Fn(&TreeDef) -> Result<Vec<PartitionSpec>>>;

/// Where a `shard_map` gets its leaves' specs.
#[derive(Clone)]
enum Specs {
    /// One spec per top-level element, or one for every leaf (the public
    /// form, as JAX's pytree-prefix specs).
    Prefix(Vec<PartitionSpec>),
    /// Spelled out per leaf from the structure (`pmap`'s axes, whose
    /// outputs are known only once traced).
    PerLeaf(LeafSpecs),
}

impl Specs {
    /// The spec of each leaf of `tree` (`what`: input or output).
    fn leaves(&self, tree: &TreeDef, what: &str, location: Location) -> Result<Vec<PartitionSpec>> {
        match self {
            Specs::Prefix(specs) => leaf_specs(tree, specs, what, location),
            Specs::PerLeaf(specs) => specs(tree),
        }
    }
}

/// `f` run on every device of `mesh`, on that device's blocks: top-level
/// argument `i` (every leaf of it) is cut as `in_specs[i]` says, and
/// top-level output `j` (the whole output when it is not a tuple) is put
/// together from the devices' results as `out_specs[j]` says (a single
/// spec applies to every leaf) (a mesh axis
/// an out spec does not name must hold the same value on all its devices,
/// as after a `psum`). Inside `f`, `psum`, `all_gather`, `ppermute`,
/// `axis_index` and the other collectives name the mesh's axes. Works
/// eagerly and inside `jit`, `grad` and `vmap`.
///
/// As JAX's default (`check_vma=True`), each value in `f` knows the mesh
/// axes it varies over: an input varies over the axes its in spec names,
/// `psum` removes its axes, and an op mixing a replicated value with a
/// varying one makes the replicated one vary first (`pvary`). So a
/// gradient taken inside `f` of a replicated input is summed over the
/// devices, as JAX's is, and an output that varies over an axis its out
/// spec does not name is an error. [`ShardMap::check_vma`]`(false)` turns
/// this off (JAX's `check_vma=False`: per-device gradients, unchecked
/// out specs).
///
/// ```
/// use oxla::sharding::{collectives::psum, shard_map};
/// use oxla::{Array, Mesh, P, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// oxla::set_cpu_device_count(4)?;                      // before the first array
/// let mesh = Mesh::new(&[("i", 4)])?;
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[8])?;
/// // Each device sums its block of two; psum adds the four partial sums,
/// // so every device holds the total and the out spec replicates it.
/// let total = shard_map(
///     |block: Array| psum(&jnp::sum(&block, None, false), &["i"]),
///     &mesh,
///     vec![P!["i"]],
///     vec![P![]],
/// )
/// .call(x)?;
/// assert_eq!(total.item::<f32>()?, 36.0);
/// # Ok(())
/// # }
/// ```
pub fn shard_map<In: Pytree, Out: Pytree, F: Fn(In) -> Out>(
    f: F,
    mesh: &Mesh,
    in_specs: Vec<PartitionSpec>,
    out_specs: Vec<PartitionSpec>,
) -> ShardMap<In, Out, F> {
    ShardMap {
        f,
        mesh: mesh.clone(),
        in_specs: Specs::Prefix(in_specs),
        out_specs: Specs::Prefix(out_specs),
        check_vma: true,
        _signature: PhantomData,
    }
}

/// [`shard_map`] with specs spelled out per leaf by `in_specs` and
/// `out_specs` from the structures of the inputs and of the traced
/// outputs.
pub(crate) fn shard_map_per_leaf<In: Pytree, Out: Pytree, F: Fn(In) -> Out>(
    f: F,
    mesh: &Mesh,
    in_specs: LeafSpecs,
    out_specs: LeafSpecs,
) -> ShardMap<In, Out, F> {
    ShardMap {
        f,
        mesh: mesh.clone(),
        in_specs: Specs::PerLeaf(in_specs),
        out_specs: Specs::PerLeaf(out_specs),
        check_vma: true,
        _signature: PhantomData,
    }
}

/// The spec of each leaf of `tree`: `specs[i]` for every leaf of top-level
/// element `i`, or one spec for every leaf (a prefix of the whole tree).
fn leaf_specs(
    tree: &TreeDef,
    specs: &[PartitionSpec],
    what: &str,
    location: Location,
) -> Result<Vec<PartitionSpec>> {
    let children: Vec<&TreeDef> = match tree {
        TreeDef::Tuple(c) => c.iter().collect(),
        other => vec![other],
    };
    if let [one] = specs {
        return Ok(vec![one.clone(); tree.num_leaves()]);
    }
    if children.len() != specs.len() {
        return Err(Error::Sharding {
            message: format!(
                "shard_map has {} {what}s but {} {what}_specs",
                children.len(),
                specs.len()
            ),
            location: Some(location),
        });
    }
    Ok(children
        .iter()
        .zip(specs)
        .flat_map(|(child, spec)| std::iter::repeat_n(spec.clone(), child.num_leaves()))
        .collect())
}

impl<In: Pytree, Out: Pytree, F: Fn(In) -> Out> ShardMap<In, Out, F> {
    /// Whether values in the body carry the mesh axes they vary over
    /// (JAX's `check_vma`, on by default); see [`shard_map`].
    pub fn check_vma(mut self, check: bool) -> Self {
        self.check_vma = check;
        self
    }

    /// Runs the function on every device (see [`shard_map`]).
    #[track_caller]
    pub fn call(&self, args: In) -> Result<Out> {
        let location = super::mesh::here();
        let (leaves, tree) = args.flatten();
        let specs = self.in_specs.leaves(&tree, "input", location)?;
        let mut in_shardings = Vec::with_capacity(leaves.len());
        let mut block_avals = Vec::with_capacity(leaves.len());
        for (i, (x, spec)) in leaves.iter().zip(&specs).enumerate() {
            let aval = x.aval()?.clone();
            let sharding = NamedSharding::new(&self.mesh, spec.clone());
            sharding.check(&aval, &format!("shard_map input {i} ({aval})"), location)?;
            let desc = sharding.desc();
            let block = block_aval(&aval, &desc);
            block_avals.push(if self.check_vma {
                block.with_vma(named_axes(&desc))
            } else {
                block
            });
            in_shardings.push(desc);
        }
        let mut out_tree = None;
        let mut out_specs = Vec::new();
        let mesh_axes = super::axis_env::bind_mesh(self.mesh.desc().clone(), self.check_vma);
        let traced = crate::transform::eval::trace_flat(&block_avals, true, location, |blocks| {
            let block_args = args.with_leaves(&mut blocks.iter().cloned())?;
            let (outs, tree) = (self.f)(block_args).flatten();
            out_specs = self.out_specs.leaves(&tree, "output", location)?;
            out_tree = Some(tree);
            if !self.check_vma {
                return Ok(outs);
            }
            outs.iter()
                .zip(&out_specs)
                .enumerate()
                .map(|(i, (x, spec))| self.vary_as_out_spec(i, x, spec, location))
                .collect()
        });
        drop(mesh_axes);
        let (body, consts) = traced?;
        let out_tree = out_tree.expect("traced");
        let replicated = NamedSharding::replicated(&self.mesh).desc();
        let mut all_shardings: Vec<ShardingDesc> = vec![replicated; consts.len()];
        all_shardings.extend(in_shardings);
        let body = with_consts_as_inputs(body);
        let out_shardings = out_specs
            .iter()
            .map(|s| NamedSharding::new(&self.mesh, s.clone()).desc())
            .collect();
        let primitive = Primitive::Sharding(sharding::Op::ShardMap(sharding::ShardMapParams {
            jaxpr: SubJaxpr::new(body),
            in_shardings: all_shardings,
            out_shardings,
            check_vma: self.check_vma,
        }));
        let mut operands: Vec<&Array> = consts.iter().collect();
        operands.extend(leaves.iter());
        let outs = crate::ops::bind_at(primitive, &operands, location)?;
        Out::unflatten_from(&out_tree, &mut outs.into_iter())
    }
}

impl<In, Out, F> ShardMap<In, Out, F> {
    /// Output `i` of the body typed as its out spec says: varying over
    /// every axis the spec names (a `pvary` where it does not yet), and an
    /// error if it varies over an axis the spec leaves replicated.
    fn vary_as_out_spec(
        &self,
        i: usize,
        x: &Array,
        spec: &PartitionSpec,
        location: Location,
    ) -> Result<Array> {
        let desc = NamedSharding::new(&self.mesh, spec.clone()).desc();
        let named = named_axes(&desc);
        let aval = x.aval()?;
        if let Some(axis) = aval.vma.iter().find(|a| !named.contains(a)) {
            return Err(Error::Sharding {
                message: format!(
                    "shard_map output {i} ({aval}) varies over mesh axis '{axis}', but its out \
                     spec {spec} says it is the same on every device along it; psum it, or name \
                     '{axis}' in the out spec (or pass check_vma(false))"
                ),
                location: Some(location),
            });
        }
        let missing: Vec<Arc<str>> = named
            .into_iter()
            .filter(|a| !aval.vma.contains(a))
            .collect();
        if missing.is_empty() {
            return Ok(x.clone());
        }
        let group = oxla_core::AxisGroup::devices(self.mesh.desc().clone(), missing.into());
        Ok(crate::ops::bind_at(
            Primitive::Collective(collective::Op::Pvary { group }),
            &[x],
            location,
        )?
        .remove(0))
    }
}

/// The mesh axes a sharding names (its blocks differ along them).
fn named_axes(desc: &ShardingDesc) -> Vec<Arc<str>> {
    desc.dims
        .iter()
        .flat_map(|axes| axes.iter().cloned())
        .collect()
}

/// A traced body whose captured values become its leading inputs.
pub(crate) fn with_consts_as_inputs(mut body: oxla_core::Jaxpr) -> oxla_core::Jaxpr {
    let mut invars = std::mem::take(&mut body.constvars);
    invars.extend(body.invars.iter().copied());
    body.invars = invars;
    body
}

/// The block of an array of `aval` that each device gets under `sharding`.
pub(crate) fn block_aval(aval: &Aval, sharding: &ShardingDesc) -> Aval {
    let shape: Vec<i64> = aval
        .shape
        .iter()
        .enumerate()
        .map(|(d, &n)| n / sharding.tiles(d) as i64)
        .collect();
    let mut block = aval.with_shape(&shape);
    block.weak_type = aval.weak_type;
    block
}
