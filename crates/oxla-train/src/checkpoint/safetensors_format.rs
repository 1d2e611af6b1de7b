//! The safetensors format (the `safetensors` feature).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use oxla::DType;
use safetensors::{Dtype as StDtype, SafeTensors, tensor::TensorView};

use super::checkpoint_error;
use super::files::{HostTensor, fill_template, named_host_leaves, write_atomically};
use oxla::Result;
use oxla::pytree::Pytree;

/// The safetensors dtype of `dtype`; `None` for complex128, which the
/// format has no name for.
fn safetensors_dtype(dtype: DType) -> Option<StDtype> {
    Some(match dtype {
        DType::Bool => StDtype::BOOL,
        DType::I8 => StDtype::I8,
        DType::I16 => StDtype::I16,
        DType::I32 => StDtype::I32,
        DType::I64 => StDtype::I64,
        DType::U8 => StDtype::U8,
        DType::U16 => StDtype::U16,
        DType::U32 => StDtype::U32,
        DType::U64 => StDtype::U64,
        DType::F16 => StDtype::F16,
        DType::BF16 => StDtype::BF16,
        DType::F32 => StDtype::F32,
        DType::F64 => StDtype::F64,
        DType::C64 => StDtype::C64,
        DType::C128 => return None,
    })
}

/// Saves `tree` as a safetensors file: one tensor per leaf, named by
/// [`tensor_names`](super::tensor_names), with metadata `format = oxla` and the pytree
/// structure as text (`treedef`).
///
/// ```
/// use oxla::Array;
/// use oxla_train::checkpoint::{load_safetensors, save_safetensors};
/// # fn main() -> oxla::Result<()> {
/// // Any extension: the format is safetensors either way.
/// let path = std::env::temp_dir().join(format!("oxla-doc-st-{}.bin", std::process::id()));
/// let tree = vec![Array::from_slice(&[1.5f32, -2.0], &[2])?];
/// save_safetensors(&path, &tree)?;
/// let back = load_safetensors(&path, &tree)?;
/// assert_eq!(back[0].to_vec::<f32>()?, vec![1.5, -2.0]);
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
pub fn save_safetensors<P: Pytree>(path: impl AsRef<Path>, tree: &P) -> Result<()> {
    let path = path.as_ref();
    let (leaves, def) = named_host_leaves(tree)?;
    let tensors = leaves
        .iter()
        .map(|(name, leaf, host)| (name.as_str(), leaf.dtype_or_bool(), host));
    let metadata = sorted_metadata([("format", "oxla".to_string()), ("treedef", def.to_string())]);
    write_atomically(path, |partial| {
        write_tensors(path, partial, tensors, metadata)
    })
}

/// Writes `tensors` (name, dtype, host copy) with `metadata` as a
/// safetensors file at `to`; errors name `path`, the checkpoint's path.
pub(super) fn write_tensors<'a>(
    path: &Path,
    to: &Path,
    tensors: impl Iterator<Item = (&'a str, DType, &'a oxla_npy::HostArray)>,
    metadata: HashMap<String, String>,
) -> Result<()> {
    let views = tensors
        .map(|(name, dtype, host)| {
            let shape = host.dims.iter().map(|&d| d as usize).collect();
            let dtype = safetensors_dtype(dtype).ok_or_else(|| {
                checkpoint_error(
                    path,
                    format!(
                        "{name}: safetensors has no complex128 dtype (save it as two f64 leaves)"
                    ),
                )
            })?;
            TensorView::new(dtype, shape, &host.bytes)
                .map(|view| (name.to_string(), view))
                .map_err(|e| checkpoint_error(path, format!("{name}: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    safetensors::serialize_to_file(views, Some(metadata), to).map_err(|e| checkpoint_error(path, e))
}

/// The metadata map for `entries` (in sorted key order), built so that it
/// iterates in that order. The safetensors crate writes a header's
/// `__metadata__` in its `HashMap`'s iteration order, which each map's
/// random hash keys decide; a checkpoint should be the same bytes for the
/// same tree (a resumed run's file compares equal to an uninterrupted
/// run's), so the map is built again, with fresh keys, until its order is
/// the sorted one (half of all maps of two entries; the bound is never
/// reached in practice, and past it only the bytes' order varies).
pub(super) fn sorted_metadata<const N: usize>(
    entries: [(&str, String); N],
) -> HashMap<String, String> {
    let build = || -> HashMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    };
    let in_order = |m: &HashMap<String, String>| m.keys().is_sorted();
    let mut map = build();
    for _ in 0..256 {
        if in_order(&map) {
            break;
        }
        map = build();
    }
    map
}

/// Loads a safetensors file into a pytree shaped like `like`.
///
/// ```
/// use oxla::{Array, DType};
/// use oxla_train::checkpoint::{load_safetensors, save_safetensors};
/// # fn main() -> oxla::Result<()> {
/// let path = std::env::temp_dir().join(format!("oxla-doc-lst-{}.safetensors", std::process::id()));
/// save_safetensors(&path, &Array::from_slice(&[1u8, 2, 3], &[3])?)?;
/// let like = oxla::numpy::zeros(&[3], DType::U8);
/// assert_eq!(load_safetensors(&path, &like)?.to_vec::<u8>()?, vec![1, 2, 3]);
/// // The template's dtype must match the file's.
/// assert!(load_safetensors(&path, &oxla::numpy::zeros(&[3], DType::F32)).is_err());
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
pub fn load_safetensors<P: Pytree>(path: impl AsRef<Path>, like: &P) -> Result<P> {
    let path = path.as_ref();
    let (tensors, saved_structure) = read_safetensors(path)?;
    let filled = fill_template(path, like, tensors)?;
    // Every name, dtype and shape fits; the static fields must too.
    if let Some(saved) = saved_structure {
        check_structure(path, &saved, &like.flatten().1.to_string())?;
    }
    Ok(filled)
}

/// A safetensors file's tensors by name (dtype, dims, bytes), and the
/// pytree structure it was saved from when oxla wrote it.
pub(super) fn read_safetensors(
    path: &Path,
) -> Result<(BTreeMap<String, HostTensor>, Option<String>)> {
    let bytes = std::fs::read(path).map_err(|e| checkpoint_error(path, e))?;
    let (_, header) = SafeTensors::read_metadata(&bytes).map_err(|e| checkpoint_error(path, e))?;
    let file = SafeTensors::deserialize(&bytes).map_err(|e| checkpoint_error(path, e))?;
    let mut tensors = BTreeMap::new();
    for (name, view) in file.tensors() {
        let dtype = dtype_of_safetensors(view.dtype()).ok_or_else(|| {
            checkpoint_error(
                path,
                format!("{name} has unsupported dtype {:?}", view.dtype()),
            )
        })?;
        let dims = view.shape().iter().map(|&d| d as i64).collect();
        tensors.insert(name, (dtype, dims, view.data().to_vec()));
    }
    let structure = header
        .metadata()
        .as_ref()
        .and_then(oxla_structure)
        .map(str::to_string);
    Ok((tensors, structure))
}

/// The pytree structure an oxla checkpoint was saved from (its `treedef`
/// metadata); `None` for other writers' files (PyTorch's, Hugging Face's).
fn oxla_structure(metadata: &HashMap<String, String>) -> Option<&str> {
    match metadata.get("format").map(String::as_str) {
        Some("oxla") => metadata.get("treedef").map(String::as_str),
        _ => None,
    }
}

/// Checks that the template has the structure the checkpoint was saved
/// from, static fields included (an `Mlp` saved with ReLU does not load
/// into a GELU template): an error showing where the two first differ.
pub(super) fn check_structure(path: &Path, saved: &str, template: &str) -> Result<()> {
    if saved == template {
        return Ok(());
    }
    let at = saved
        .char_indices()
        .zip(template.chars())
        .find(|((_, a), b)| a != b)
        .map_or(saved.len().min(template.len()), |((i, _), _)| i);
    let window = |text: &str| -> String {
        let start = text[..at.min(text.len())]
            .char_indices()
            .rev()
            .nth(40)
            .map_or(0, |(i, _)| i);
        let rest: String = text[start..].chars().take(100).collect();
        let ellipsis = if start > 0 { "…" } else { "" };
        format!("{ellipsis}{rest}")
    };
    Err(checkpoint_error(
        path,
        format!(
            "it was saved from another structure than the template's (static fields such as \
             activations included): saved {}, template {}",
            window(saved),
            window(template)
        ),
    ))
}

pub(super) fn dtype_of_safetensors(dtype: StDtype) -> Option<DType> {
    Some(match dtype {
        StDtype::BOOL => DType::Bool,
        StDtype::I8 => DType::I8,
        StDtype::I16 => DType::I16,
        StDtype::I32 => DType::I32,
        StDtype::I64 => DType::I64,
        StDtype::U8 => DType::U8,
        StDtype::U16 => DType::U16,
        StDtype::U32 => DType::U32,
        StDtype::U64 => DType::U64,
        StDtype::F16 => DType::F16,
        StDtype::BF16 => DType::BF16,
        StDtype::F32 => DType::F32,
        StDtype::F64 => DType::F64,
        StDtype::C64 => DType::C64,
        // safetensors' enum is open (non_exhaustive): fp8, fp4.
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex64_has_a_safetensors_dtype_and_complex128_none() {
        assert_eq!(safetensors_dtype(DType::C64), Some(StDtype::C64));
        assert_eq!(dtype_of_safetensors(StDtype::C64), Some(DType::C64));
        assert_eq!(safetensors_dtype(DType::C128), None);
        for dtype in DType::ALL.into_iter().filter(|d| *d != DType::C128) {
            let st = safetensors_dtype(dtype).unwrap();
            assert_eq!(dtype_of_safetensors(st), Some(dtype));
        }
    }
}
