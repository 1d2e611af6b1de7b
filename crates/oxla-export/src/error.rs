//! oxla-export's errors.

/// Everything that can go wrong reading or running an export.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The bytes are not a valid export flatbuffer.
    #[error("not a valid jax.export file: {0}")]
    Malformed(String),
    /// The file declares a serialization version oxla does not read.
    #[error(
        "unsupported jax.export serialization version {0} (oxla reads versions {min} to {max})",
        min = crate::MIN_SERIALIZATION_VERSION,
        max = crate::MAX_SERIALIZATION_VERSION
    )]
    UnsupportedVersion(u16),
    /// The module uses a calling convention oxla does not follow.
    #[error(
        "unsupported calling convention version {0} (oxla runs versions {min} to {max})",
        min = crate::MIN_CALLING_CONVENTION,
        max = crate::MAX_CALLING_CONVENTION
    )]
    UnsupportedCallingConvention(u16),
    /// The export cannot run here (platform, devices, shapes, effects).
    #[error("{0}")]
    CannotRun(String),
    /// The inputs do not match the exported signature.
    #[error("{0}")]
    BadInput(String),
    /// The plugin could not compile an export written for a newer StableHLO
    /// than the plugin reads.
    #[error(
        "this export was written for StableHLO {artifact}, newer than the {plugin} this plugin \
         reads, and the plugin could not compile it: run it with a plugin that reads {artifact} \
         or newer (the pinned lammps-jax-pjrt-cpu 0.11.2 reads v1.20.0; OXLA_PJRT_PLUGIN or \
         `oxla run --plugin` choose one), or export it with an older JAX whose StableHLO is at \
         most {plugin} (the plugin said: {message})"
    )]
    TooNew {
        /// The version the export was written for.
        artifact: crate::StablehloVersion,
        /// The newest version the plugin reads.
        plugin: crate::StablehloVersion,
        /// The plugin's own error.
        message: String,
    },
    /// The runtime failed.
    #[error(transparent)]
    Pjrt(#[from] oxla_pjrt::Error),
}

/// Result type of this crate.
pub type Result<T, E = ExportError> = std::result::Result<T, E>;
