//! Models exported with `jax.export`: read `Exported.serialize()` bytes
//! ([`Exported::from_bytes`]), write them ([`Exported::to_bytes`], which
//! Python's `jax.export.deserialize` loads), inspect them, and run them
//! through PJRT ([`LoadedExport`]) following JAX's calling convention, on
//! one device or SPMD-partitioned over several.
#![warn(missing_docs)]

mod error;
mod model;
mod producer;
mod read;
mod refine;
mod run;
mod schema;
mod stablehlo_version;
mod vhlo;
mod write;

pub use error::{ExportError, Result};
pub use model::{
    AbstractMesh, AbstractValue, AxisType, DType, Dim, DisabledCheck, Exported, MemorySpace,
    NamedSharding, PyTreeDef, Sharding,
};
pub use producer::{ModuleForm, OXLA_VERSION_ATTRIBUTE, Producer};
pub use run::LoadedExport;
pub use stablehlo_version::StablehloVersion;
pub use vhlo::{
    RefinedModule, VhloError, artifact_to_text, bind_platform_index, refine_shapes,
    stablehlo_text_to_artifact, vhlo_text_to_artifact,
};

/// The oldest `serialization_version` oxla reads. JAX has stored 3 in the
/// field since version 3 for compatibility with old readers, whatever the
/// real format; [`Exported::format_version`] says which format the fields are in.
pub const MIN_SERIALIZATION_VERSION: u16 = 2;
/// The newest `serialization_version` oxla reads.
pub const MAX_SERIALIZATION_VERSION: u16 = 12;
/// The oldest module calling convention oxla runs.
pub const MIN_CALLING_CONVENTION: u16 = 9;
/// The newest module calling convention oxla runs.
pub const MAX_CALLING_CONVENTION: u16 = 10;
