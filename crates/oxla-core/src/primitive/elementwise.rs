//! Elementwise primitives: arithmetic, comparisons, selection and
//! element-type conversion (JAX's `jax/_src/lax/lax.py`).

use super::print;
use crate::aval::{Aval, Dims};
use crate::dtype::DType;
use crate::shape_rules::{RuleResult, ShapeError, expect_arity, expect_class};

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
    /// Round half to even (JAX's `RoundingMethod.TO_NEAREST_EVEN`, what
    /// `jnp.round` and `jnp.rint` use).
    RoundNearestEven,
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
    /// The real part of a complex number.
    Real,
    /// The imaginary part of a complex number.
    Imag,
    /// The complex conjugate.
    Conj,
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
            Round | RoundNearestEven => "round",
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
            Real => "real",
            Imag => "imag",
            Conj => "conj",
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
            Exp | Exp2 | Expm1 | Log | Log1p | Sqrt | Rsqrt | Tanh | Logistic | Sin | Cos | Tan
            | Asin | Acos | Atan | Sinh | Cosh | Asinh | Acosh | Atanh => TypeClass::Inexact,
            Floor | Ceil | Round | RoundNearestEven | Cbrt | Erf | Erfc | ErfInv | Lgamma
            | Digamma | IsFinite | BesselI0e | BesselI1e => TypeClass::Float,
            Real | Imag | Conj => TypeClass::Complex,
        }
    }

    /// The result dtype on an operand of `dtype`: a complex number's part
    /// type for `real`, `imag` and complex `abs`, bool for `is_finite`,
    /// else the operand's.
    pub fn result_dtype(self, dtype: DType) -> DType {
        use UnaryOp::*;
        match self {
            Real | Imag | Abs => dtype.real_part(),
            IsFinite => DType::Bool,
            Neg | Sign | Floor | Ceil | Round | RoundNearestEven | Exp | Exp2 | Expm1 | Log
            | Log1p | Sqrt | Rsqrt | Cbrt | Tanh | Logistic | Sin | Cos | Tan | Asin | Acos
            | Atan | Sinh | Cosh | Asinh | Acosh | Atanh | Erf | Erfc | ErfInv | Lgamma
            | Digamma | Square | Not | PopulationCount | CountLeadingZeros | BesselI0e
            | BesselI1e | Conj => dtype,
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
    /// The Hurwitz zeta function ζ(x, q) = Σₖ (k + q)⁻ˣ.
    Zeta,
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
    /// x + iy: a complex number from its real and imaginary parts.
    Complex,
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
            Zeta => "zeta",
            And => "and",
            Or => "or",
            Xor => "xor",
            ShiftLeft => "shift_left",
            ShiftRightLogical => "shift_right_logical",
            ShiftRightArithmetic => "shift_right_arithmetic",
            Complex => "complex",
        }
    }

    /// Which operand types the op accepts.
    pub fn accepts(self) -> TypeClass {
        use BinaryOp::*;
        match self {
            Add | Sub | Mul | Div => TypeClass::Numeric,
            Rem => TypeClass::Real,
            Max | Min => TypeClass::Any,
            Pow => TypeClass::Inexact,
            Atan2 | NextAfter | Polygamma | Zeta => TypeClass::Float,
            Complex => TypeClass::ComplexPart,
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
    /// Integers, floats and complex numbers (not bool).
    Numeric,
    /// Integers and floats (not bool, not complex).
    Real,
    /// Signed integers, floats and complex numbers.
    Signed,
    /// Floats only.
    Float,
    /// Floats and complex numbers.
    Inexact,
    /// Complex numbers only.
    Complex,
    /// The types a complex number's parts can have: f32 and f64.
    ComplexPart,
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
            TypeClass::Real => dtype.is_int() || dtype.is_float(),
            TypeClass::Signed => dtype.is_inexact() || dtype.is_signed_int(),
            TypeClass::Float => dtype.is_float(),
            TypeClass::Inexact => dtype.is_inexact(),
            TypeClass::Complex => dtype.is_complex(),
            TypeClass::ComplexPart => matches!(dtype, DType::F32 | DType::F64),
            TypeClass::Int => dtype.is_int(),
            TypeClass::BoolOrInt => dtype == DType::Bool || dtype.is_int(),
        }
    }

    /// How the class is described in errors.
    pub fn describe(self) -> &'static str {
        match self {
            TypeClass::Any => "any type",
            TypeClass::Numeric => "a numeric type",
            TypeClass::Real => "an integer or floating-point type",
            TypeClass::Signed => "a signed integer, floating-point or complex type",
            TypeClass::Float => "a floating-point type",
            TypeClass::Inexact => "a floating-point or complex type",
            TypeClass::Complex => "a complex type",
            TypeClass::ComplexPart => "float32 or float64",
            TypeClass::Int => "an integer type",
            TypeClass::BoolOrInt => "bool or an integer type",
        }
    }
}
/// An elementwise primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
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
    /// Reinterprets the bits as another dtype (a trailing dim appears or
    /// disappears when the widths differ).
    BitcastConvertType {
        /// The new dtype.
        new_dtype: DType,
    },
    /// Rounds floats to the precision of a narrower float format (its
    /// exponent and mantissa widths), keeping the dtype.
    ReducePrecision {
        /// The exponent bits of the format rounded to.
        exponent_bits: i32,
        /// The mantissa bits of the format rounded to.
        mantissa_bits: i32,
    },
}

impl Op {
    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Unary(op) => op.name(),
            Op::Binary(op) => op.name(),
            Op::Compare(c) => c.name(),
            Op::IntegerPow { .. } => "integer_pow",
            Op::SelectN => "select_n",
            Op::Clamp => "clamp",
            Op::ConvertElementType { .. } => "convert_element_type",
            Op::BitcastConvertType { .. } => "bitcast_convert_type",
            Op::ReducePrecision { .. } => "reduce_precision",
        }
    }

    /// The parameters as jaxprs print them, nested jaxprs formatted by
    /// `nested(jaxpr, column)` (see [`Primitive::params`](super::Primitive::params)).
    pub fn params(
        &self,
        _pad: usize,
        _nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        match self {
            // JAX prints the rounding method of `round` (0: half away from
            // zero, 1: half to even).
            Op::Unary(UnaryOp::Round) => vec!["rounding_method=0".into()],
            Op::Unary(UnaryOp::RoundNearestEven) => vec!["rounding_method=1".into()],
            Op::Unary(_) | Op::Binary(_) | Op::Compare(_) | Op::SelectN | Op::Clamp => vec![],
            Op::BitcastConvertType { new_dtype } => {
                vec![format!("new_dtype={}", new_dtype.numpy_name())]
            }
            Op::IntegerPow { y } => vec![format!("y={y}")],
            Op::ReducePrecision {
                exponent_bits,
                mantissa_bits,
            } => vec![
                format!("exponent_bits={exponent_bits}"),
                format!("mantissa_bits={mantissa_bits}"),
            ],
            Op::ConvertElementType {
                new_dtype,
                weak_type,
            } => vec![
                format!("new_dtype={}", new_dtype.numpy_name()),
                format!("weak_type={}", print::py_bool(*weak_type)),
            ],
        }
    }
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::Unary(op) => {
            expect_arity(inputs, 1)?;
            expect_class(op.accepts(), inputs[0])?;
            // The operand's type, weak or not, unless the op changes the
            // dtype (to a bool or a complex number's part type).
            let dtype = op.result_dtype(inputs[0].dtype);
            Ok(vec![if dtype == inputs[0].dtype {
                inputs[0].clone()
            } else {
                inputs[0].with_dtype(dtype)
            }])
        }
        Op::Binary(op) => {
            expect_arity(inputs, 2)?;
            let shape = broadcast_shapes(inputs[0], inputs[1])?;
            expect_class(op.accepts(), inputs[0])?;
            let mut out = inputs[0].with_shape(&shape);
            if *op == BinaryOp::Complex {
                out.dtype = out.dtype.complex_of().unwrap_or(out.dtype);
            }
            out.weak_type = inputs[0].weak_type && inputs[1].weak_type;
            if matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor)
                && out.dtype == DType::Bool
            {
                out.weak_type = false;
            }
            Ok(vec![out])
        }
        Op::Compare(_) => {
            expect_arity(inputs, 2)?;
            let shape = broadcast_shapes(inputs[0], inputs[1])?;
            Ok(vec![Aval::new(DType::Bool, &shape)])
        }
        Op::IntegerPow { .. } => {
            expect_arity(inputs, 1)?;
            expect_class(TypeClass::Numeric, inputs[0])?;
            Ok(vec![inputs[0].clone()])
        }
        Op::ReducePrecision {
            exponent_bits,
            mantissa_bits,
        } => {
            expect_arity(inputs, 1)?;
            expect_class(TypeClass::Float, inputs[0])?;
            if *exponent_bits < 1 || *mantissa_bits < 0 {
                return Err(ShapeError::Invalid(format!(
                    "needs exponent_bits >= 1 and mantissa_bits >= 0, got {exponent_bits} and \
                     {mantissa_bits}"
                )));
            }
            Ok(vec![inputs[0].clone()])
        }
        Op::SelectN => {
            if inputs.len() < 2 {
                return Err(ShapeError::Invalid(format!(
                    "takes a selector and at least one case, got {} operand(s)",
                    inputs.len()
                )));
            }
            let (which, cases) = (inputs[0], &inputs[1..]);
            match which.dtype {
                DType::Bool if cases.len() > 2 => {
                    return Err(ShapeError::Invalid(format!(
                        "a bool selector picks from at most 2 cases, got {}",
                        cases.len()
                    )));
                }
                DType::Bool | DType::I32 => {}
                other => {
                    return Err(ShapeError::Invalid(format!(
                        "the selector must be bool or i32, got {other}"
                    )));
                }
            }
            for case in &cases[1..] {
                expect_same(cases[0], case)?;
            }
            if which.rank() != 0 && which.shape != cases[0].shape {
                return Err(ShapeError::Invalid(format!(
                    "the selector {which} must be a scalar or have the cases' shape {}",
                    cases[0]
                )));
            }
            let mut out = cases[0].clone();
            out.weak_type = cases.iter().all(|c| c.weak_type);
            Ok(vec![out])
        }
        Op::Clamp => {
            expect_arity(inputs, 3)?;
            let (lo, x, hi) = (inputs[0], inputs[1], inputs[2]);
            for bound in [lo, hi] {
                if bound.dtype != x.dtype {
                    return Err(ShapeError::Invalid(format!(
                        "bounds must have the operand's dtype {}, got {}",
                        x.dtype, bound.dtype
                    )));
                }
                if bound.rank() != 0 && bound.shape != x.shape {
                    return Err(ShapeError::Invalid(format!(
                        "bound {bound} must be a scalar or have the operand's shape {x}"
                    )));
                }
            }
            Ok(vec![x.clone()])
        }
        Op::ConvertElementType {
            new_dtype,
            weak_type,
        } => {
            expect_arity(inputs, 1)?;
            let mut out = inputs[0].with_dtype(*new_dtype);
            out.weak_type = *weak_type;
            Ok(vec![out])
        }
        Op::BitcastConvertType { new_dtype } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let (from, to) = (x.dtype.byte_size() as i64, new_dtype.byte_size() as i64);
            let mut shape = x.shape.clone();
            if from > to {
                shape.push(from / to);
            } else if from < to {
                if shape.last() != Some(&(to / from)) {
                    return Err(ShapeError::Invalid(format!(
                        "bitcasting {x} to {new_dtype} needs a last dimension of size {}",
                        to / from
                    )));
                }
                shape.pop();
            }
            if (x.dtype == DType::Bool) != (*new_dtype == DType::Bool) {
                return Err(ShapeError::Invalid(
                    "bool cannot be bitcast to or from other types".into(),
                ));
            }
            Ok(vec![Aval::new(*new_dtype, &shape)])
        }
    }
}

fn expect_same(a: &Aval, b: &Aval) -> RuleResult<()> {
    if a.dtype != b.dtype {
        return Err(ShapeError::Invalid(format!(
            "operands must have the same dtype, got {} and {}",
            a.dtype, b.dtype
        )));
    }
    if a.shape != b.shape {
        return Err(ShapeError::Invalid(format!(
            "operands must have the same shape, got {a} and {b}"
        )));
    }
    Ok(())
}

/// The shape two operands of an elementwise op broadcast to: equal ranks
/// whose dims are equal or 1, or a rank-0 operand (as `lax.add` accepts).
pub fn broadcast_shapes(a: &Aval, b: &Aval) -> RuleResult<Dims> {
    if a.dtype != b.dtype {
        return Err(ShapeError::Invalid(format!(
            "operands must have the same dtype, got {} and {}",
            a.dtype, b.dtype
        )));
    }
    if a.rank() == 0 {
        return Ok(b.shape.clone());
    }
    if b.rank() == 0 {
        return Ok(a.shape.clone());
    }
    if a.rank() != b.rank() {
        return Err(ShapeError::Invalid(format!(
            "operands must have the same rank, got {a} and {b}"
        )));
    }
    a.shape
        .iter()
        .zip(&b.shape)
        .map(|(&x, &y)| match (x, y) {
            (x, y) if x == y => Ok(x),
            (1, y) => Ok(y),
            (x, 1) => Ok(x),
            _ => Err(ShapeError::Invalid(format!(
                "operands have incompatible shapes {a} and {b}"
            ))),
        })
        .collect()
}

/// The sharding rule (see [`crate::sharding_rules`]): the result is split
/// as the broadcast operands agree; a bitcast that adds a trailing
/// dimension leaves it unsplit, and one that removes it needs it unsplit.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
    outs: &[Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    use crate::sharding_rules::{broadcast_spec, require_unsplit};
    match op {
        Op::Unary(_)
        | Op::Binary(_)
        | Op::Compare(_)
        | Op::IntegerPow { .. }
        | Op::ReducePrecision { .. }
        | Op::SelectN
        | Op::Clamp
        | Op::ConvertElementType { .. } => Ok(vec![broadcast_spec(inputs, &outs[0])?]),
        Op::BitcastConvertType { .. } => {
            let mut spec = inputs[0].dim_axes();
            let out_rank = outs[0].rank();
            if out_rank < spec.len() {
                require_unsplit(inputs[0], out_rank, "the bitcast merges it into elements")?;
            }
            spec.resize(out_rank, std::sync::Arc::from([]));
            Ok(vec![spec])
        }
    }
}
