//! Abstract values: what a traced array is known to be (dtype, shape, weak type).

use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::dtype::DType;
use crate::sharding::ShardingDesc;

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
    /// How the value is split over the explicit axes of its mesh (JAX's
    /// explicit sharding in types, `f32[8@x,4]`): `Some` for a value on a
    /// mesh with [`Explicit`](crate::sharding::AxisType::Explicit) axes,
    /// naming only those axes; `None` elsewhere.
    pub sharding: Option<ShardingDesc>,
}

impl Aval {
    /// A strongly typed aval.
    pub fn new(dtype: DType, shape: &[i64]) -> Self {
        Self {
            dtype,
            shape: shape.iter().copied().collect(),
            weak_type: false,
            vma: Vma::default(),
            sharding: None,
        }
    }

    /// A weakly typed scalar aval.
    pub fn weak_scalar(dtype: DType) -> Self {
        Self {
            dtype,
            shape: Dims::new(),
            weak_type: true,
            vma: Vma::default(),
            sharding: None,
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

    /// The same shape (and varying axes and sharding) with another dtype
    /// (and not weak).
    pub fn with_dtype(&self, dtype: DType) -> Self {
        Self {
            dtype,
            shape: self.shape.clone(),
            weak_type: false,
            vma: self.vma.clone(),
            sharding: self.sharding.clone(),
        }
    }

    /// The same dtype, weakness and varying axes with another shape (and
    /// no sharding in its type: a sharding rule gives the new one).
    pub fn with_shape(&self, shape: &[i64]) -> Self {
        Self {
            dtype: self.dtype,
            shape: shape.iter().copied().collect(),
            weak_type: self.weak_type,
            vma: self.vma.clone(),
            sharding: None,
        }
    }

    /// The type of one slice along the leading axis (what a scan's body
    /// gets of each xs): the shape without that axis, and the explicit
    /// sharding without it.
    pub fn leading_slice(&self) -> Self {
        let sharding = self.sharding.as_ref().map(|s| s.without_dim(0));
        self.with_shape(self.shape.get(1..).unwrap_or(&[]))
            .with_sharding(sharding)
    }

    /// The same type with `sharding` as its explicit sharding (kept without
    /// trailing unsplit dimensions, so equal splits compare equal).
    pub fn with_sharding(&self, sharding: Option<ShardingDesc>) -> Self {
        Self {
            sharding: sharding.map(|s| s.trimmed()),
            ..self.clone()
        }
    }

    /// The mesh axes splitting each dimension in the type (empty for every
    /// dimension of a value without an explicit sharding).
    pub fn dim_axes(&self) -> Vec<crate::sharding::DimAxes> {
        (0..self.rank())
            .map(|d| {
                self.sharding
                    .as_ref()
                    .and_then(|s| s.dims.get(d).cloned())
                    .unwrap_or_else(|| std::sync::Arc::from([]))
            })
            .collect()
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
    /// As in jaxprs: `f32[2,3]`, with the explicit sharding of each split
    /// dimension: `f32[8@x,4]`, `f32[8@(x,y),4]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let axes = self.dim_axes();
        let dims: Vec<String> = self
            .shape
            .iter()
            .zip(&axes)
            .map(|(d, axes)| match axes.len() {
                0 => d.to_string(),
                1 => format!("{d}@{}", axes[0]),
                _ => format!("{d}@({})", axes.join(",")),
            })
            .collect();
        write!(f, "{}[{}]", self.dtype, dims.join(","))
    }
}
