//! `PartitionSpec`: which mesh axes split each dimension of an array
//! (JAX's `jax.sharding.PartitionSpec`, written with the [`P!`](crate::P)
//! macro).

use std::fmt;

/// The mesh axes that split one array dimension: none (the dimension is
/// whole on every device), one, or several (major first); or
/// [`SpecEntry::UNCONSTRAINED`], left to the partitioner.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SpecEntry {
    axes: Vec<String>,
    unconstrained: bool,
}

impl SpecEntry {
    /// JAX's `P.UNCONSTRAINED`: a dimension the partitioner may split over
    /// any mesh axes the other dimensions leave free (in
    /// `with_sharding_constraint` only, as in JAX).
    pub const UNCONSTRAINED: SpecEntry = SpecEntry {
        axes: Vec::new(),
        unconstrained: true,
    };

    /// The entry splitting its dimension over `axes`, major first.
    pub fn axes(axes: &[&str]) -> SpecEntry {
        SpecEntry {
            axes: axes.iter().map(|a| a.to_string()).collect(),
            unconstrained: false,
        }
    }

    /// The mesh axes splitting the dimension (none when unconstrained).
    pub fn names(&self) -> &[String] {
        &self.axes
    }

    /// Whether the dimension is left to the partitioner.
    pub fn is_unconstrained(&self) -> bool {
        self.unconstrained
    }

    /// As JAX prints it: `None`, `'data'`, `('data', 'model')` or
    /// `UNCONSTRAINED`.
    fn text(&self) -> String {
        match self.unconstrained {
            true => "UNCONSTRAINED".to_string(),
            false => oxla_core::sharding::entry_text(self.axes.iter()),
        }
    }
}

impl From<&str> for SpecEntry {
    fn from(axis: &str) -> Self {
        SpecEntry::axes(&[axis])
    }
}

impl From<Option<&str>> for SpecEntry {
    fn from(axis: Option<&str>) -> Self {
        SpecEntry::axes(axis.as_slice())
    }
}

impl<const N: usize> From<[&str; N]> for SpecEntry {
    fn from(axes: [&str; N]) -> Self {
        SpecEntry::axes(&axes)
    }
}

/// For each leading dimension of an array, the mesh axes that split it;
/// dimensions beyond the spec's length are not split. `P!["data", None]`
/// splits dimension 0 over mesh axis `data` and keeps dimension 1 whole;
/// `P![["data", "model"]]` splits dimension 0 over both axes;
/// `P!["data", PartitionSpec::UNCONSTRAINED]` leaves dimension 1 to the
/// partitioner (in `with_sharding_constraint`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PartitionSpec(Vec<SpecEntry>);

impl PartitionSpec {
    /// JAX's `P.UNCONSTRAINED` (see [`SpecEntry::UNCONSTRAINED`]).
    pub const UNCONSTRAINED: SpecEntry = SpecEntry::UNCONSTRAINED;

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
        self.0.get(dim).map_or(&[], |e| e.axes.as_slice())
    }

    /// The dimensions left to the partitioner.
    pub fn unconstrained_dims(&self) -> Vec<usize> {
        (0..self.0.len())
            .filter(|&d| self.0[d].unconstrained)
            .collect()
    }

    /// The spec without trailing unsplit entries (`P('x', None)` and
    /// `P('x')` mean the same).
    pub(crate) fn trimmed(&self) -> PartitionSpec {
        let mut entries = self.0.clone();
        while entries
            .last()
            .is_some_and(|e| e.axes.is_empty() && !e.unconstrained)
        {
            entries.pop();
        }
        PartitionSpec(entries)
    }
}

impl fmt::Display for PartitionSpec {
    /// `P('data', None)`, as JAX prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries: Vec<String> = self.0.iter().map(SpecEntry::text).collect();
        write!(f, "P({})", entries.join(", "))
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
