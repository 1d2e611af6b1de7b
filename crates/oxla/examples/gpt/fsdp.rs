//! Fully sharded data parallelism over a one-axis mesh ('data': n): each
//! parameter and optimizer-state leaf is split along its largest dimension
//! that the device count divides (replicated when none does), and each
//! batch along its rows. XLA's partitioner inserts the all-gathers before
//! the parameters are used and the reduce-scatters of their gradients.

use oxla::sharding::{PartitionSpec, SpecEntry, device_put_tree};
use oxla::{Array, Mesh, NamedSharding, P, Result};

/// The layouts of an FSDP run on one mesh.
#[derive(Clone)]
pub struct Fsdp {
    mesh: Mesh,
    devices: i64,
}

impl Fsdp {
    /// FSDP over all `devices` devices of the default client, as mesh
    /// axis 'data'.
    pub fn new(devices: usize) -> Result<Fsdp> {
        Ok(Fsdp {
            mesh: Mesh::new(&[("data", devices)])?,
            devices: devices as i64,
        })
    }

    /// The layout of a leaf of `shape`: split over 'data' along its
    /// largest dimension that the device count divides (the first of equal
    /// ones), else replicated.
    pub fn leaf(&self, shape: &[i64]) -> NamedSharding {
        let dim = (0..shape.len())
            .filter(|&d| shape[d] % self.devices == 0)
            .max_by_key(|&d| (shape[d], std::cmp::Reverse(d)));
        let spec = match dim {
            None => PartitionSpec::replicated(),
            Some(d) => PartitionSpec::new(
                (0..=d)
                    .map(|i| match i == d {
                        true => SpecEntry::axes(&["data"]),
                        false => SpecEntry::axes(&[]),
                    })
                    .collect(),
            ),
        };
        NamedSharding::new(&self.mesh, spec)
    }

    /// `tree` with every leaf laid out by [`leaf`](Self::leaf).
    #[track_caller]
    pub fn place<T: oxla::pytree::Pytree>(&self, tree: &T) -> Result<T> {
        device_put_tree(tree, |_, leaf| self.leaf(leaf.shape()))
    }

    /// `batch` split along its rows.
    #[track_caller]
    pub fn place_batch(&self, batch: &Array) -> Result<Array> {
        oxla::device_put(batch, NamedSharding::new(&self.mesh, P!["data"]))
    }

    /// How many devices split the batch.
    pub fn devices(&self) -> i64 {
        self.devices
    }
}
