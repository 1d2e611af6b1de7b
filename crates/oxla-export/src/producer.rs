//! Who wrote an export: JAX (which records its version from format 12 on)
//! or oxla (which marks the module it writes with an `oxla.version`
//! attribute), and in which form its module is.

use std::fmt;

use crate::model::Exported;
use crate::stablehlo_version::StablehloVersion;

/// The module attribute oxla writes into the StableHLO of its exports,
/// holding the version of oxla that wrote them.
pub const OXLA_VERSION_ATTRIBUTE: &str = "oxla.version";

/// Who wrote an export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Producer {
    /// Python JAX, with its version when the file records it.
    Jax(Option<String>),
    /// oxla, with its version.
    Oxla(String),
}

impl fmt::Display for Producer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Producer::Jax(Some(version)) => write!(f, "JAX {version}"),
            Producer::Jax(None) => f.write_str("JAX (version not recorded before format 12)"),
            Producer::Oxla(version) => write!(f, "oxla {version}"),
        }
    }
}

/// The form of an export's module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleForm {
    /// A StableHLO portable artifact (VHLO bytecode) written for a version.
    PortableArtifact(StablehloVersion),
    /// MLIR bytecode of another producer.
    Bytecode,
    /// StableHLO as MLIR text (JAX reads it too; oxla wrote it before
    /// it had a VHLO writer).
    Text,
}

impl fmt::Display for ModuleForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModuleForm::PortableArtifact(version) => {
                write!(f, "StableHLO portable artifact for StableHLO {version}")
            }
            ModuleForm::Bytecode => f.write_str("MLIR bytecode"),
            ModuleForm::Text => f.write_str("StableHLO text"),
        }
    }
}

impl Exported {
    /// Who wrote this export.
    pub fn producer(&self) -> Producer {
        match oxla_version_in(&self.mlir_module) {
            Some(version) => Producer::Oxla(version),
            None => Producer::Jax(self.jax_version.clone()),
        }
    }

    /// The form of the module: portable artifact, other bytecode or text.
    pub fn module_form(&self) -> ModuleForm {
        if let Some(version) = StablehloVersion::of_artifact(&self.mlir_module) {
            ModuleForm::PortableArtifact(version)
        } else if self.mlir_module.starts_with(b"ML\xefR") {
            ModuleForm::Bytecode
        } else {
            ModuleForm::Text
        }
    }
}

/// The value of the `oxla.version` attribute of a module, in text form or
/// a portable artifact (read back to text; the module's own attributes
/// are on the last line of the generic form).
fn oxla_version_in(module: &[u8]) -> Option<String> {
    let decoded;
    let text = if module.starts_with(b"ML\xefR") {
        decoded = crate::vhlo::artifact_to_text(module).ok()?;
        decoded.trim_end().lines().last()?
    } else {
        std::str::from_utf8(module).ok()?
    };
    [
        format!("{OXLA_VERSION_ATTRIBUTE} = \""),
        format!("\"{OXLA_VERSION_ATTRIBUTE}\" = \""),
    ]
    .iter()
    .find_map(|marker| {
        let start = text.find(marker.as_str())? + marker.len();
        let end = text[start..].find('"')?;
        Some(text[start..start + end].to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oxla_attribute_is_found_in_text_and_in_artifacts() {
        let text = b"module attributes {oxla.version = \"0.3.1\"} {\n}";
        assert_eq!(oxla_version_in(text), Some("0.3.1".to_string()));
        assert_eq!(oxla_version_in(b"module {\n}"), None);
        // Not a readable artifact: no version.
        assert_eq!(oxla_version_in(b"ML\xefR\roxla.version = \"1\""), None);
        let generic = "\"builtin.module\"() ({\n}) {oxla.version = \"0.3.1\"} : () -> ()";
        let (artifact, _) = crate::vhlo::stablehlo_text_to_artifact(generic).unwrap();
        assert_eq!(oxla_version_in(&artifact), Some("0.3.1".to_string()));
    }
}
