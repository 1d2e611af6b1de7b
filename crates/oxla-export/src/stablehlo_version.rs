//! StableHLO versions: the one a portable artifact was written for (its
//! MLIR bytecode producer, `StableHLO_vX.Y.Z`) and the newest one a plugin
//! reads (its `stablehlo_current_version` attribute). A JAX newer than a
//! plugin writes ops the plugin cannot parse; comparing the two turns the
//! plugin's parse error into one sentence with the fix.

use std::fmt;

use oxla_pjrt::{Api, Value};

/// A StableHLO version, ordered as versions are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct StablehloVersion {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch version.
    pub patch: u32,
}

impl fmt::Display for StablehloVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl StablehloVersion {
    /// Parses `"1.15.0"`.
    pub fn parse(text: &str) -> Option<StablehloVersion> {
        let mut parts = text.split('.').map(|p| p.parse::<u32>().ok());
        let version = StablehloVersion {
            major: parts.next()??,
            minor: parts.next()??,
            patch: parts.next()??,
        };
        parts.next().is_none().then_some(version)
    }

    /// The version `module` (MLIR bytecode) was written for, from its
    /// producer string; `None` for text or another producer.
    pub fn of_artifact(module: &[u8]) -> Option<StablehloVersion> {
        let rest = module.strip_prefix(b"ML\xefR")?;
        // The bytecode version is a prefix varint: the trailing zero bits of
        // its first byte count the bytes that follow.
        let first = *rest.first()?;
        let extra = if first == 0 {
            8
        } else {
            first.trailing_zeros() as usize
        };
        let rest = rest.get(1 + extra..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        let producer = std::str::from_utf8(&rest[..end]).ok()?;
        StablehloVersion::parse(producer.strip_prefix("StableHLO_v")?)
    }

    /// The newest version `api`'s plugin reads (`stablehlo_current_version`),
    /// if it says.
    pub fn of_plugin(api: &Api) -> Option<StablehloVersion> {
        let attributes = api.plugin_attributes().ok()?;
        let current = attributes
            .iter()
            .find(|a| a.name == "stablehlo_current_version")?;
        match &current.value {
            Value::Int64List(v) if v.len() == 3 => Some(StablehloVersion {
                major: u32::try_from(v[0]).ok()?,
                minor: u32::try_from(v[1]).ok()?,
                patch: u32::try_from(v[2]).ok()?,
            }),
            Value::Int64List(_)
            | Value::String(_)
            | Value::Int64(_)
            | Value::Float(_)
            | Value::Bool(_)
            | Value::Unknown(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_producer_of_a_portable_artifact_is_read() {
        let header = b"ML\xefR\rStableHLO_v1.15.0\x00\x01!\x05";
        assert_eq!(
            StablehloVersion::of_artifact(header),
            Some(StablehloVersion {
                major: 1,
                minor: 15,
                patch: 0
            })
        );
        assert_eq!(StablehloVersion::of_artifact(b"module @m {}"), None);
        assert_eq!(StablehloVersion::of_artifact(b"ML\xefR\rMLIR19\x00"), None);
        assert_eq!(StablehloVersion::of_artifact(b"ML\xefR"), None);
        assert_eq!(
            StablehloVersion::of_artifact(b"ML\xefR\rStableHLO_v1.2"),
            None
        );
    }

    #[test]
    fn versions_order_and_print() {
        let v = |s| StablehloVersion::parse(s).unwrap();
        assert!(v("1.15.0") > v("1.13.3"));
        assert!(v("1.9.9") < v("1.10.0"));
        assert_eq!(v("1.20.0").to_string(), "v1.20.0");
        assert_eq!(StablehloVersion::parse("1.2"), None);
        assert_eq!(StablehloVersion::parse("1.2.3.4"), None);
    }
}
