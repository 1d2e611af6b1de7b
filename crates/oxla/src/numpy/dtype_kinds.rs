//! `jnp.isdtype` and `jnp.issubdtype`: whether a dtype belongs to one of
//! NumPy's kinds (`'real floating'`) or abstract classes (`np.floating`).

use oxla_core::DType;

/// NumPy's abstract dtype classes, which `jnp.issubdtype` takes and
/// whose names `jnp.isdtype`'s kinds use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DTypeClass {
    /// Every dtype (`np.generic`).
    Generic,
    /// Integers, floats and complex numbers, not bool (`np.number`,
    /// the `'numeric'` kind).
    Number,
    /// Signed and unsigned integers (`np.integer`, `'integral'`).
    Integer,
    /// Signed integers (`np.signedinteger`, `'signed integer'`).
    SignedInteger,
    /// Unsigned integers (`np.unsignedinteger`, `'unsigned integer'`).
    UnsignedInteger,
    /// Floats and complex numbers (`np.inexact`).
    Inexact,
    /// Real floats, bfloat16 included (`np.floating`, `'real floating'`).
    Floating,
    /// Complex numbers (`np.complexfloating`, `'complex floating'`).
    ComplexFloating,
    /// Booleans (`np.bool_`, `'bool'`).
    Bool,
}

impl DTypeClass {
    /// Whether `dtype` belongs to the class.
    pub fn contains(self, dtype: DType) -> bool {
        match self {
            DTypeClass::Generic => true,
            DTypeClass::Number => dtype != DType::Bool,
            DTypeClass::Integer => dtype.is_int(),
            DTypeClass::SignedInteger => dtype.is_signed_int(),
            DTypeClass::UnsignedInteger => dtype.is_unsigned_int(),
            DTypeClass::Inexact => dtype.is_inexact(),
            DTypeClass::Floating => dtype.is_float(),
            DTypeClass::ComplexFloating => dtype.is_complex(),
            DTypeClass::Bool => dtype == DType::Bool,
        }
    }
}

/// `jnp.issubdtype(dtype, class)`: whether `dtype` is in the abstract
/// class.
pub fn issubdtype(dtype: DType, class: DTypeClass) -> bool {
    class.contains(dtype)
}

/// `jnp.isdtype(dtype, kinds)`: whether `dtype` is of any of `kinds`
/// (the array API's kinds, given as classes: `'numeric'` is
/// [`DTypeClass::Number`], `'integral'` [`DTypeClass::Integer`], and so
/// on).
pub fn isdtype(dtype: DType, kinds: &[DTypeClass]) -> bool {
    kinds.iter().any(|kind| kind.contains(dtype))
}
