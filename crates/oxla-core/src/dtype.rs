//! Element types, as JAX has them: [`DType`] lives in the `oxla-dtype` leaf
//! crate, which the runtime and file-format crates share.

pub use oxla_dtype::DType;
