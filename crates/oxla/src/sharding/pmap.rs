//! `pmap`: a function mapped over an axis of its arguments, one device per
//! index (JAX's `jax.pmap`), built on [`shard_map`](super::shard_map).

use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;

use oxla_core::Location;

use super::mesh::Mesh;
use super::shard_map::{LeafSpecs, shard_map_per_leaf};
use super::spec::{PartitionSpec, SpecEntry};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::pytree::{Pytree, TreeDef};
use crate::vmap::{mapped_dims, normalize_axis, per_leaf};
use oxla_pjrt::Device;

/// A function mapped over an axis of its arguments, one device per index;
/// see [`pmap`].
pub struct Pmap<In, Out, F> {
    f: std::sync::Arc<F>,
    axis_name: String,
    in_axes: Option<Vec<Option<i64>>>,
    out_axes: Option<Vec<Option<i64>>>,
    axis_size: Option<usize>,
    devices: Option<Vec<Device>>,
    _signature: PhantomData<fn(In) -> Out>,
}

/// `f` applied on device `i` to slice `i` of every argument leaf's mapped
/// axis (the leading one unless [`Pmap::in_axes`] says otherwise; an
/// unmapped leaf goes whole to every device), with each output's slices
/// stacked along a new axis (the leading one unless [`Pmap::out_axes`]
/// says otherwise): JAX's `pmap`, for pure data parallelism, built on
/// [`shard_map`](super::shard_map) over a one-axis mesh named
/// `axis_name`, which collectives inside `f` name. The devices are the
/// default client's first ones, or [`Pmap::devices`]. Static arguments
/// (JAX's `static_broadcasted_argnums`) are [`Static`](crate::Static)
/// values in the arguments: every device gets them, and they key the
/// trace.
///
/// ```
/// use oxla::sharding::{collectives::psum, pmap};
/// use oxla::{Array, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// oxla::set_cpu_device_count(4)?;                      // before the first array
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4])?;
/// // Each device's value over the total; the scale goes whole to each.
/// let share = pmap(|(v, scale): (Array, Array)| &v / &psum(&v, &["i"]) * &scale, "i")
///     .in_axes(&[Some(0), None])
///     .call((x, Array::scalar(10.0f32)?))?;
/// assert_eq!(share.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
/// # Ok(())
/// # }
/// ```
pub fn pmap<In: Pytree, Out: Pytree, F: Fn(In) -> Out>(f: F, axis_name: &str) -> Pmap<In, Out, F> {
    Pmap {
        f: std::sync::Arc::new(f),
        axis_name: axis_name.to_string(),
        in_axes: None,
        out_axes: None,
        axis_size: None,
        devices: None,
        _signature: PhantomData,
    }
}

impl<In: Pytree, Out: Pytree, F: Fn(In) -> Out> Pmap<In, Out, F> {
    /// The mapped axis of each input leaf (`None`: not mapped, every
    /// device gets it whole; negative counts from the end), or one per
    /// top-level tuple element (JAX's pytree-prefix `in_axes`).
    pub fn in_axes(mut self, axes: &[Option<i64>]) -> Self {
        self.in_axes = Some(axes.to_vec());
        self
    }

    /// Where each output leaf's devices' values are stacked (`None`: not
    /// stacked; the output must then be the same on every device, as after
    /// a `psum`, and device 0's is returned), or one per top-level tuple
    /// element.
    pub fn out_axes(mut self, axes: &[Option<i64>]) -> Self {
        self.out_axes = Some(axes.to_vec());
        self
    }

    /// The number of devices, needed when no input is mapped (it must
    /// agree with the mapped inputs otherwise).
    pub fn axis_size(mut self, size: usize) -> Self {
        self.axis_size = Some(size);
        self
    }

    /// The devices to run on, one per index of the mapped axis, in order
    /// (JAX's `devices`).
    pub fn devices(mut self, devices: Vec<Device>) -> Self {
        self.devices = Some(devices);
        self
    }

    /// Runs the function on one device per index of the mapped axis.
    #[track_caller]
    pub fn call(&self, args: In) -> Result<Out> {
        let location = super::mesh::here();
        let (leaves, in_tree) = args.flatten();
        let in_axes = match &self.in_axes {
            Some(spec) => per_leaf("pmap", spec, &in_tree, "in_axes", location)?,
            None => vec![Some(0); leaves.len()],
        };
        let axis_size = self.axis_size.map(|n| n as i64);
        let (n, dims) = mapped_dims("pmap", &leaves, &in_axes, axis_size, location)?;
        let n = n as usize;
        let moved: Vec<Array> = leaves
            .iter()
            .zip(&dims)
            .map(|(x, d)| match d {
                Some(d) => crate::numpy::moveaxis(x, *d as i64, 0),
                None => x.clone(),
            })
            .collect();
        let mesh = self.mesh(n, location)?;
        let mapped = || PartitionSpec::new(vec![SpecEntry::from(self.axis_name.as_str())]);
        let spec_of = move |axis: &Option<i64>, name: &PartitionSpec| match axis {
            Some(_) => name.clone(),
            None => PartitionSpec::new(Vec::new()),
        };
        let in_specs: Vec<PartitionSpec> = in_axes.iter().map(|a| spec_of(a, &mapped())).collect();
        let in_specs: LeafSpecs = Rc::new(move |_: &TreeDef| Ok(in_specs.clone()));
        // The outputs' structure and axes are known once the body is traced.
        let out_tree: Rc<RefCell<Option<TreeDef>>> = Rc::default();
        let out_axes: Rc<RefCell<Vec<Option<i64>>>> = Rc::default();
        let out_specs: LeafSpecs = {
            let out_axes = out_axes.clone();
            let mapped = mapped();
            Rc::new(move |_: &TreeDef| {
                Ok(out_axes
                    .borrow()
                    .iter()
                    .map(|a| spec_of(a, &mapped))
                    .collect())
            })
        };
        let body = {
            let (f, in_axes, out_tree, out_axes) = (
                self.f.clone(),
                in_axes.clone(),
                out_tree.clone(),
                out_axes.clone(),
            );
            let (in_tree, requested) = (in_tree.clone(), self.out_axes.clone());
            move |blocks: Vec<Array>| -> Result<Vec<Array>> {
                let mut slices = blocks.iter().zip(&in_axes).map(|(b, axis)| match axis {
                    Some(_) => crate::lax::squeeze(b, &[0]),
                    None => b.clone(),
                });
                let args = In::unflatten_from(&in_tree, &mut slices)?;
                let (outs, tree) = f(args).flatten();
                let axes = match &requested {
                    Some(spec) => per_leaf("pmap", spec, &tree, "out_axes", location)?,
                    None => vec![Some(0); outs.len()],
                };
                *out_tree.borrow_mut() = Some(tree);
                let stacked = outs
                    .iter()
                    .zip(&axes)
                    .map(|(y, axis)| match axis {
                        Some(_) => crate::lax::expand_dims(y, &[0]),
                        None => y.clone(),
                    })
                    .collect();
                *out_axes.borrow_mut() = axes;
                Ok(stacked)
            }
        };
        let outs = shard_map_per_leaf(body, &mesh, in_specs, out_specs)
            .check_vma(false)
            .call(moved)??;
        let tree = out_tree.borrow().clone().expect("traced");
        let placed = outs
            .iter()
            .zip(out_axes.borrow().iter())
            .enumerate()
            .map(|(i, (y, axis))| match axis {
                Some(axis) => {
                    let what = format!("out_axes of output {i}");
                    let d = normalize_axis("pmap", *axis, y.ndim_or_zero(), &what, location)?;
                    Ok(crate::numpy::moveaxis(y, 0, d as i64))
                }
                None => Ok(y.clone()),
            })
            .collect::<Result<Vec<_>>>()?;
        Out::unflatten_from(&tree, &mut placed.into_iter())
    }

    /// The one-axis mesh of `n` devices.
    fn mesh(&self, n: usize, location: Location) -> Result<Mesh> {
        let axes = [(self.axis_name.as_str(), n)];
        match &self.devices {
            None => Mesh::new(&axes),
            Some(devices) if devices.len() == n => Mesh::with_devices(devices.clone(), &axes),
            Some(devices) => Err(Error::Usage {
                function: "pmap",
                message: format!(
                    "{} devices given, but the mapped axis has size {n}",
                    devices.len()
                ),
                location,
            }),
        }
    }
}
