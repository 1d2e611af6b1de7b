//! Loading weights that another program wrote (PyTorch, Hugging Face):
//! each template leaf names the file's tensor it comes from, perhaps with
//! its axes permuted (a PyTorch `Linear` weight is `[out, in]`, a kernel
//! `[in, out]`); dtypes may be cast; and a non-strict load keeps the
//! template's values for leaves the file lacks and ignores the tensors
//! nothing asked for, reporting both.

use std::path::Path;

use oxla::pytree::Pytree;
use oxla::{Array, Aval, Result};

use std::collections::BTreeMap;

use super::files::HostTensor;
#[cfg(feature = "safetensors")]
use super::safetensors_format::read_safetensors;
use super::{checkpoint_error, names_of};

/// Where a template leaf's values come from in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSource {
    /// The file's tensor name (`encoder.layer.0.dense.weight`).
    pub name: String,
    /// The file tensor's axes in the leaf's order (`jnp.transpose`'s
    /// `axes`); `None` keeps them.
    pub permutation: Option<Vec<i64>>,
}

impl TensorSource {
    /// The tensor `name`, axes as they are.
    pub fn named(name: impl Into<String>) -> Self {
        TensorSource {
            name: name.into(),
            permutation: None,
        }
    }

    /// With its axes reversed (a PyTorch `Linear` weight into a kernel).
    pub fn transposed(self) -> Self {
        TensorSource {
            permutation: Some(Vec::new()),
            ..self
        }
    }

    /// With its axes permuted: leaf axis `i` is the tensor's axis
    /// `axes[i]` (a PyTorch OIHW conv weight into an HWIO kernel:
    /// `[2, 3, 1, 0]`).
    pub fn permuted(self, axes: &[i64]) -> Self {
        TensorSource {
            permutation: Some(axes.to_vec()),
            ..self
        }
    }
}

/// The source of each template leaf, by the leaf's name.
type SourceOf<'a> = Box<dyn Fn(&str) -> Option<TensorSource> + 'a>;

/// How [`load_safetensors_mapped`] matches a file to a template.
pub struct LoadOptions<'a> {
    source: SourceOf<'a>,
    strict: bool,
    cast: bool,
}

impl Default for LoadOptions<'_> {
    /// Each leaf from the tensor of its own name; strict; no casting.
    fn default() -> Self {
        LoadOptions {
            source: Box::new(|leaf| Some(TensorSource::named(leaf))),
            strict: true,
            cast: false,
        }
    }
}

impl<'a> LoadOptions<'a> {
    /// The source of each template leaf, by the leaf's name
    /// ([`tensor_names`](super::tensor_names)); `None` for a leaf the file
    /// does not hold.
    pub fn map_names(mut self, source: impl Fn(&str) -> Option<TensorSource> + 'a) -> Self {
        self.source = Box::new(source);
        self
    }

    /// Keep the template's value of a leaf the file lacks, and ignore the
    /// file's tensors no leaf takes (both are listed in the
    /// [`LoadReport`]). A strict load (the default) makes either an error.
    pub fn non_strict(mut self) -> Self {
        self.strict = false;
        self
    }

    /// Convert a tensor of another dtype than its leaf's (f16 weights into
    /// f32 parameters); without this it is an error.
    pub fn cast_dtypes(mut self) -> Self {
        self.cast = true;
        self
    }
}

/// What a mapped load did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Template leaves filled from the file, by leaf name.
    pub loaded: Vec<String>,
    /// Template leaves the file lacks, which kept the template's values.
    pub missing: Vec<String>,
    /// The file's tensors that no leaf took.
    pub unused: Vec<String>,
}

/// Loads the safetensors file `path` into a pytree shaped like `like`,
/// each leaf from the tensor `options` names for it (permuted, and cast
/// if allowed); see [`LoadOptions`]. A tensor whose shape, after the
/// permutation, is not the leaf's is an error naming both, strict or not.
///
/// ```
/// use oxla_train::checkpoint::{LoadOptions, TensorSource, load_safetensors_mapped, save};
/// use oxla::{Array, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// # #[cfg(feature = "safetensors")] {
/// // A PyTorch-style file: `dense.weight` is [out, in].
/// let path = std::env::temp_dir().join(format!("oxla-doc-mapped-{}.safetensors", std::process::id()));
/// let weight = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])?;
/// let mut file = std::collections::BTreeMap::new();
/// file.insert("dense.weight".to_string(), weight);
/// save(&path, &file)?;
/// let like = (jnp::zeros(&[2, 3], oxla::DType::F32), jnp::zeros(&[3], oxla::DType::F32));
/// let options = LoadOptions::default().non_strict().map_names(|leaf| match leaf {
///     "[0]" => Some(TensorSource::named("['dense.weight']").transposed()),
///     _ => None,
/// });
/// let ((kernel, bias), report) = load_safetensors_mapped(&path, &like, &options)?;
/// assert_eq!(kernel.to_vec::<f32>()?, vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
/// assert_eq!(report.missing, vec!["[1]"]);
/// # std::fs::remove_file(&path).ok();
/// # }
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "safetensors")]
pub fn load_safetensors_mapped<P: Pytree>(
    path: impl AsRef<Path>,
    like: &P,
    options: &LoadOptions<'_>,
) -> Result<(P, LoadReport)> {
    let path = path.as_ref();
    let (tensors, _) = read_safetensors(path)?;
    fill_mapped(path, like, tensors, options)
}

/// `like` with each leaf from the tensor of `tensors` that `options` names
/// for it (see [`LoadOptions`]), laid out over the mesh the template's
/// leaf is on, if it is on one; errors name the checkpoint `path`.
pub(super) fn fill_mapped<P: Pytree>(
    path: &Path,
    like: &P,
    mut tensors: BTreeMap<String, HostTensor>,
    options: &LoadOptions<'_>,
) -> Result<(P, LoadReport)> {
    let (template, def) = like.flatten();
    let mut report = LoadReport::default();
    let mut leaves = Vec::with_capacity(template.len());
    for (leaf_name, want) in names_of(&def).into_iter().zip(template) {
        let source = (options.source)(&leaf_name);
        let found = source
            .as_ref()
            .and_then(|s| tensors.remove(&s.name).map(|t| (s, t)));
        match found {
            Some((source, tensor)) => {
                leaves.push(convert(
                    path,
                    &leaf_name,
                    &want,
                    source,
                    tensor,
                    options.cast,
                )?);
                report.loaded.push(leaf_name);
            }
            None if options.strict => {
                let asked =
                    source.map_or("no tensor".to_string(), |s| format!("tensor {}", s.name));
                let present: Vec<&String> = tensors.keys().take(8).collect();
                return Err(checkpoint_error(
                    path,
                    format!(
                        "leaf {leaf_name} maps to {asked}, which the file does not hold \
                         (unmatched in the file: {present:?}); a non-strict load keeps the \
                         template's value"
                    ),
                ));
            }
            None => {
                leaves.push(want);
                report.missing.push(leaf_name);
            }
        }
    }
    report.unused = tensors.into_keys().collect();
    if options.strict && !report.unused.is_empty() {
        return Err(checkpoint_error(
            path,
            format!(
                "{} tensor(s) that no leaf takes: {:?}; a non-strict load ignores them",
                report.unused.len(),
                report.unused.iter().take(8).collect::<Vec<_>>()
            ),
        ));
    }
    Ok((like.with_leaves(&mut leaves.into_iter())?, report))
}

/// The file's tensor as leaf `leaf_name` of the template: permuted, cast
/// when allowed, and of the leaf's shape.
fn convert(
    path: &Path,
    leaf_name: &str,
    want: &Array,
    source: &TensorSource,
    (dtype, dims, bytes): HostTensor,
    cast: bool,
) -> Result<Array> {
    let mesh_layout = want.named_sharding();
    let want = want.aval()?;
    let got = Aval::new(dtype, &dims);
    let mismatch = |what: &str| {
        checkpoint_error(
            path,
            format!(
                "leaf {leaf_name} is {}, its tensor {} is {got}{what}",
                Aval::new(want.dtype, &want.shape),
                source.name
            ),
        )
    };
    let mut x = Array::from_bytes(dtype, &dims, &bytes)?;
    if let Some(axes) = &source.permutation {
        let rank = dims.len() as i64;
        let axes: Vec<i64> = if axes.is_empty() {
            (0..rank).rev().collect()
        } else {
            axes.clone()
        };
        let mut sorted = axes.clone();
        sorted.sort_unstable();
        if sorted != (0..rank).collect::<Vec<_>>() {
            return Err(mismatch(&format!(
                ", which the permutation {axes:?} does not fit"
            )));
        }
        x = oxla::numpy::transpose(&x, Some(&axes));
    }
    if x.shape() != want.shape.as_slice() {
        return Err(mismatch(&format!(
            " ({:?} after the permutation)",
            x.shape()
        )));
    }
    if dtype != want.dtype {
        if !cast {
            return Err(mismatch(" (LoadOptions::cast_dtypes converts it)"));
        }
        x = oxla::lax::convert_element_type(&x, want.dtype);
    }
    // A leaf the template has over a mesh is put back over that mesh, as
    // the template lays it out.
    if let Some(named) = mesh_layout {
        x = oxla::device_put(&x, named)?;
    }
    x.check()?;
    Ok(x)
}
