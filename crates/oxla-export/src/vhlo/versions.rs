//! The StableHLO version that introduced each VHLO op (facts of
//! StableHLO's `VhloOps.td`), so a written artifact names the oldest
//! StableHLO that reads it.

use std::fmt;

/// A StableHLO version `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Version(pub(crate) u32, pub(crate) u32, pub(crate) u32);

impl Version {
    /// The oldest version VHLO has (every `_v1` op of StableHLO 0.9).
    pub(crate) const MINIMUM: Version = Version(0, 9, 0);
    /// The oldest version whose artifacts are MLIR bytecode version 6,
    /// the version oxla writes (StableHLO's `getBytecodeVersion`).
    pub(crate) const BYTECODE_6: Version = Version(0, 15, 0);
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The VHLO ops introduced after StableHLO 0.9.0, with their version.
const INTRODUCED: &[(&str, Version)] = &[
    ("all_gather_v2", Version(1, 5, 0)),
    ("all_reduce_v2", Version(1, 5, 0)),
    ("all_to_all_v2", Version(1, 5, 0)),
    ("async_done_v1", Version(1, 15, 0)),
    ("async_start_v1", Version(1, 15, 0)),
    ("cbrt_v2", Version(1, 10, 0)),
    ("collective_broadcast_v1", Version(0, 16, 0)),
    ("collective_broadcast_v2", Version(1, 20, 0)),
    ("collective_reduce_v1", Version(1, 19, 0)),
    ("composite_v1", Version(0, 19, 0)),
    ("composite_v2", Version(1, 14, 0)),
    ("cosine_v2", Version(1, 10, 0)),
    ("custom_call_v2", Version(1, 18, 0)),
    ("dot_general_v2", Version(1, 6, 0)),
    ("dynamic_conv_v2", Version(0, 20, 0)),
    ("dynamic_gather_v2", Version(1, 1, 0)),
    ("exponential_minus_one_v2", Version(1, 10, 0)),
    ("exponential_v2", Version(1, 9, 0)),
    ("gather_v2", Version(1, 1, 0)),
    ("log_plus_one_v2", Version(1, 10, 0)),
    ("log_v2", Version(1, 10, 0)),
    ("logistic_v2", Version(1, 10, 0)),
    ("recv_v2", Version(1, 12, 0)),
    ("rsqrt_v2", Version(1, 10, 0)),
    ("scatter_v2", Version(1, 1, 0)),
    ("send_v2", Version(1, 12, 0)),
    ("sine_v2", Version(1, 10, 0)),
    ("sqrt_v2", Version(1, 10, 0)),
    ("tan_v1", Version(1, 4, 0)),
    ("tan_v2", Version(1, 10, 0)),
    ("tanh_v2", Version(1, 10, 0)),
];

/// The StableHLO version that introduced the VHLO op `name` (`tanh_v2`).
pub(crate) fn introduced(name: &str) -> Version {
    INTRODUCED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .unwrap_or(Version::MINIMUM)
}
