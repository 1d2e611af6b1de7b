//! `NamedSharding`: a mesh and a partition spec (JAX's
//! `jax.sharding.NamedSharding`), and its conversions to the IR's
//! [`ShardingDesc`] and to XLA's tile layout ([`HloSharding`]).

use std::fmt;
use std::sync::Arc;

use oxla_core::{Aval, ShardingDesc};
use oxla_pjrt::HloSharding;

use super::mesh::Mesh;
use super::spec::{PartitionSpec, SpecEntry};
use crate::error::{Error, Result};

/// An array laid out over `mesh` as `spec` says: dimension `i` is cut into
/// as many blocks as the product of the sizes of the mesh axes
/// `spec[i]` names, and mesh axes the spec does not name hold copies.
#[derive(Clone, PartialEq, Eq)]
pub struct NamedSharding {
    mesh: Mesh,
    spec: PartitionSpec,
}

impl NamedSharding {
    /// The sharding of `spec` over `mesh` (checked against an array's
    /// shape where it is used). The spec is kept as written, as JAX keeps
    /// it: `P('x', None)` is not `P('x')` (it needs rank 2 or more), though
    /// both lay out an array alike.
    pub fn new(mesh: &Mesh, spec: PartitionSpec) -> NamedSharding {
        NamedSharding {
            mesh: mesh.clone(),
            spec,
        }
    }

    /// Every device holds the whole array.
    pub fn replicated(mesh: &Mesh) -> NamedSharding {
        NamedSharding::new(mesh, PartitionSpec::replicated())
    }

    /// The mesh.
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    /// The partition spec.
    pub fn spec(&self) -> &PartitionSpec {
        &self.spec
    }

    /// The sharding as the IR records it.
    pub fn desc(&self) -> ShardingDesc {
        let spec = self.spec.trimmed();
        ShardingDesc {
            mesh: self.mesh.desc().clone(),
            dims: spec
                .entries()
                .iter()
                .map(|e| e.names().iter().map(|a| Arc::from(a.as_str())).collect())
                .collect(),
            unconstrained: spec.unconstrained_dims().into(),
        }
    }

    /// That the sharding lays out an array of type `aval` (known axes,
    /// each once, block counts that divide their dimensions, no
    /// unconstrained dimension); the error names the spec, the mesh, the
    /// array and `what` is sharded.
    pub fn check(&self, aval: &Aval, what: &str, location: oxla_core::Location) -> Result<()> {
        if !self.spec.unconstrained_dims().is_empty() {
            return Err(Error::Sharding {
                message: format!(
                    "cannot shard {what} as {self}: unconstrained dimensions are only allowed in \
                     with_sharding_constraint, as in JAX"
                ),
                location: Some(location),
            });
        }
        self.check_constraint(aval, what, location)
    }

    /// [`NamedSharding::check`] for a sharding constraint, which may
    /// leave dimensions unconstrained.
    pub(crate) fn check_constraint(
        &self,
        aval: &Aval,
        what: &str,
        location: oxla_core::Location,
    ) -> Result<()> {
        let fail = |message: String| Error::Sharding {
            message: format!("cannot shard {what} as {self}: {message}"),
            location: Some(location),
        };
        let written = self.spec.entries().len();
        if written > aval.rank() {
            return Err(fail(format!(
                "the spec is only valid for arrays of rank at least {written}, and {aval} has \
                 rank {}",
                aval.rank()
            )));
        }
        oxla_core::sharding::check_sharding(&self.desc(), aval).map_err(fail)
    }

    /// How many blocks dimension `dim` is cut into.
    pub fn tiles(&self, dim: usize) -> usize {
        self.desc().tiles(dim)
    }

    /// XLA's layout of this sharding for an array of rank `rank`: the tile
    /// grid (one entry per dimension, then the copies over the mesh axes
    /// the spec does not name) and the partition (mesh position) of each
    /// tile, row-major.
    pub fn hlo(&self, rank: usize) -> HloSharding {
        let shape = self.mesh.shape();
        let names = self.mesh.axis_names();
        let index_of = |axis: &str| names.iter().position(|n| *n == axis);
        // Mesh axes in tile order: each dimension's axes, then the unnamed.
        let mut order: Vec<usize> = Vec::new();
        let mut tile_dims: Vec<i64> = Vec::new();
        for dim in 0..rank {
            let axes: Vec<usize> = self
                .spec
                .axes_of(dim)
                .iter()
                .filter_map(|a| index_of(a))
                .collect();
            tile_dims.push(axes.iter().map(|&a| shape[a] as i64).product());
            order.extend(axes);
        }
        let unnamed: Vec<usize> = (0..shape.len()).filter(|a| !order.contains(a)).collect();
        let copies: i64 = unnamed.iter().map(|&a| shape[a] as i64).product();
        order.extend(unnamed);
        if tile_dims.iter().all(|&t| t == 1) {
            return HloSharding::Replicated;
        }
        if copies > 1 {
            tile_dims.push(copies);
        }
        HloSharding::Tiled {
            devices: transposed_positions(&shape, &order),
            tile_dims,
            array_rank: rank,
        }
    }

    /// The named sharding over `mesh` whose layout is `hlo` for an array of
    /// rank `rank`, if one is (XLA reports the layouts it chose for a
    /// program's outputs this way).
    pub fn from_hlo(mesh: &Mesh, hlo: &HloSharding, rank: usize) -> Option<NamedSharding> {
        let target = normalized(hlo);
        let names = mesh.axis_names();
        // Each mesh axis goes to a dimension or to none (`rank`).
        let mut choice = vec![0usize; names.len()];
        loop {
            let mut entries: Vec<Vec<String>> = vec![Vec::new(); rank];
            for (axis, &dim) in choice.iter().enumerate() {
                if dim < rank {
                    entries[dim].push(names[axis].to_string());
                }
            }
            for candidate in orderings(&entries) {
                let spec = PartitionSpec::new(
                    candidate
                        .iter()
                        .map(|axes| {
                            SpecEntry::axes(&axes.iter().map(String::as_str).collect::<Vec<_>>())
                        })
                        .collect(),
                );
                let sharding = NamedSharding::new(mesh, spec.trimmed());
                if normalized(&sharding.hlo(rank)) == target {
                    return Some(sharding);
                }
            }
            // Next assignment (an odometer over rank + 1 choices per axis).
            let mut axis = 0;
            loop {
                if axis == choice.len() {
                    return None;
                }
                choice[axis] += 1;
                if choice[axis] <= rank {
                    break;
                }
                choice[axis] = 0;
                axis += 1;
            }
        }
    }
}

/// Every way to order the axes within each dimension's entry.
fn orderings(entries: &[Vec<String>]) -> Vec<Vec<Vec<String>>> {
    let mut out: Vec<Vec<Vec<String>>> = vec![Vec::new()];
    for entry in entries {
        let perms = permutations(entry);
        out = out
            .into_iter()
            .flat_map(|prefix| {
                perms.iter().map(move |p| {
                    let mut next = prefix.clone();
                    next.push(p.clone());
                    next
                })
            })
            .collect();
    }
    out
}

fn permutations(items: &[String]) -> Vec<Vec<String>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first.clone());
            out.push(tail);
        }
    }
    out
}

/// A layout in one spelling: all-whole tilings are `Replicated`, and a
/// trailing copy dimension of 1 is dropped.
pub(crate) fn normalized(hlo: &HloSharding) -> HloSharding {
    match hlo {
        HloSharding::Tiled {
            tile_dims,
            devices,
            array_rank,
        } => {
            if tile_dims[..*array_rank].iter().all(|&t| t == 1) {
                return HloSharding::Replicated;
            }
            let mut tile_dims = tile_dims.clone();
            while tile_dims.len() > *array_rank && tile_dims.last() == Some(&1) {
                tile_dims.pop();
            }
            HloSharding::Tiled {
                tile_dims,
                devices: devices.clone(),
                array_rank: *array_rank,
            }
        }
        HloSharding::Replicated | HloSharding::Maximal { .. } | HloSharding::Manual => hlo.clone(),
    }
}

/// The row-major positions of a grid of `shape` read in the axis order
/// `order` (the grid transposed to `order`, flattened).
fn transposed_positions(shape: &[usize], order: &[usize]) -> Vec<i64> {
    let total: usize = shape.iter().product();
    let strides: Vec<usize> = (0..shape.len())
        .map(|a| shape[a + 1..].iter().product())
        .collect();
    let sizes: Vec<usize> = order.iter().map(|&a| shape[a]).collect();
    (0..total)
        .map(|flat| {
            let mut rest = flat;
            let mut position = 0;
            for (k, &axis) in order.iter().enumerate().rev() {
                let index = rest % sizes[k];
                rest /= sizes[k];
                position += index * strides[axis];
            }
            position as i64
        })
        .collect()
}

impl fmt::Display for NamedSharding {
    /// `NamedSharding(mesh=Mesh('data': 4), spec=P('data',))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NamedSharding(mesh={}, spec={})", self.mesh, self.spec)
    }
}

impl fmt::Debug for NamedSharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_of_a_transposed_grid() {
        // A 4x2 grid read with axis 1 major: columns first.
        assert_eq!(
            transposed_positions(&[4, 2], &[1, 0]),
            vec![0, 2, 4, 6, 1, 3, 5, 7]
        );
        assert_eq!(
            transposed_positions(&[4, 2], &[0, 1]),
            (0..8).collect::<Vec<_>>()
        );
    }
}
