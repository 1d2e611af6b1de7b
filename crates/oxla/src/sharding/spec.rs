//! `PartitionSpec`: which mesh axes split each dimension of an array
//! (JAX's `jax.sharding.PartitionSpec`, written with the [`P!`](crate::P)
//! macro).

use std::fmt;

/// The mesh axes that split one array dimension: none (the dimension is
/// whole on every device), one, or several (major first).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SpecEntry(pub Vec<String>);

impl From<&str> for SpecEntry {
    fn from(axis: &str) -> Self {
        SpecEntry(vec![axis.to_string()])
    }
}

impl From<Option<&str>> for SpecEntry {
    fn from(axis: Option<&str>) -> Self {
        SpecEntry(axis.into_iter().map(str::to_string).collect())
    }
}

impl<const N: usize> From<[&str; N]> for SpecEntry {
    fn from(axes: [&str; N]) -> Self {
        SpecEntry(axes.iter().map(|a| a.to_string()).collect())
    }
}

/// For each leading dimension of an array, the mesh axes that split it;
/// dimensions beyond the spec's length are not split. `P!["data", None]`
/// splits dimension 0 over mesh axis `data` and keeps dimension 1 whole;
/// `P![["data", "model"]]` splits dimension 0 over both axes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PartitionSpec(Vec<SpecEntry>);

impl PartitionSpec {
    /// A spec from its entries.
    pub fn new(entries: Vec<SpecEntry>) -> Self {
        PartitionSpec(entries)
    }

    /// The spec that splits nothing (every device holds the whole array).
    pub fn replicated() -> Self {
        PartitionSpec(Vec::new())
    }

    /// The entries.
    pub fn entries(&self) -> &[SpecEntry] {
        &self.0
    }

    /// The mesh axes of dimension `dim` (none beyond the spec's length).
    pub fn axes_of(&self, dim: usize) -> &[String] {
        self.0.get(dim).map_or(&[], |e| e.0.as_slice())
    }

    /// The spec without trailing unsplit entries (`P('x', None)` and
    /// `P('x')` mean the same).
    pub(crate) fn trimmed(&self) -> PartitionSpec {
        let mut entries = self.0.clone();
        while entries.last().is_some_and(|e| e.0.is_empty()) {
            entries.pop();
        }
        PartitionSpec(entries)
    }
}

impl fmt::Display for PartitionSpec {
    /// `P('data', None)`, as JAX prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&oxla_core::sharding::spec_text(
            self.0.iter().map(|e| e.0.iter()),
        ))
    }
}

/// A [`PartitionSpec`]: `P!["data", None]`, `P![["data", "model"], None]`,
/// `P![]` (replicated). Each entry is a mesh axis name, `None`, or an array
/// of axis names.
#[macro_export]
macro_rules! P {
    ($($entry:expr),* $(,)?) => {
        $crate::sharding::PartitionSpec::new(vec![$($crate::sharding::SpecEntry::from($entry)),*])
    };
}
