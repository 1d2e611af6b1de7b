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

/// How [`can_cast`] judges a cast (NumPy's `casting`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Casting {
    /// Only to the same type.
    No,
    /// Only to the same type (byte order aside, which oxla's types lack).
    Equiv,
    /// Only casts that keep every value.
    #[default]
    Safe,
    /// Safe casts, or within a kind (float64 to float32).
    SameKind,
    /// Any cast.
    Unsafe,
}

/// NumPy's safe casts (with ml_dtypes' bfloat16), from row to column in
/// [`DType::ALL`]'s order (facts of `numpy.can_cast`, checked at test time).
const CAN_CAST_SAFE: [&str; 15] = [
    "111111111111111",
    "011110000111111",
    "001110000001111",
    "000110000000101",
    "000010000000101",
    "001111111111111",
    "000110111001111",
    "000010011000101",
    "000000001000101",
    "000000000101111",
    "000000000011111",
    "000000000001111",
    "000000000000101",
    "000000000000011",
    "000000000000001",
];

/// NumPy's same-kind casts, as [`CAN_CAST_SAFE`].
const CAN_CAST_SAME_KIND: [&str; 15] = [
    "111111111111111",
    "011110000111111",
    "011110000111111",
    "011110000111111",
    "011110000111111",
    "011111111111111",
    "011111111111111",
    "011111111111111",
    "011111111111111",
    "000000000111111",
    "000000000011111",
    "000000000111111",
    "000000000111111",
    "000000000010011",
    "000000000010011",
];

/// `jnp.can_cast(from_, to, casting)`: whether NumPy casts `from` to `to`
/// under `casting`.
pub fn can_cast(from: DType, to: DType, casting: Casting) -> bool {
    let position = |d: DType| DType::ALL.iter().position(|&o| o == d);
    let table = match casting {
        Casting::No | Casting::Equiv => return from == to,
        Casting::Unsafe => return true,
        Casting::Safe => &CAN_CAST_SAFE,
        Casting::SameKind => &CAN_CAST_SAME_KIND,
    };
    match (position(from), position(to)) {
        (Some(f), Some(t)) => table[f].as_bytes()[t] == b'1',
        _ => from == to,
    }
}
