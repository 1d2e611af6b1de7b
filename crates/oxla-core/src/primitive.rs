//! The closed set of primitives, each with its parameters.
//!
//! Every transformation is a `match` over [`Primitive`] in its own module
//! (shape rules here in oxla-core, lowering in oxla-lower): adding a variant
//! makes the compiler list every rule still missing.

use std::fmt;
use std::sync::Arc;

use crate::aval::Dims;
use crate::dtype::DType;
use crate::subjaxpr::{OpaqueRule, SubJaxpr};

/// Elementwise functions of one operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// -x
    Neg,
    /// -1, 0 or 1
    Sign,
    /// |x|
    Abs,
    /// Round down.
    Floor,
    /// Round up.
    Ceil,
    /// Round half away from zero.
    Round,
    /// e^x
    Exp,
    /// 2^x
    Exp2,
    /// e^x - 1
    Expm1,
    /// ln x
    Log,
    /// ln(1 + x)
    Log1p,
    /// √x
    Sqrt,
    /// 1/√x
    Rsqrt,
    /// ∛x
    Cbrt,
    /// tanh x
    Tanh,
    /// 1 / (1 + e^-x)
    Logistic,
    /// sin x
    Sin,
    /// cos x
    Cos,
    /// tan x
    Tan,
    /// asin x
    Asin,
    /// acos x
    Acos,
    /// atan x
    Atan,
    /// sinh x
    Sinh,
    /// cosh x
    Cosh,
    /// asinh x
    Asinh,
    /// acosh x
    Acosh,
    /// atanh x
    Atanh,
    /// The error function.
    Erf,
    /// 1 - erf x
    Erfc,
    /// The inverse error function.
    ErfInv,
    /// ln |Γ(x)|
    Lgamma,
    /// ψ(x) = d/dx ln Γ(x)
    Digamma,
    /// x * x
    Square,
    /// Whether x is finite (bool result).
    IsFinite,
    /// Logical or bitwise not.
    Not,
    /// Number of set bits.
    PopulationCount,
    /// Number of leading zero bits.
    CountLeadingZeros,
    /// The exponentially scaled modified Bessel function of order 0,
    /// e^-|x| I₀(x).
    BesselI0e,
    /// The exponentially scaled modified Bessel function of order 1,
    /// e^-|x| I₁(x).
    BesselI1e,
}

impl UnaryOp {
    /// JAX's name of the primitive.
    pub fn name(self) -> &'static str {
        use UnaryOp::*;
        match self {
            Neg => "neg",
            Sign => "sign",
            Abs => "abs",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Exp => "exp",
            Exp2 => "exp2",
            Expm1 => "expm1",
            Log => "log",
            Log1p => "log1p",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Cbrt => "cbrt",
            Tanh => "tanh",
            Logistic => "logistic",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Erf => "erf",
            Erfc => "erfc",
            ErfInv => "erf_inv",
            Lgamma => "lgamma",
            Digamma => "digamma",
            Square => "square",
            IsFinite => "is_finite",
            Not => "not",
            PopulationCount => "population_count",
            CountLeadingZeros => "clz",
            BesselI0e => "bessel_i0e",
            BesselI1e => "bessel_i1e",
        }
    }

    /// Which operand types the op accepts.
    pub fn accepts(self) -> TypeClass {
        use UnaryOp::*;
        match self {
            Abs => TypeClass::Signed,
            Neg | Sign | Square => TypeClass::Numeric,
            Not => TypeClass::BoolOrInt,
            PopulationCount | CountLeadingZeros => TypeClass::Int,
            Floor | Ceil | Round | Exp | Exp2 | Expm1 | Log | Log1p | Sqrt | Rsqrt | Cbrt
            | Tanh | Logistic | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Asinh
            | Acosh | Atanh | Erf | Erfc | ErfInv | Lgamma | Digamma | IsFinite | BesselI0e
            | BesselI1e => TypeClass::Float,
        }
    }
}

/// Elementwise functions of two operands of the same type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// x + y
    Add,
    /// x - y
    Sub,
    /// x * y
    Mul,
    /// x / y (rounding toward zero for integers)
    Div,
    /// Remainder with the sign of x.
    Rem,
    /// x ^ y
    Pow,
    /// max(x, y)
    Max,
    /// min(x, y)
    Min,
    /// atan2(x, y)
    Atan2,
    /// The next float after x toward y.
    NextAfter,
    /// ψ⁽ᵐ⁾(x), the m-th derivative of digamma (operands m, x).
    Polygamma,
    /// Logical or bitwise and.
    And,
    /// Logical or bitwise or.
    Or,
    /// Logical or bitwise xor.
    Xor,
    /// x << y
    ShiftLeft,
    /// x >> y, filling with zeros.
    ShiftRightLogical,
    /// x >> y, filling with the sign bit.
    ShiftRightArithmetic,
}

impl BinaryOp {
    /// JAX's name of the primitive.
    pub fn name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Sub => "sub",
            Mul => "mul",
            Div => "div",
            Rem => "rem",
            Pow => "pow",
            Max => "max",
            Min => "min",
            Atan2 => "atan2",
            NextAfter => "nextafter",
            Polygamma => "polygamma",
            And => "and",
            Or => "or",
            Xor => "xor",
            ShiftLeft => "shift_left",
            ShiftRightLogical => "shift_right_logical",
            ShiftRightArithmetic => "shift_right_arithmetic",
        }
    }

    /// Which operand types the op accepts.
    pub fn accepts(self) -> TypeClass {
        use BinaryOp::*;
        match self {
            Add | Sub | Mul | Div | Rem => TypeClass::Numeric,
            Max | Min => TypeClass::Any,
            Pow | Atan2 | NextAfter | Polygamma => TypeClass::Float,
            And | Or | Xor => TypeClass::BoolOrInt,
            ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => TypeClass::Int,
        }
    }
}

/// Element comparisons (bool result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Comparison {
    /// ==
    Eq,
    /// !=
    Ne,
    /// <
    Lt,
    /// <=
    Le,
    /// >
    Gt,
    /// >=
    Ge,
}

impl Comparison {
    /// JAX's name of the primitive.
    pub fn name(self) -> &'static str {
        match self {
            Comparison::Eq => "eq",
            Comparison::Ne => "ne",
            Comparison::Lt => "lt",
            Comparison::Le => "le",
            Comparison::Gt => "gt",
            Comparison::Ge => "ge",
        }
    }
}

/// The kinds of element types an op takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeClass {
    /// Every dtype, bool included.
    Any,
    /// Integers and floats (not bool).
    Numeric,
    /// Signed integers and floats.
    Signed,
    /// Floats only.
    Float,
    /// Integers only.
    Int,
    /// Bools and integers.
    BoolOrInt,
}

impl TypeClass {
    /// Whether `dtype` belongs to the class.
    pub fn contains(self, dtype: DType) -> bool {
        match self {
            TypeClass::Any => true,
            TypeClass::Numeric => dtype != DType::Bool,
            TypeClass::Signed => dtype.is_float() || dtype.is_signed_int(),
            TypeClass::Float => dtype.is_float(),
            TypeClass::Int => dtype.is_int(),
            TypeClass::BoolOrInt => dtype == DType::Bool || dtype.is_int(),
        }
    }

    /// How the class is described in errors.
    pub fn describe(self) -> &'static str {
        match self {
            TypeClass::Any => "any type",
            TypeClass::Numeric => "a numeric type",
            TypeClass::Signed => "a signed integer or floating-point type",
            TypeClass::Float => "a floating-point type",
            TypeClass::Int => "an integer type",
            TypeClass::BoolOrInt => "bool or an integer type",
        }
    }
}

/// Reductions over axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum.
    Sum,
    /// Product.
    Prod,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Logical and.
    And,
    /// Logical or.
    Or,
}

impl ReduceOp {
    /// JAX's name of the primitive.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "reduce_sum",
            ReduceOp::Prod => "reduce_prod",
            ReduceOp::Max => "reduce_max",
            ReduceOp::Min => "reduce_min",
            ReduceOp::And => "reduce_and",
            ReduceOp::Or => "reduce_or",
        }
    }
}

/// Reductions over sliding windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowOp {
    /// Sum.
    Sum,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
}

/// Cumulative reductions along an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CumulativeOp {
    /// Running sum.
    Sum,
    /// Running product.
    Prod,
    /// Running maximum.
    Max,
    /// Running minimum.
    Min,
}

impl CumulativeOp {
    /// JAX's name of the primitive.
    pub fn name(self) -> &'static str {
        match self {
            CumulativeOp::Sum => "cumsum",
            CumulativeOp::Prod => "cumprod",
            CumulativeOp::Max => "cummax",
            CumulativeOp::Min => "cummin",
        }
    }
}

/// Which of argmax and argmin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgOp {
    /// Index of the maximum.
    Max,
    /// Index of the minimum.
    Min,
}

/// The layout of a convolution's operands and result: for each, the
/// position of its batch/feature dims and of each spatial dim (JAX's
/// `ConvDimensionNumbers`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConvDimensionNumbers {
    /// Input: [batch dim, feature dim, spatial dims...].
    pub lhs_spec: Dims,
    /// Kernel: [out feature dim, in feature dim, spatial dims...].
    pub rhs_spec: Dims,
    /// Output: [batch dim, feature dim, spatial dims...].
    pub out_spec: Dims,
}

/// How gather treats out-of-bounds start indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GatherMode {
    /// Clamp the indices so each slice is in bounds (XLA's own semantics).
    Clip,
    /// Slices that would go out of bounds give the fill value.
    Fill,
    /// The indices are promised in bounds (JAX's default for indexing):
    /// gathers clamp as XLA does, and the transpose (a scatter) drops
    /// out-of-bounds updates instead of clamping them.
    PromiseInBounds,
}

/// How a gathered slice relates operand, indices and result (XLA's
/// `GatherDimensionNumbers`; the index vector is the last indices dim).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GatherDimensionNumbers {
    /// Result dims that hold the slice's (uncollapsed) dims.
    pub offset_dims: Dims,
    /// Operand dims of size 1 in the slice that the result drops.
    pub collapsed_slice_dims: Dims,
    /// Which operand dim each index component starts.
    pub start_index_map: Dims,
}

/// How scattered updates relate operand, indices and updates (XLA's
/// `ScatterDimensionNumbers`; the index vector is the last indices dim).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScatterDimensionNumbers {
    /// Update dims that hold the window.
    pub update_window_dims: Dims,
    /// Operand dims of size 1 in the window that updates do not have.
    pub inserted_window_dims: Dims,
    /// Which operand dim each index component addresses.
    pub scatter_dims_to_operand_dims: Dims,
}

/// What scatter does with an update and the value it lands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterOp {
    /// Replace.
    Set,
    /// Add.
    Add,
    /// Multiply.
    Mul,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

/// Precision of a matrix product or convolution on accelerators (XLA's
/// `PrecisionConfig`; CPUs compute in full precision whatever it says).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// The backend's fastest.
    Default,
    /// More precise (e.g. bf16_3x on TPUs).
    High,
    /// Full f32 precision.
    Highest,
}

impl Precision {
    /// The StableHLO name.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Default => "DEFAULT",
            Precision::High => "HIGH",
            Precision::Highest => "HIGHEST",
        }
    }
}

/// Which intermediate values of a checkpointed function reverse mode may
/// keep from the forward pass (the rest is recomputed), as
/// `jax.checkpoint_policies`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RematPolicy {
    /// Keep nothing: recompute every intermediate from the inputs.
    NothingSaveable,
    /// Keep everything (as without checkpoint).
    EverythingSaveable,
    /// Keep the results of matrix products and convolutions.
    DotsSaveable,
    /// Keep the results of matrix products without batch dimensions.
    DotsWithNoBatchDimsSaveable,
    /// Keep only values named with `checkpoint_name` under these names.
    SaveOnlyTheseNames(Vec<String>),
    /// Keep values named with `checkpoint_name`, except under these names
    /// (nothing unnamed).
    SaveAnyNamesButThese(Vec<String>),
    /// Keep what either policy keeps (`save_from_both_policies`).
    SaveFromBothPolicies(Box<RematPolicy>, Box<RematPolicy>),
}

impl RematPolicy {
    /// JAX's name of the policy.
    pub fn name(&self) -> &'static str {
        match self {
            RematPolicy::NothingSaveable => "nothing_saveable",
            RematPolicy::EverythingSaveable => "everything_saveable",
            RematPolicy::DotsSaveable => "dots_saveable",
            RematPolicy::DotsWithNoBatchDimsSaveable => "dots_with_no_batch_dims_saveable",
            RematPolicy::SaveOnlyTheseNames(_) => "save_only_these_names",
            RematPolicy::SaveAnyNamesButThese(_) => "save_any_names_but_these",
            RematPolicy::SaveFromBothPolicies(..) => "save_from_both_policies",
        }
    }

    /// Whether reverse mode may keep the result of `eqn` (rather than
    /// recompute it).
    pub fn saveable(&self, eqn: &crate::jaxpr::Equation) -> bool {
        match self {
            RematPolicy::NothingSaveable => false,
            RematPolicy::EverythingSaveable => true,
            RematPolicy::DotsSaveable => matches!(
                eqn.primitive,
                Primitive::DotGeneral { .. } | Primitive::ConvGeneralDilated { .. }
            ),
            RematPolicy::DotsWithNoBatchDimsSaveable => matches!(
                &eqn.primitive,
                Primitive::DotGeneral { lhs_batch, .. } if lhs_batch.is_empty()
            ),
            RematPolicy::SaveOnlyTheseNames(names) => matches!(
                &eqn.primitive,
                Primitive::CheckpointName { name } if names.iter().any(|n| n.as_str() == &**name)
            ),
            RematPolicy::SaveAnyNamesButThese(names) => matches!(
                &eqn.primitive,
                Primitive::CheckpointName { name } if !names.iter().any(|n| n.as_str() == &**name)
            ),
            RematPolicy::SaveFromBothPolicies(first, second) => {
                first.saveable(eqn) || second.saveable(eqn)
            }
        }
    }
}

/// A primitive operation with its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// An elementwise function of one operand.
    Unary(UnaryOp),
    /// An elementwise function of two operands of one type and shape.
    Binary(BinaryOp),
    /// An elementwise comparison.
    Compare(Comparison),
    /// x ^ y for a constant integer y.
    IntegerPow {
        /// The exponent.
        y: i32,
    },
    /// `cases[which]` element by element: operand 0 is the selector (bool
    /// for two cases, else i32), the others the cases.
    SelectN,
    /// min(max(x, lo), hi): operands lo, x, hi.
    Clamp,
    /// Converts the element type.
    ConvertElementType {
        /// The new dtype.
        new_dtype: DType,
        /// Whether the result is weakly typed.
        weak_type: bool,
    },
    /// 0, 1, 2, ... along `dimension` of a new array.
    Iota {
        /// Element type.
        dtype: DType,
        /// Shape.
        shape: Dims,
        /// The counting dimension.
        dimension: usize,
    },
    /// Broadcasts into `shape`, operand dim i going to `broadcast_dimensions[i]`.
    BroadcastInDim {
        /// Result shape.
        shape: Dims,
        /// Where each operand dimension goes.
        broadcast_dimensions: Dims,
    },
    /// Same elements, new shape.
    Reshape {
        /// Result shape.
        new_sizes: Dims,
    },
    /// Permutes the dimensions.
    Transpose {
        /// Result dim i is operand dim `permutation[i]`.
        permutation: Dims,
    },
    /// Removes size-1 dimensions.
    Squeeze {
        /// The dimensions to remove.
        dimensions: Dims,
    },
    /// Reverses the order of elements along dimensions.
    Rev {
        /// The dimensions to reverse.
        dimensions: Dims,
    },
    /// Joins operands along a dimension.
    Concatenate {
        /// The dimension.
        dimension: usize,
    },
    /// Cuts the operand along `axis` into consecutive pieces of `sizes`
    /// (one output each; JAX's `lax.split`, the inverse of concatenate).
    Split {
        /// The dimension cut.
        axis: usize,
        /// Each piece's extent along `axis` (they sum to the operand's).
        sizes: Dims,
    },
    /// Pads with a value: operands x and the padding scalar.
    Pad {
        /// Per dimension: (low, high, interior) padding; low/high may be negative.
        config: Vec<(i64, i64, i64)>,
    },
    /// A strided box of the operand.
    Slice {
        /// First index per dimension.
        start_indices: Dims,
        /// One past the last index per dimension.
        limit_indices: Dims,
        /// Step per dimension.
        strides: Dims,
    },
    /// Reduces over axes.
    Reduce {
        /// The reduction.
        op: ReduceOp,
        /// The axes reduced away.
        axes: Dims,
    },
    /// JAX's general `reduce`: `n` operands of one shape and `n` scalar
    /// initial values (operands first), combined over `axes` by the user's
    /// `computation` (`2n` scalars, accumulators first, to `n`); one result
    /// per operand.
    ReduceWith {
        /// The reducer, a jaxpr of scalars without captured values.
        computation: SubJaxpr,
        /// The axes reduced away.
        axes: Dims,
    },
    /// A window of sizes `slice_sizes` at a runtime start: operands x, then
    /// one scalar integer index per dimension (clamped into range).
    DynamicSlice {
        /// The window's sizes.
        slice_sizes: Dims,
    },
    /// x with `update` written at a runtime start: operands x, update, then
    /// one scalar integer index per dimension (clamped into range).
    DynamicUpdateSlice,
    /// Reinterprets the bits as another dtype (a trailing dim appears or
    /// disappears when the widths differ).
    BitcastConvertType {
        /// The new dtype.
        new_dtype: DType,
    },
    /// Running reduction along an axis.
    Cumulative {
        /// The reduction.
        op: CumulativeOp,
        /// The axis.
        axis: usize,
        /// Whether it runs from the end.
        reverse: bool,
    },
    /// Reduction over sliding windows.
    ReduceWindow {
        /// The reduction.
        op: WindowOp,
        /// Window size per dimension.
        window_dimensions: Dims,
        /// Step per dimension.
        window_strides: Dims,
        /// (low, high) padding per dimension.
        padding: Vec<(i64, i64)>,
        /// Dilation of the operand per dimension.
        base_dilation: Dims,
        /// Dilation of the window per dimension.
        window_dilation: Dims,
    },
    /// The gradient of a max-pool: operands source (window results) and
    /// operand; each source value is added where its window's maximum was.
    SelectAndScatterAdd {
        /// Window size per dimension.
        window_dimensions: Dims,
        /// Step per dimension.
        window_strides: Dims,
        /// (low, high) padding per dimension.
        padding: Vec<(i64, i64)>,
    },
    /// Index of the maximum or minimum along an axis (first on ties, NaN
    /// counting as the maximum).
    ArgMinMax {
        /// Which one.
        op: ArgOp,
        /// The axis reduced.
        axis: usize,
        /// The index dtype.
        index_dtype: DType,
    },
    /// Sorts operands along a dimension by their first `num_keys` operands
    /// (lexicographically; NaN sorts last).
    Sort {
        /// The dimension.
        dimension: usize,
        /// Whether equal keys keep their order.
        is_stable: bool,
        /// How many leading operands are keys.
        num_keys: usize,
    },
    /// The `k` largest elements of the last axis and their indices.
    TopK {
        /// How many.
        k: i64,
    },
    /// N-dimensional convolution with strides, padding, dilations and groups.
    ConvGeneralDilated {
        /// Step per spatial dimension.
        window_strides: Dims,
        /// (low, high) padding per spatial dimension.
        padding: Vec<(i64, i64)>,
        /// Input dilation per spatial dimension.
        lhs_dilation: Dims,
        /// Kernel dilation per spatial dimension.
        rhs_dilation: Dims,
        /// Operand and result layouts.
        dimension_numbers: ConvDimensionNumbers,
        /// Feature groups.
        feature_group_count: i64,
        /// Batch groups.
        batch_group_count: i64,
        /// The result dtype, if not the operands'.
        preferred_element_type: Option<DType>,
    },
    /// Slices of the operand at start indices: operands x and indices
    /// (integer, last dim the index vector).
    Gather {
        /// Dimension numbers.
        dimension_numbers: GatherDimensionNumbers,
        /// The slice's size per operand dim.
        slice_sizes: Dims,
        /// Out-of-bounds handling.
        mode: GatherMode,
        /// The value of out-of-bounds slices in `Fill` mode.
        fill_value: crate::jaxpr::ScalarKey,
    },
    /// Writes or combines updates into the operand at indices: operands x,
    /// indices (integer, last dim the index vector) and updates. Updates
    /// whose window is out of bounds are dropped.
    Scatter {
        /// What an update does.
        op: ScatterOp,
        /// Dimension numbers.
        dimension_numbers: ScatterDimensionNumbers,
    },
    /// Generalized matrix product.
    DotGeneral {
        /// Contracting dimensions of the left operand.
        lhs_contracting: Dims,
        /// Contracting dimensions of the right operand.
        rhs_contracting: Dims,
        /// Batch dimensions of the left operand.
        lhs_batch: Dims,
        /// Batch dimensions of the right operand.
        rhs_batch: Dims,
        /// The result dtype, if not the operands'.
        preferred_element_type: Option<DType>,
        /// Precision of each operand, if set.
        precision: Option<Precision>,
    },
    /// A call of a closed jaxpr: `jit` inside a trace (JAX's `pjit`).
    /// Operands are the jaxpr's inputs (captured values first).
    Call {
        /// The function's body.
        jaxpr: SubJaxpr,
        /// The function's name.
        name: Arc<str>,
    },
    /// A call of a host function from inside the program (`pure_callback`,
    /// `io_callback`, `debug::print`): operands go to the closure as host
    /// arrays, which returns arrays of `results`' types.
    HostCallback {
        /// The closure's id, name, effect and batching.
        callback: crate::callback::HostCallback,
        /// The types of its results.
        results: Vec<crate::aval::Aval>,
    },
    /// A call of a function exported with `jax.export` (JAX's
    /// `call_exported`): operands are the inputs its module keeps; the
    /// module is merged into the program as a private function.
    CallExported {
        /// The exported function.
        function: crate::exported::ExportedFunction,
    },
    /// The identity, whose derivative is zero.
    StopGradient,
    /// The identity on several operands that XLA may not move computations
    /// across or merge computations through (keeps recomputation apart).
    OptimizationBarrier,
    /// The identity that names a value for checkpoint policies
    /// (`checkpoint_name`).
    CheckpointName {
        /// The name.
        name: Arc<str>,
    },
    /// The identity that asks the partitioner to lay its operand out as
    /// `sharding` at this point (`with_sharding_constraint`).
    ShardingConstraint {
        /// The layout.
        sharding: crate::sharding::ShardingDesc,
    },
    /// `shard_map`: `jaxpr` runs on every device of the mesh, on the
    /// device's blocks of the operands (cut as `in_shardings` say), and its
    /// results are the blocks of the outputs (put together as
    /// `out_shardings` say). Every mesh axis is manual inside.
    ShardMap {
        /// The per-device function.
        jaxpr: SubJaxpr,
        /// How each operand is cut into blocks.
        in_shardings: Vec<crate::sharding::ShardingDesc>,
        /// How each result is put together from blocks.
        out_shardings: Vec<crate::sharding::ShardingDesc>,
        /// Whether the body's values carry the mesh axes they vary over
        /// (JAX's `check_vma`): gradients then sum replicated values'
        /// cotangents inside the body, as JAX's do.
        check_vma: bool,
    },
    /// `pvary`: the operand, now typed as varying over `axes` too (no
    /// computation; inside a `shard_map` that checks replication). Its
    /// transpose sums the cotangent over those axes.
    Pvary {
        /// The mesh axes added to the operand's varying axes.
        group: crate::sharding::AxisGroup,
    },
    /// `psum`, `pmax`, `pmin`: the elementwise reduction of the operand
    /// over the devices of each group (inside `shard_map`).
    AllReduce {
        /// Sum, Max or Min.
        op: ReduceOp,
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
    },
    /// `all_gather`: the group's operands stacked (or, `tiled`,
    /// concatenated) along `dim`, in the order of the devices' indices.
    AllGather {
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
        /// Where the gathered dimension goes.
        dim: usize,
        /// Concatenate instead of stacking.
        tiled: bool,
        /// JAX's `all_gather_invariant`: the result is replicated over the
        /// group's axes (each device holds the same gathered value), and
        /// its transpose is each device's own slice of the cotangent, not
        /// `psum_scatter`.
        invariant: bool,
    },
    /// `psum_scatter`: the sum over the group, of which each device keeps
    /// its own block along `dim` (with `tiled`; else `dim` has the group's
    /// size and is removed).
    ReduceScatter {
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
        /// The scattered dimension.
        dim: usize,
        /// Keep the dimension (as a block) instead of removing it.
        tiled: bool,
    },
    /// `all_to_all`: each device splits `split_dim` into one block per
    /// group member, sends block `j` to member `j`, and concatenates what it
    /// receives along `concat_dim`.
    AllToAll {
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
        /// The dimension split and sent.
        split_dim: usize,
        /// The dimension received blocks are concatenated along.
        concat_dim: usize,
    },
    /// `ppermute`: device with index `src` along the group sends its
    /// operand to the device with index `dst`, for each `(src, dst)`;
    /// devices nobody sends to get zeros.
    Ppermute {
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
        /// `(source, destination)` indices within a group.
        perm: Vec<(usize, usize)>,
    },
    /// `axis_index`: this device's index along the group's axes (int32).
    AxisIndex {
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
    },
    /// A checkpointed (rematerialized) call: reverse mode keeps only what
    /// the policy allows and recomputes the rest.
    Remat {
        /// The function's body.
        jaxpr: SubJaxpr,
        /// What may be kept.
        policy: RematPolicy,
        /// Whether recomputation is fenced by an optimization barrier.
        prevent_cse: bool,
    },
    /// A call of a function with a user-defined jvp rule.
    CustomJvpCall {
        /// The function's body.
        jaxpr: SubJaxpr,
        /// The user's jvp rule.
        rule: OpaqueRule,
    },
    /// A call of a function with user-defined forward and backward rules.
    CustomVjpCall {
        /// The function's body.
        jaxpr: SubJaxpr,
        /// The user's fwd and bwd rules.
        rule: OpaqueRule,
    },
    /// `branches[index](operands)`: operand 0 is the branch index (an i32
    /// scalar, already clamped into range), the others every branch's
    /// inputs (JAX's `cond`).
    Cond {
        /// One closed jaxpr per branch, all with the same types.
        branches: Vec<SubJaxpr>,
    },
    /// `while cond(carry): carry = body(carry)`: operands are the cond
    /// jaxpr's captured values, the body's, then the initial carry.
    While {
        /// The predicate: (cond consts, carry) → bool scalar.
        cond_jaxpr: SubJaxpr,
        /// The step: (body consts, carry) → carry.
        body_jaxpr: SubJaxpr,
        /// How many leading operands are the cond jaxpr's captured values.
        cond_nconsts: usize,
        /// How many operands after those are the body's captured values.
        body_nconsts: usize,
    },
    /// A loop over the leading axis of `xs` (JAX's `scan`): operands are
    /// consts, the initial carry, then xs; results are the final carry,
    /// then the per-iteration ys stacked along a new leading axis.
    Scan {
        /// The step: (consts, carry, x slices) → (carry, y slices).
        jaxpr: SubJaxpr,
        /// How many leading operands are constants.
        num_consts: usize,
        /// How many operands after those are carried.
        num_carry: usize,
        /// The number of iterations.
        length: i64,
        /// Whether it runs from the last slice to the first.
        reverse: bool,
        /// How many iterations one step of the compiled loop runs.
        unroll: i64,
    },
    /// The linear part of a `custom_vjp` function in reverse mode: operands
    /// are the residuals of its fwd rule, then the input tangents. It is
    /// only ever transposed (through the bwd rule), never run.
    CustomLin {
        /// The user's fwd and bwd rules.
        rule: OpaqueRule,
        /// How many leading operands are residuals.
        num_residuals: usize,
        /// The output tangents' types.
        out_avals: Vec<crate::aval::Aval>,
    },
}

impl Primitive {
    /// Whether an equation of this primitive is an effect the program must
    /// keep even when nothing reads its results: an effectful host callback
    /// (`io_callback`, `debug::print`), or a primitive whose jaxprs (a
    /// loop's body, a branch) hold one.
    pub fn is_effectful(&self) -> bool {
        if let Primitive::HostCallback { callback, .. } = self {
            return callback.effectful;
        }
        let mut found = false;
        self.params(0, &mut |jaxpr, _| {
            found |= jaxpr.is_effectful();
            String::new()
        });
        found
    }

    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Primitive::Unary(op) => op.name(),
            Primitive::Binary(op) => op.name(),
            Primitive::Compare(c) => c.name(),
            Primitive::IntegerPow { .. } => "integer_pow",
            Primitive::SelectN => "select_n",
            Primitive::Clamp => "clamp",
            Primitive::ConvertElementType { .. } => "convert_element_type",
            Primitive::Iota { .. } => "iota",
            Primitive::BroadcastInDim { .. } => "broadcast_in_dim",
            Primitive::Reshape { .. } => "reshape",
            Primitive::Transpose { .. } => "transpose",
            Primitive::Squeeze { .. } => "squeeze",
            Primitive::Rev { .. } => "rev",
            Primitive::Concatenate { .. } => "concatenate",
            Primitive::Split { .. } => "split",
            Primitive::Pad { .. } => "pad",
            Primitive::Slice { .. } => "slice",
            Primitive::Reduce { op, .. } => op.name(),
            Primitive::ReduceWith { .. } => "reduce",
            Primitive::DynamicSlice { .. } => "dynamic_slice",
            Primitive::DynamicUpdateSlice => "dynamic_update_slice",
            Primitive::BitcastConvertType { .. } => "bitcast_convert_type",
            Primitive::Cumulative { op, .. } => op.name(),
            Primitive::ReduceWindow {
                op: WindowOp::Sum, ..
            } => "reduce_window_sum",
            Primitive::ReduceWindow {
                op: WindowOp::Max, ..
            } => "reduce_window_max",
            Primitive::ReduceWindow {
                op: WindowOp::Min, ..
            } => "reduce_window_min",
            Primitive::SelectAndScatterAdd { .. } => "select_and_scatter_add",
            Primitive::ArgMinMax { op: ArgOp::Max, .. } => "argmax",
            Primitive::ArgMinMax { op: ArgOp::Min, .. } => "argmin",
            Primitive::Sort { .. } => "sort",
            Primitive::TopK { .. } => "top_k",
            Primitive::ConvGeneralDilated { .. } => "conv_general_dilated",
            Primitive::Gather { .. } => "gather",
            Primitive::Scatter {
                op: ScatterOp::Set, ..
            } => "scatter",
            Primitive::Scatter {
                op: ScatterOp::Add, ..
            } => "scatter-add",
            Primitive::Scatter {
                op: ScatterOp::Mul, ..
            } => "scatter-mul",
            Primitive::Scatter {
                op: ScatterOp::Min, ..
            } => "scatter-min",
            Primitive::Scatter {
                op: ScatterOp::Max, ..
            } => "scatter-max",
            Primitive::DotGeneral { .. } => "dot_general",
            Primitive::Call { .. } => "pjit",
            Primitive::CallExported { .. } => "call_exported",
            Primitive::HostCallback { callback, .. } => {
                if callback.effectful {
                    "io_callback"
                } else {
                    "pure_callback"
                }
            }
            Primitive::StopGradient => "stop_gradient",
            Primitive::OptimizationBarrier => "optimization_barrier",
            Primitive::CheckpointName { .. } => "name",
            Primitive::ShardingConstraint { .. } => "sharding_constraint",
            Primitive::ShardMap { .. } => "shard_map",
            Primitive::Pvary { .. } => "pvary",
            Primitive::AllReduce {
                op: ReduceOp::Max, ..
            } => "pmax",
            Primitive::AllReduce {
                op: ReduceOp::Min, ..
            } => "pmin",
            Primitive::AllReduce { .. } => "psum",
            Primitive::AllGather {
                invariant: false, ..
            } => "all_gather",
            Primitive::AllGather {
                invariant: true, ..
            } => "all_gather_invariant",
            Primitive::ReduceScatter { .. } => "reduce_scatter",
            Primitive::AllToAll { .. } => "all_to_all",
            Primitive::Ppermute { .. } => "ppermute",
            Primitive::AxisIndex { .. } => "axis_index",
            Primitive::Remat { .. } => "checkpoint",
            Primitive::CustomJvpCall { .. } => "custom_jvp_call",
            Primitive::CustomVjpCall { .. } => "custom_vjp_call",
            Primitive::CustomLin { .. } => "custom_lin",
            Primitive::Cond { .. } => "cond",
            Primitive::While { .. } => "while",
            Primitive::Scan { .. } => "scan",
        }
    }

    /// The jaxpr a call-like primitive carries.
    pub fn sub_jaxpr(&self) -> Option<&SubJaxpr> {
        match self {
            Primitive::Call { jaxpr, .. }
            | Primitive::Remat { jaxpr, .. }
            | Primitive::CustomJvpCall { jaxpr, .. }
            | Primitive::CustomVjpCall { jaxpr, .. } => Some(jaxpr),
            _ => None,
        }
    }

    /// The named axes a collective runs over (`None` for other primitives).
    pub fn axis_group(&self) -> Option<&crate::sharding::AxisGroup> {
        match self {
            Primitive::AllReduce { group, .. }
            | Primitive::AllGather { group, .. }
            | Primitive::ReduceScatter { group, .. }
            | Primitive::AllToAll { group, .. }
            | Primitive::Ppermute { group, .. }
            | Primitive::AxisIndex { group }
            | Primitive::Pvary { group } => Some(group),
            _ => None,
        }
    }

    /// The parameters as jaxprs print them (`[axes=(0,)]`), empty if none.
    pub fn params_string(&self) -> String {
        let params = self.params(0, &mut |j, _| indent(&j.to_string()));
        if params.is_empty() {
            String::new()
        } else {
            format!("[{}]", params.join(" "))
        }
    }

    /// Whether the primitive carries jaxprs (printed on lines of their own).
    pub fn has_nested_jaxprs(&self) -> bool {
        let mut found = false;
        self.params(0, &mut |_, _| {
            found = true;
            String::new()
        });
        found
    }

    /// The parameters as jaxprs print them (`axes=(0,)`), nested jaxprs
    /// formatted by `nested(jaxpr, column)`, `column` being where the
    /// parameter starts (`pad`, or deeper inside a list of branches).
    pub fn params(
        &self,
        pad: usize,
        nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        let tuple = |d: &[i64]| match d.len() {
            1 => format!("({},)", d[0]),
            _ => format!(
                "({})",
                d.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            ),
        };
        let list = |d: &[i64]| {
            format!(
                "[{}]",
                d.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            )
        };
        let params: Vec<String> = match self {
            Primitive::Unary(_)
            | Primitive::Binary(_)
            | Primitive::Compare(_)
            | Primitive::SelectN
            | Primitive::Clamp
            | Primitive::DynamicUpdateSlice
            | Primitive::StopGradient
            | Primitive::OptimizationBarrier => vec![],
            Primitive::Call { jaxpr, name } => vec![
                format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("name={name}"),
            ],
            Primitive::CheckpointName { name } => vec![format!("name={name}")],
            Primitive::ShardingConstraint { sharding } => vec![format!("sharding={sharding}")],
            Primitive::Pvary { group } => {
                let names: Vec<String> = group.axes.iter().map(|a| format!("'{a}'")).collect();
                vec![format!("axes=({},)", names.join(", "))]
            }
            Primitive::ShardMap {
                jaxpr,
                in_shardings,
                out_shardings,
                check_vma,
            } => {
                let specs = |s: &[crate::sharding::ShardingDesc]| {
                    let texts: Vec<String> = s.iter().map(|d| d.spec_text()).collect();
                    format!("({},)", texts.join(", "))
                };
                vec![
                    format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                    format!(
                        "mesh={}",
                        in_shardings
                            .first()
                            .or(out_shardings.first())
                            .map(|s| s.mesh.to_string())
                            .unwrap_or_default()
                    ),
                    format!("in_specs={}", specs(in_shardings)),
                    format!("out_specs={}", specs(out_shardings)),
                    format!("check_vma={}", if *check_vma { "True" } else { "False" }),
                ]
            }
            Primitive::AllReduce { group, .. } => vec![
                format!(
                    "axes=({}{})",
                    group
                        .axes
                        .iter()
                        .map(|a| format!("'{a}'"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if group.axes.len() == 1 { "," } else { "" }
                ),
                format!("axis_index_groups={}", group.index_groups_text()),
            ],
            Primitive::AllGather {
                group,
                dim,
                tiled,
                invariant,
            } => [
                Some(format!("all_gather_dimension={dim}")),
                (!invariant).then(|| format!("axis_index_groups={}", group.index_groups_text())),
                Some(format!("axis_name={}", group.names())),
                Some(format!("axis_size={}", group.size())),
                Some(format!("tiled={}", if *tiled { "True" } else { "False" })),
            ]
            .into_iter()
            .flatten()
            .collect(),
            Primitive::ReduceScatter { group, dim, tiled } => vec![
                format!("axis_name={}", group.names()),
                format!("scatter_dimension={dim}"),
                format!("tiled={}", if *tiled { "True" } else { "False" }),
            ],
            Primitive::AllToAll {
                group,
                split_dim,
                concat_dim,
            } => vec![
                format!("axis_name={}", group.names()),
                format!("concat_axis={concat_dim}"),
                format!("split_axis={split_dim}"),
            ],
            Primitive::Ppermute { group, perm } => vec![
                format!("axis_name={}", group.names()),
                format!(
                    "perm=({})",
                    perm.iter()
                        .map(|(a, b)| format!("({a}, {b})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ],
            Primitive::AxisIndex { group } => vec![format!("axis_name={}", group.names())],
            Primitive::Remat {
                jaxpr,
                policy,
                prevent_cse,
            } => vec![
                format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("policy={}", policy.name()),
                format!(
                    "prevent_cse={}",
                    if *prevent_cse { "True" } else { "False" }
                ),
            ],
            Primitive::CallExported { function } => vec![format!("name={}", function.name())],
            Primitive::HostCallback { callback, .. } => vec![format!("callback={callback}")],
            Primitive::CustomJvpCall { jaxpr, rule } => vec![
                format!("call_jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("jvp={}", rule.name()),
            ],
            Primitive::CustomVjpCall { jaxpr, rule } => vec![
                format!("call_jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("fwd_bwd={}", rule.name()),
            ],
            Primitive::CustomLin {
                rule,
                num_residuals,
                ..
            } => vec![
                format!("bwd={}", rule.name()),
                format!("num_res={num_residuals}"),
            ],
            Primitive::Cond { branches } => vec![format!(
                "branches=(\n{}\n{})",
                branches
                    .iter()
                    .map(|b| format!("{}{}", " ".repeat(pad + 2), nested(b.jaxpr(), pad + 2)))
                    .collect::<Vec<_>>()
                    .join("\n"),
                " ".repeat(pad)
            )],
            Primitive::While {
                cond_jaxpr,
                body_jaxpr,
                cond_nconsts,
                body_nconsts,
            } => vec![
                format!("body_jaxpr={}", nested(body_jaxpr.jaxpr(), pad)),
                format!("body_nconsts={body_nconsts}"),
                format!("cond_jaxpr={}", nested(cond_jaxpr.jaxpr(), pad)),
                format!("cond_nconsts={cond_nconsts}"),
            ],
            Primitive::Scan {
                jaxpr,
                num_consts,
                num_carry,
                length,
                reverse,
                unroll,
            } => vec![
                format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("length={length}"),
                format!("num_carry={num_carry}"),
                format!("num_consts={num_consts}"),
                format!("reverse={}", if *reverse { "True" } else { "False" }),
                format!("unroll={unroll}"),
            ],
            Primitive::DynamicSlice { slice_sizes } => {
                vec![format!("slice_sizes={}", tuple(slice_sizes))]
            }
            Primitive::BitcastConvertType { new_dtype } => {
                vec![format!("new_dtype={}", new_dtype.numpy_name())]
            }
            Primitive::Cumulative { axis, reverse, .. } => vec![
                format!("axis={axis}"),
                format!("reverse={}", if *reverse { "True" } else { "False" }),
            ],
            Primitive::ReduceWindow {
                window_dimensions,
                window_strides,
                padding,
                base_dilation,
                window_dilation,
                ..
            } => vec![
                format!("base_dilation={}", tuple(base_dilation)),
                format!(
                    "padding=({})",
                    padding
                        .iter()
                        .map(|(l, h)| format!("({l}, {h})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!("window_dilation={}", tuple(window_dilation)),
                format!("window_dimensions={}", tuple(window_dimensions)),
                format!("window_strides={}", tuple(window_strides)),
            ],
            Primitive::SelectAndScatterAdd {
                window_dimensions,
                window_strides,
                padding,
            } => vec![
                format!(
                    "padding=({})",
                    padding
                        .iter()
                        .map(|(l, h)| format!("({l}, {h})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "select_prim=ge".into(),
                format!("window_dimensions={}", tuple(window_dimensions)),
                format!("window_strides={}", tuple(window_strides)),
            ],
            Primitive::ArgMinMax {
                axis, index_dtype, ..
            } => vec![
                format!("axes=({axis},)"),
                format!("index_dtype={}", index_dtype.numpy_name()),
            ],
            Primitive::Sort {
                dimension,
                is_stable,
                num_keys,
            } => vec![
                format!("dimension={dimension}"),
                format!("is_stable={}", if *is_stable { "True" } else { "False" }),
                format!("num_keys={num_keys}"),
            ],
            Primitive::TopK { k } => vec![format!("k={k}")],
            Primitive::Gather {
                dimension_numbers: d,
                slice_sizes,
                mode,
                fill_value,
            } => vec![
                format!(
                    "dimension_numbers=GatherDimensionNumbers(offset_dims={}, collapsed_slice_dims={}, start_index_map={}, operand_batching_dims=(), start_indices_batching_dims=())",
                    tuple(&d.offset_dims),
                    tuple(&d.collapsed_slice_dims),
                    tuple(&d.start_index_map)
                ),
                format!(
                    "fill_value={}",
                    match mode {
                        GatherMode::Fill => fill_value.to_string(),
                        GatherMode::Clip | GatherMode::PromiseInBounds => "None".into(),
                    }
                ),
                "indices_are_sorted=False".into(),
                format!(
                    "mode=GatherScatterMode.{}",
                    match mode {
                        GatherMode::Clip => "CLIP",
                        GatherMode::Fill => "FILL_OR_DROP",
                        GatherMode::PromiseInBounds => "PROMISE_IN_BOUNDS",
                    }
                ),
                format!("slice_sizes={}", tuple(slice_sizes)),
                "unique_indices=False".into(),
            ],
            Primitive::Scatter {
                dimension_numbers: d,
                ..
            } => vec![
                format!(
                    "dimension_numbers=ScatterDimensionNumbers(update_window_dims={}, inserted_window_dims={}, scatter_dims_to_operand_dims={}, operand_batching_dims=(), scatter_indices_batching_dims=())",
                    tuple(&d.update_window_dims),
                    tuple(&d.inserted_window_dims),
                    tuple(&d.scatter_dims_to_operand_dims)
                ),
                "indices_are_sorted=False".into(),
                "mode=GatherScatterMode.FILL_OR_DROP".into(),
                "unique_indices=False".into(),
            ],
            Primitive::ConvGeneralDilated {
                window_strides,
                padding,
                lhs_dilation,
                rhs_dilation,
                dimension_numbers,
                feature_group_count,
                batch_group_count,
                preferred_element_type,
            } => vec![
                format!("batch_group_count={batch_group_count}"),
                format!(
                    "dimension_numbers=ConvDimensionNumbers(lhs_spec={}, rhs_spec={}, out_spec={})",
                    tuple(&dimension_numbers.lhs_spec),
                    tuple(&dimension_numbers.rhs_spec),
                    tuple(&dimension_numbers.out_spec)
                ),
                format!("feature_group_count={feature_group_count}"),
                format!("lhs_dilation={}", tuple(lhs_dilation)),
                format!(
                    "padding=({})",
                    padding
                        .iter()
                        .map(|(l, h)| format!("({l}, {h})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!(
                    "preferred_element_type={}",
                    preferred_element_type.map_or("None", |d| d.numpy_name())
                ),
                format!("rhs_dilation={}", tuple(rhs_dilation)),
                format!("window_strides={}", tuple(window_strides)),
            ],
            Primitive::IntegerPow { y } => vec![format!("y={y}")],
            Primitive::ConvertElementType {
                new_dtype,
                weak_type,
            } => vec![
                format!("new_dtype={}", new_dtype.numpy_name()),
                format!("weak_type={}", if *weak_type { "True" } else { "False" }),
            ],
            Primitive::Iota {
                dtype,
                shape,
                dimension,
            } => vec![
                format!("dimension={dimension}"),
                format!("dtype={}", dtype.numpy_name()),
                "sharding=None".into(),
                format!("shape={}", tuple(shape)),
            ],
            // JAX prints only the dims (the shape is the result's), and
            // nothing when a scalar is broadcast.
            Primitive::BroadcastInDim {
                broadcast_dimensions,
                ..
            } if broadcast_dimensions.is_empty() => Vec::new(),
            Primitive::BroadcastInDim {
                broadcast_dimensions,
                ..
            } => vec![format!(
                "broadcast_dimensions={}",
                tuple(broadcast_dimensions)
            )],
            Primitive::Reshape { new_sizes } => vec![
                "dimensions=None".into(),
                format!("new_sizes={}", tuple(new_sizes)),
                "sharding=None".into(),
            ],
            Primitive::Transpose { permutation } => {
                vec![format!("permutation={}", tuple(permutation))]
            }
            Primitive::Squeeze { dimensions } | Primitive::Rev { dimensions } => {
                vec![format!("dimensions={}", tuple(dimensions))]
            }
            Primitive::Concatenate { dimension } => vec![format!("dimension={dimension}")],
            Primitive::Split { axis, sizes } => {
                vec![format!("axis={axis}"), format!("sizes={}", tuple(sizes))]
            }
            Primitive::Pad { config } => vec![format!(
                "padding_config=({})",
                config
                    .iter()
                    .map(|(l, h, i)| format!("({l}, {h}, {i})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )],
            Primitive::Slice {
                start_indices,
                limit_indices,
                strides,
            } => vec![
                format!("limit_indices={}", tuple(limit_indices)),
                format!("start_indices={}", tuple(start_indices)),
                format!(
                    "strides={}",
                    if strides.iter().all(|&s| s == 1) {
                        "None".to_string()
                    } else {
                        tuple(strides)
                    }
                ),
            ],
            Primitive::Reduce {
                op: ReduceOp::Sum,
                axes,
            } => {
                vec![format!("axes={}", tuple(axes)), "out_sharding=None".into()]
            }
            Primitive::Reduce { axes, .. } => vec![format!("axes={}", tuple(axes))],
            Primitive::ReduceWith { computation, axes } => vec![
                format!("dimensions={}", tuple(axes)),
                format!("jaxpr={}", nested(computation.jaxpr(), pad)),
            ],
            Primitive::DotGeneral {
                lhs_contracting,
                rhs_contracting,
                lhs_batch,
                rhs_batch,
                preferred_element_type,
                precision,
            } => {
                let mut params = vec![format!(
                    "dimension_numbers=(({}, {}), ({}, {}))",
                    list(lhs_contracting),
                    list(rhs_contracting),
                    list(lhs_batch),
                    list(rhs_batch)
                )];
                // JAX prints the precision only when one is set.
                if let Some(p) = precision {
                    params.push(format!(
                        "precision=(Precision.{0}, Precision.{0})",
                        p.name()
                    ));
                }
                params.push(format!(
                    "preferred_element_type={}",
                    preferred_element_type.map_or("None", |d| d.numpy_name())
                ));
                params
            }
        };
        params
    }
}

/// A nested jaxpr's text indented under its equation.
fn indent(text: &str) -> String {
    text.replace('\n', "\n    ")
}

impl fmt::Display for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.name(), self.params_string())
    }
}
