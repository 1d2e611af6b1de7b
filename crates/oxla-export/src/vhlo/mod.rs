//! StableHLO portable artifacts (VHLO in MLIR bytecode) as MLIR text in
//! generic form, without StableHLO's library: the bytecode container and
//! IR are read as MLIR's reader does, VHLO's attributes, types and op
//! properties as StableHLO's VHLO dialect writes them. The text keeps the
//! VHLO ops (`"vhlo.add_v1"`), which XLA's StableHLO parser reads and
//! upgrades, so oxla can merge an export into its own programs.

mod attributes;
mod container;
mod encoding;
mod ir;
mod legalize;
mod op_attributes;
mod platform;
mod refine;
mod sdy;
mod text;
mod versions;
mod writer;

use std::fmt;

pub use platform::bind_platform_index;
pub use refine::{RefinedModule, refine_shapes};

/// Why a portable artifact could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VhloError(pub String);

impl fmt::Display for VhloError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for VhloError {}

/// The module of a portable artifact as MLIR text in generic form: its
/// VHLO functions inside a `module`, without locations.
pub fn artifact_to_text(bytes: &[u8]) -> Result<String, VhloError> {
    let bytecode = container::Bytecode::parse(bytes)?;
    let _ = bytecode.version;
    ir::Printer::new(&bytecode).print()
}

/// A module of VHLO ops in MLIR's generic text form (as
/// [`artifact_to_text`] prints it) written as a portable artifact whose
/// producer names StableHLO `version` (`"1.10.0"`).
pub fn vhlo_text_to_artifact(text: &str, version: &str) -> Result<Vec<u8>, VhloError> {
    let ops = text::parse(text)?;
    writer::write(&ops, &format!("StableHLO_v{version}"))
}

/// A StableHLO module in MLIR's generic text form (as oxla's lowering
/// prints it) written as a portable artifact, as StableHLO's
/// `serializePortableArtifact` does: VHLO ops in MLIR bytecode. Returns
/// the bytes and the oldest StableHLO version that reads them, which the
/// artifact names as its producer.
pub fn stablehlo_text_to_artifact(text: &str) -> Result<(Vec<u8>, String), VhloError> {
    let ops = text::parse(text)?;
    let (vhlo, version) = legalize::legalize(&ops)?;
    let version = version.to_string();
    let bytes = writer::write(&vhlo, &format!("StableHLO_v{version}"))?;
    Ok((bytes, version))
}
