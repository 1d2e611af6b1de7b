//! The layouts a `jit`'s `in_shardings` / `out_shardings` ask for: one
//! per top-level argument or output (every leaf of it), or, as a pytree of
//! shardings in JAX, one per leaf from its pytree path and type.

use std::sync::Arc;

use oxla_core::Aval;

use super::mesh::Mesh;
use super::named::NamedSharding;
use crate::pytree::TreeDef;

/// A leaf's sharding from its pytree key path, as JAX's `keystr` writes
/// it (`[0].layers[1].kernel`), and its type (`None`: as the leaf is, or
/// as XLA chooses).
pub type LeafSharding = Arc<dyn Fn(&str, &Aval) -> Option<NamedSharding> + Send + Sync>;

/// How a `jit` names the layouts of its inputs or outputs.
#[derive(Clone, Default)]
pub(crate) enum Layouts {
    /// None asked for.
    #[default]
    Unspecified,
    /// One per top-level argument or output.
    PerArgument(Vec<Option<NamedSharding>>),
    /// One per leaf, from its path and type.
    PerLeaf(LeafSharding),
}

impl Layouts {
    /// Whether any layout is asked for.
    pub(crate) fn is_unspecified(&self) -> bool {
        match self {
            Layouts::Unspecified => true,
            Layouts::PerArgument(shardings) => shardings.iter().all(Option::is_none),
            Layouts::PerLeaf(_) => false,
        }
    }

    /// For each leaf of `tree` (of types `avals`): the sharding asked for
    /// and the top-level element the leaf belongs to.
    pub(crate) fn per_leaf(
        &self,
        tree: &TreeDef,
        avals: &[&Aval],
    ) -> Vec<Option<(usize, NamedSharding)>> {
        let mut out = vec![None; avals.len()];
        match self {
            Layouts::Unspecified => {}
            Layouts::PerArgument(shardings) => {
                for (argnum, leaves) in top_level_leaves(tree).into_iter().enumerate() {
                    if let Some(Some(wanted)) = shardings.get(argnum) {
                        for leaf in leaves {
                            out[leaf] = Some((argnum, wanted.clone()));
                        }
                    }
                }
            }
            Layouts::PerLeaf(sharding) => {
                let paths = tree.leaf_paths();
                for (argnum, leaves) in top_level_leaves(tree).into_iter().enumerate() {
                    for leaf in leaves {
                        let path = paths.get(leaf).map_or("", String::as_str);
                        out[leaf] = sharding(path, avals[leaf]).map(|s| (argnum, s));
                    }
                }
            }
        }
        out
    }

    /// The meshes named before any structure is known (for finding the
    /// devices of a program's mesh).
    pub(crate) fn meshes(&self) -> Vec<Mesh> {
        match self {
            Layouts::PerArgument(shardings) => shardings
                .iter()
                .flatten()
                .map(|s| s.mesh().clone())
                .collect(),
            Layouts::Unspecified | Layouts::PerLeaf(_) => Vec::new(),
        }
    }
}

/// The leaves of each top-level element of `tree` (each argument of a
/// tuple of arguments; the whole tree when it is not a tuple).
pub(crate) fn top_level_leaves(tree: &TreeDef) -> Vec<std::ops::Range<usize>> {
    let children: Vec<&TreeDef> = match tree {
        TreeDef::Tuple(c) => c.iter().collect(),
        other => vec![other],
    };
    let mut start = 0;
    children
        .into_iter()
        .map(|child| {
            let range = start..start + child.num_leaves();
            start = range.end;
            range
        })
        .collect()
}
