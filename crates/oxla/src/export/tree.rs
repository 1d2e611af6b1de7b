//! oxla's pytree structures as JAX's: the exported function's inputs are
//! `(args, kwargs)` with the top-level tuple of a jitted function's input
//! as the positional arguments, and a `#[derive(Pytree)]` struct becomes a
//! dict of its fields. JAX orders dict leaves by sorted key while oxla
//! orders struct leaves by field, so each conversion also returns the oxla
//! leaf index of every JAX leaf.

use oxla_export::PyTreeDef;

use crate::pytree::TreeDef;

/// Why a structure has no JAX equivalent.
#[derive(Debug)]
pub(crate) struct Unexportable {
    /// The key path of the node.
    pub(crate) path: String,
    /// What it is.
    pub(crate) what: String,
}

/// A structure in JAX's form and, for each JAX leaf in order, the index of
/// the same leaf in oxla's order.
pub(crate) struct JaxTree {
    pub(crate) tree: PyTreeDef,
    pub(crate) oxla_leaf: Vec<usize>,
}

/// The input structure `((args...), {})` of a function taking `tree`.
pub(crate) fn input_tree(tree: &TreeDef) -> Result<JaxTree, Unexportable> {
    let args = match tree {
        TreeDef::Tuple(children) => convert(&TreeDef::Tuple(children.clone()), "", &mut 0)?,
        other => {
            let JaxTree { tree, oxla_leaf } = convert(other, "", &mut 0)?;
            JaxTree {
                tree: PyTreeDef::Tuple(vec![tree]),
                oxla_leaf,
            }
        }
    };
    Ok(JaxTree {
        tree: PyTreeDef::Tuple(vec![args.tree, PyTreeDef::Dict(Vec::new())]),
        oxla_leaf: args.oxla_leaf,
    })
}

/// The output structure of a function returning `tree`.
pub(crate) fn output_tree(tree: &TreeDef) -> Result<JaxTree, Unexportable> {
    convert(tree, "", &mut 0)
}

/// A flat input structure `((*, *, ...), {})` of `n` leaves.
pub(crate) fn flat_input_tree(n: usize) -> PyTreeDef {
    PyTreeDef::Tuple(vec![
        PyTreeDef::Tuple(vec![PyTreeDef::Leaf; n]),
        PyTreeDef::Dict(Vec::new()),
    ])
}

/// Converts `tree`, whose first leaf is oxla leaf `*next`.
fn convert(tree: &TreeDef, path: &str, next: &mut usize) -> Result<JaxTree, Unexportable> {
    let sequence = |children: &[TreeDef], next: &mut usize| {
        let mut trees = Vec::with_capacity(children.len());
        let mut leaves = Vec::new();
        for (i, child) in children.iter().enumerate() {
            let converted = convert(child, &format!("{path}[{i}]"), next)?;
            trees.push(converted.tree);
            leaves.extend(converted.oxla_leaf);
        }
        Ok::<_, Unexportable>((trees, leaves))
    };
    let keyed = |entries: Vec<(String, &TreeDef, String)>, next: &mut usize| {
        // Convert in oxla's order (to number the leaves), then sort by key.
        let mut converted = Vec::with_capacity(entries.len());
        for (key, child, child_path) in entries {
            converted.push((key, convert(child, &child_path, next)?));
        }
        converted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut leaves = Vec::new();
        let mut items = Vec::with_capacity(converted.len());
        for (key, child) in converted {
            leaves.extend(child.oxla_leaf);
            items.push((key, child.tree));
        }
        Ok::<_, Unexportable>(JaxTree {
            tree: PyTreeDef::Dict(items),
            oxla_leaf: leaves,
        })
    };
    match tree {
        TreeDef::Leaf => {
            *next += 1;
            Ok(JaxTree {
                tree: PyTreeDef::Leaf,
                oxla_leaf: vec![*next - 1],
            })
        }
        TreeDef::None => Ok(JaxTree {
            tree: PyTreeDef::None,
            oxla_leaf: Vec::new(),
        }),
        TreeDef::Tuple(children) => {
            let (trees, oxla_leaf) = sequence(children, next)?;
            Ok(JaxTree {
                tree: PyTreeDef::Tuple(trees),
                oxla_leaf,
            })
        }
        TreeDef::List(children) => {
            let (trees, oxla_leaf) = sequence(children, next)?;
            Ok(JaxTree {
                tree: PyTreeDef::List(trees),
                oxla_leaf,
            })
        }
        TreeDef::Dict(entries) => keyed(
            entries
                .iter()
                .map(|(k, c)| (k.clone(), c, format!("{path}['{k}']")))
                .collect(),
            next,
        ),
        TreeDef::Struct(_, fields) => keyed(
            fields
                .iter()
                .map(|(k, c)| (k.to_string(), c, format!("{path}.{k}")))
                .collect(),
            next,
        ),
        TreeDef::Static(value) => Err(Unexportable {
            path: path.to_string(),
            what: format!(
                "the static value {value:?}, which JAX's pytrees cannot hold; \
                 close over it in the exported function instead"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_fields_become_a_sorted_dict_with_their_leaves_reordered() {
        let params = TreeDef::Struct(
            "Mlp",
            vec![
                ("w1", TreeDef::Leaf),
                ("b1", TreeDef::Leaf),
                ("layers", TreeDef::List(vec![TreeDef::Leaf, TreeDef::None])),
            ],
        );
        let input = TreeDef::Tuple(vec![params, TreeDef::Leaf]);
        let converted = input_tree(&input).unwrap();
        assert_eq!(
            converted.tree.to_jax_string(),
            "PyTreeDef((({'b1': *, 'layers': [*, None], 'w1': *}, *), {}))"
        );
        assert_eq!(converted.oxla_leaf, vec![1, 2, 0, 3]);
    }

    #[test]
    fn a_single_input_is_the_one_positional_argument() {
        let converted = input_tree(&TreeDef::Leaf).unwrap();
        assert_eq!(converted.tree.to_jax_string(), "PyTreeDef(((*,), {}))");
        assert_eq!(output_tree(&TreeDef::Leaf).unwrap().oxla_leaf, vec![0]);
    }
}
