//! Abstract values: what a traced array is known to be (dtype, shape, weak type).

use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::dtype::DType;

/// Dimensions of an array (inline up to 6 dims).
pub type Dims = SmallVec<[i64; 6]>;

/// The manual mesh axes a value inside a `shard_map` body varies over
/// (JAX's `vma`), sorted; empty outside `shard_map`, and for values every
/// device holds alike.
pub type Vma = Arc<[Arc<str>]>;

/// The abstract value of an array: JAX's `ShapedArray`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Aval {
    /// Element type.
    pub dtype: DType,
    /// Dimensions.
    pub shape: Dims,
    /// Whether the dtype is weak (a Rust scalar promoted like a Python one).
    pub weak_type: bool,
    /// The mesh axes it varies over inside a `shard_map` that checks
    /// replication (JAX's varying manual axes).
    pub vma: Vma,
}

impl Aval {
    /// A strongly typed aval.
    pub fn new(dtype: DType, shape: &[i64]) -> Self {
        Self {
            dtype,
            shape: shape.iter().copied().collect(),
            weak_type: false,
            vma: Vma::default(),
        }
    }

    /// A weakly typed scalar aval.
    pub fn weak_scalar(dtype: DType) -> Self {
        Self {
            dtype,
            shape: Dims::new(),
            weak_type: true,
            vma: Vma::default(),
        }
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn size(&self) -> i64 {
        self.shape.iter().product()
    }

    /// The same shape (and varying axes) with another dtype (and not weak).
    pub fn with_dtype(&self, dtype: DType) -> Self {
        Self {
            dtype,
            shape: self.shape.clone(),
            weak_type: false,
            vma: self.vma.clone(),
        }
    }

    /// The same dtype, weakness and varying axes with another shape.
    pub fn with_shape(&self, shape: &[i64]) -> Self {
        Self {
            dtype: self.dtype,
            shape: shape.iter().copied().collect(),
            weak_type: self.weak_type,
            vma: self.vma.clone(),
        }
    }

    /// The same type varying over `vma` (sorted and deduplicated here).
    pub fn with_vma(&self, vma: impl IntoIterator<Item = Arc<str>>) -> Self {
        let mut axes: Vec<Arc<str>> = vma.into_iter().collect();
        axes.sort();
        axes.dedup();
        Self {
            vma: axes.into(),
            ..self.clone()
        }
    }

    /// The MLIR tensor type, `tensor<2x3xf32>`.
    pub fn mlir_type(&self) -> String {
        let mut t = String::from("tensor<");
        for d in &self.shape {
            t.push_str(&format!("{d}x"));
        }
        t.push_str(self.dtype.mlir_name());
        t.push('>');
        t
    }
}

impl fmt::Display for Aval {
    /// As in jaxprs: `f32[2,3]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.shape.iter().map(i64::to_string).collect();
        write!(f, "{}[{}]", self.dtype, dims.join(","))
    }
}
