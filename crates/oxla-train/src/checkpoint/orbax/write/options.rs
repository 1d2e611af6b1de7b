//! How a checkpoint is written: the settings Orbax's `SaveArgs`,
//! `PyTreeCheckpointHandler` and TensorStore's OCDBT configuration expose,
//! with Orbax's defaults.

use std::path::Path;

use super::SaveError;

/// TensorStore's default target size of an OCDBT data file (2 GiB), which
/// Orbax keeps.
const DEFAULT_TARGET_DATA_FILE_SIZE: u64 = 2 << 30;
/// Orbax's `max_decoded_node_bytes` (one B+tree node for most checkpoints).
const DEFAULT_MAX_NODE_BYTES: usize = 100_000_000;
/// Values up to this size are stored in their B+tree node (Orbax's
/// `max_inline_value_bytes`).
pub(super) const MAX_INLINE_VALUE_BYTES: usize = 1024;

/// How [`save_with`](super::save_with) writes a checkpoint. The default is
/// what `ocp.StandardCheckpointer().save(path, tree)` writes.
///
/// ```
/// use oxla_train::checkpoint::orbax::SaveOptions;
/// // Uncompressed chunks of at most 1 MiB (Orbax's use_compression=False
/// // and SaveArgs(chunk_byte_size=2**20)).
/// let options = SaveOptions::default().compression(false).chunk_byte_size(1 << 20);
/// ```
#[derive(Clone, Debug)]
pub struct SaveOptions {
    pub(super) use_ocdbt: bool,
    pub(super) zarr3: bool,
    pub(super) compression: bool,
    pub(super) chunk_byte_size: Option<usize>,
    pub(super) target_data_file_size: u64,
    pub(super) max_node_bytes: usize,
}

impl Default for SaveOptions {
    /// Orbax's defaults: zstd-compressed chunks (level 1), one chunk per
    /// array unless it is larger than a data file, 2 GiB data files, B+tree
    /// nodes of up to 100 MB.
    fn default() -> Self {
        SaveOptions {
            use_ocdbt: true,
            zarr3: false,
            compression: true,
            chunk_byte_size: None,
            target_data_file_size: DEFAULT_TARGET_DATA_FILE_SIZE,
            max_node_bytes: DEFAULT_MAX_NODE_BYTES,
        }
    }
}

impl SaveOptions {
    /// Whether the arrays go in one OCDBT key-value store (Orbax's
    /// `use_ocdbt`, on by default). Off, each array is a directory of
    /// files named by its keys (`params.w/.zarray`, `params.w/0.0`), as
    /// `PyTreeCheckpointHandler(use_ocdbt=False)` writes it; the OCDBT
    /// sizes ([`target_data_file_size`](Self::target_data_file_size),
    /// [`max_node_bytes`](Self::max_node_bytes)) then do not apply.
    pub fn use_ocdbt(mut self, on: bool) -> Self {
        self.use_ocdbt = on;
        self
    }

    /// Whether the arrays are zarr 3 arrays (Orbax's `use_zarr3`, off by
    /// default): `zarr.json` metadata and each chunk stored as a one-chunk
    /// `sharding_indexed` shard (the chunk, zstd level 3 or raw, then its
    /// offset, length and a CRC-32C), keyed `c/0/1`, as TensorStore
    /// writes them for `PyTreeCheckpointHandler(use_zarr3=True)`.
    pub fn zarr3(mut self, on: bool) -> Self {
        self.zarr3 = on;
        self
    }

    /// Whether chunks are zstd-compressed (Orbax's `use_compression`, on by
    /// default); off, `.zarray` says `"compressor": null` (zarr 3: no
    /// `zstd` codec).
    pub fn compression(mut self, on: bool) -> Self {
        self.compression = on;
        self
    }

    /// Split each array into chunks of at most `bytes` bytes (Orbax's
    /// `SaveArgs(chunk_byte_size=...)`), shaped as Orbax shapes them: the
    /// chunk's largest dimension cut to its next smaller divisor until the
    /// chunk fits. It must be at least one element of every leaf's dtype.
    pub fn chunk_byte_size(mut self, bytes: usize) -> Self {
        self.chunk_byte_size = Some(bytes);
        self
    }

    /// The size at which an OCDBT data file is closed and the next begun
    /// (Orbax's `ocdbt_target_data_file_size`, TensorStore's
    /// `target_data_file_size`; 2 GiB by default, 0 for no limit). An array
    /// larger than this is split into chunks of at most this size, as Orbax
    /// splits it.
    pub fn target_data_file_size(mut self, bytes: u64) -> Self {
        self.target_data_file_size = bytes;
        self
    }

    /// The most bytes a B+tree node of the OCDBT database may decode to
    /// (TensorStore's `max_decoded_node_bytes`; Orbax sets 100 MB, so a
    /// checkpoint's keys fit one node). More keys than fit are spread over
    /// leaf nodes under interior ones. It must hold the largest key with
    /// its value (a little over 1 KiB more than the longest name).
    pub fn max_node_bytes(mut self, bytes: usize) -> Self {
        self.max_node_bytes = bytes;
        self
    }

    /// The chunk byte size for an array of `bytes` bytes: the one asked
    /// for, or in OCDBT the data file size where the array would not fit
    /// one file (as Orbax's `calculate_chunk_byte_size`, which it only
    /// calls for OCDBT); `None` for one chunk.
    pub(super) fn chunk_bytes_for(&self, bytes: usize) -> Option<usize> {
        if !self.use_ocdbt {
            return self.chunk_byte_size;
        }
        let target = usize::try_from(self.target_data_file_size).unwrap_or(usize::MAX);
        match (self.chunk_byte_size, self.target_data_file_size) {
            (asked, 0) => asked,
            (None, _) => (bytes > target).then_some(target),
            (Some(asked), _) => Some(asked.min(target)),
        }
    }

    /// An error unless the options can write a checkpoint at `path`.
    pub(super) fn check(&self, path: &Path) -> Result<(), SaveError> {
        let invalid = |message: String| SaveError::InvalidOption {
            path: path.to_path_buf(),
            message,
        };
        if self.chunk_byte_size == Some(0) {
            return Err(invalid(
                "chunk_byte_size(0): a chunk holds at least one element".into(),
            ));
        }
        // A node holds at least its header and one small entry.
        if self.max_node_bytes < 256 {
            return Err(invalid(format!(
                "max_node_bytes({}): a B+tree node needs at least 256 bytes",
                self.max_node_bytes
            )));
        }
        Ok(())
    }
}
