//! An input pipeline in the manner of Google's Grain (`grain.python`): a
//! [`RandomAccessSource`] of records, per-record transforms over it
//! ([`MapDataset`]: `map`, `try_map`, `filter`, `random_map`, and
//! Grain's dataset API: `seed`, `shuffle`, `repeat`), an
//! [`IndexSampler`] that orders a process's shard ([`ShardOptions`]) anew
//! each epoch from a seed in Grain's exact order ([`index_shuffle`]), the
//! generator Grain gives each record ([`Rng`]: numpy's Philox), and a
//! [`DataLoader`] that reads records on worker threads in that order,
//! stacks them into batches of host arrays ([`Stack`]), optionally moves
//! them to the device ([`ToDevice`]), makes them ahead on a background
//! thread, and saves and restores its position ([`IteratorState`]).
//!
//! Every item is a function of the seed, the shard and its position in
//! the stream alone: the same on any machine and for any number of
//! workers, and after a restore. [`datasets::Mnist::epoch`](crate::datasets::Mnist::epoch)
//! is the simpler path the examples take (JAX's permutation, device
//! batches made in the loop); this module is for pipelines with host
//! work per record.

mod dataset;
mod error;
mod index_shuffle;
mod loader;
mod philox;
mod prefetch;
mod rng;
mod sampler;
mod seed_sequence;
mod source;
mod stack;
mod state;
mod stream;

pub use dataset::MapDataset;
pub use error::{BoxError, DataError};
pub use index_shuffle::index_shuffle;
pub use loader::{DataLoader, DataLoaderBuilder};
pub use rng::Rng;
pub use sampler::{IndexSampler, ShardOptions};
pub use source::{MnistSource, RandomAccessSource};
pub use stack::{Stack, ToDevice};
pub use state::IteratorState;

/// The host array batches are made of (`oxla_npy`'s).
pub use oxla_npy::HostArray;
