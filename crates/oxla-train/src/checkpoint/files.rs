//! What the checkpoint formats share: leaves with their names and host
//! copies, atomic writes, and filling a template from a file's tensors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use oxla::DType;

use super::{checkpoint_error, names_of};
use oxla::Array;
use oxla::Result;
use oxla::pytree::{Pytree, TreeDef};

/// A tensor read from a file: its dtype, dims and row-major bytes.
pub(super) type HostTensor = (DType, Vec<i64>, Vec<u8>);

/// A leaf's name, the leaf and its host copy.
pub(super) type NamedHostLeaf = (String, Array, oxla_npy::HostArray);

/// Each leaf's name and host copy, and the tree's structure (one flatten).
pub(super) fn named_host_leaves<P: Pytree>(tree: &P) -> Result<(Vec<NamedHostLeaf>, TreeDef)> {
    let (leaves, def) = tree.flatten();
    let named = names_of(&def)
        .into_iter()
        .zip(leaves)
        .map(|(name, leaf)| {
            let host = leaf.to_host()?;
            Ok((name, leaf, host))
        })
        .collect::<Result<_>>()?;
    Ok((named, def))
}

/// Runs `write` on a temporary path beside `path`, then renames the result
/// over `path`.
pub(super) fn write_atomically(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let mut partial: PathBuf = path.to_path_buf();
    partial.as_mut_os_string().push(".partial");
    write(&partial)?;
    std::fs::rename(&partial, path).map_err(|e| checkpoint_error(path, e))
}

/// `like` with each leaf replaced by the file's tensor of its name, after
/// checking the names, dtypes and shapes match exactly.
pub(super) fn fill_template<P: Pytree>(
    path: &Path,
    like: &P,
    mut tensors: BTreeMap<String, HostTensor>,
) -> Result<P> {
    let (template, def) = like.flatten();
    let names = names_of(&def);
    let mut leaves = Vec::with_capacity(template.len());
    for (name, want) in names.iter().zip(&template) {
        let want = want.aval()?;
        let Some((dtype, dims, bytes)) = tensors.remove(name) else {
            let present: Vec<&String> = tensors.keys().take(8).collect();
            return Err(checkpoint_error(
                path,
                format!("no tensor named {name} (unmatched in the file: {present:?})"),
            ));
        };
        let got = oxla::Aval::new(dtype, &dims);
        if dtype != want.dtype || dims != want.shape.as_slice() {
            return Err(checkpoint_error(
                path,
                format!(
                    "{name} is {got} in the file, the pytree has {}",
                    oxla::Aval::new(want.dtype, &want.shape)
                ),
            ));
        }
        leaves.push(Array::from_bytes(dtype, &dims, &bytes)?);
    }
    if !tensors.is_empty() {
        let extra: Vec<&String> = tensors.keys().take(8).collect();
        return Err(checkpoint_error(
            path,
            format!(
                "{} tensor(s) that the pytree does not have: {extra:?}",
                tensors.len()
            ),
        ));
    }
    like.with_leaves(&mut leaves.into_iter())
}
