//! oxla's IR: dtypes with JAX's type promotion, abstract values, the closed
//! set of primitives with their shape rules, jaxprs with a printer in JAX's
//! syntax, and a builder that checks each equation as it is added. No native
//! dependencies: it builds in seconds and is tested without a plugin.
#![warn(missing_docs)]

pub mod aval;
pub mod builder;
pub mod callback;
pub mod dtype;
pub mod error;
pub mod exported;
pub mod jaxpr;
pub mod partial_eval;
pub mod primitive;
pub mod promotion;
pub mod shape_rules;
pub mod sharding;
pub mod sharding_rules;
pub mod subjaxpr;
pub mod varmap;

pub use aval::{Aval, Dims, Vma};
pub use builder::JaxprBuilder;
pub use callback::{
    CALLBACK_ID_ATTRIBUTE, HOST_CALLBACK_TARGET, HostCallback, ORDERED_ATTRIBUTE, VmapMethod,
};
pub use dtype::DType;
pub use error::CoreError;
pub use exported::ExportedFunction;
pub use jaxpr::{Atom, Equation, Jaxpr, Literal, Location, Scalar, ScalarKey, Var};
pub use primitive::{
    ArgOp, BinaryOp, Comparison, ConvDimensionNumbers, CumulativeOp, FftType,
    GatherDimensionNumbers, GatherMode, Precision, Primitive, ReduceOp, RematPolicy,
    ScatterDimensionNumbers, ScatterOp, TypeClass, UnaryOp, WindowOp,
};
pub use sharding::{AxisGroup, AxisScope, AxisType, DimAxes, MeshDesc, ShardingDesc};
pub use subjaxpr::{OpaqueRule, SubJaxpr};
pub use varmap::VarMap;
