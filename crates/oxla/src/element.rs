//! Rust types that hold array elements on the host.

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use oxla_core::{DType, Scalar};
use oxla_pjrt::NativeType;

/// A Rust type that is the element type of an oxla array: `bool`, `i8`,
/// `i16`, `i32`, `i64`, `u8`, `u16`, `u32`, `u64`, `half::f16`,
/// `half::bf16`, `f32`, `f64`, and `num_complex::Complex32` and
/// `Complex64` (`c64`, `c128`). These are the types
/// [`Array::from_slice`](crate::Array::from_slice) takes and
/// [`Array::to_vec`](crate::Array::to_vec) and
/// [`Array::item`](crate::Array::item) return (the `T` must be the array's
/// dtype: reading an `f32` array as `i32` is an error, not a conversion).
///
/// ```
/// use oxla::{Array, DType, Element};
/// # fn main() -> oxla::Result<()> {
/// assert_eq!(<u8 as Element>::DTYPE, DType::U8);
/// let x = Array::from_slice(&[true, false], &[2])?;
/// assert_eq!(x.dtype(), DType::Bool);
/// assert_eq!(x.to_vec::<bool>()?, vec![true, false]);
/// assert!(x.to_vec::<u8>().is_err());
/// # Ok(())
/// # }
/// ```
pub trait Element: NativeType {
    /// The dtype.
    const DTYPE: DType;

    /// The value as an IR scalar.
    fn to_scalar(self) -> Scalar;
}

macro_rules! element {
    ($($t:ty => $d:ident, $v:ident, $conv:expr;)*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;

            fn to_scalar(self) -> Scalar {
                let f: fn($t) -> _ = $conv;
                Scalar::$v(f(self))
            }
        }
    )*};
}

element! {
    bool => Bool, Bool, |v| v;
    i8 => I8, Int, i64::from;
    i16 => I16, Int, i64::from;
    i32 => I32, Int, i64::from;
    i64 => I64, Int, |v| v;
    u8 => U8, UInt, u64::from;
    u16 => U16, UInt, u64::from;
    u32 => U32, UInt, u64::from;
    u64 => U64, UInt, |v| v;
    f16 => F16, Float, f64::from;
    bf16 => BF16, Float, f64::from;
    f32 => F32, Float, f64::from;
    f64 => F64, Float, |v| v;
}

impl Element for Complex32 {
    const DTYPE: DType = DType::C64;

    fn to_scalar(self) -> Scalar {
        Scalar::Complex(f64::from(self.re), f64::from(self.im))
    }
}

impl Element for Complex64 {
    const DTYPE: DType = DType::C128;

    fn to_scalar(self) -> Scalar {
        Scalar::Complex(self.re, self.im)
    }
}

/// Little-endian bytes of one `dtype` element holding `value`.
pub(crate) fn scalar_bytes(dtype: DType, value: Scalar) -> Vec<u8> {
    let f = value.as_f64();
    let i = value.as_i128();
    match dtype {
        DType::Bool => vec![u8::from(i != 0)],
        DType::I8 => (i as i8).to_le_bytes().to_vec(),
        DType::I16 => (i as i16).to_le_bytes().to_vec(),
        DType::I32 => (i as i32).to_le_bytes().to_vec(),
        DType::I64 => (i as i64).to_le_bytes().to_vec(),
        DType::U8 => (i as u8).to_le_bytes().to_vec(),
        DType::U16 => (i as u16).to_le_bytes().to_vec(),
        DType::U32 => (i as u32).to_le_bytes().to_vec(),
        DType::U64 => (i as u64).to_le_bytes().to_vec(),
        DType::F16 => f16::from_f64(f).to_le_bytes().to_vec(),
        DType::BF16 => bf16::from_f64(f).to_le_bytes().to_vec(),
        DType::F32 => (f as f32).to_le_bytes().to_vec(),
        DType::F64 => f.to_le_bytes().to_vec(),
        DType::C64 | DType::C128 => {
            let (re, im) = value.complex_parts();
            let part = dtype.real_part();
            let mut bytes = scalar_bytes(part, Scalar::Float(re));
            bytes.extend(scalar_bytes(part, Scalar::Float(im)));
            bytes
        }
    }
}
