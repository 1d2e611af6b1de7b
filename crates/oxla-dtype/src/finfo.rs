//! The limits of the numeric types: NumPy's `finfo` for floats (and the
//! parts of complex types) and `iinfo` for integers.

use crate::DType;

/// The layout and limits of a float type, as NumPy's `finfo` gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloatInfo {
    /// Bits per value.
    pub bits: u32,
    /// Explicit mantissa bits (NumPy's `nmant`).
    pub mantissa_bits: u32,
    /// The largest finite value (`max`; `min` is its negation).
    pub max: f64,
    /// The smallest positive normal value (`tiny`, `smallest_normal`).
    pub smallest_normal: f64,
}

impl FloatInfo {
    /// The gap between 1 and the next value (`eps`).
    pub fn eps(&self) -> f64 {
        2f64.powi(-(self.mantissa_bits as i32))
    }

    /// The gap between 1 and the value before it (`epsneg`).
    pub fn epsneg(&self) -> f64 {
        self.eps() / 2.0
    }

    /// The least finite value (`min`).
    pub fn min(&self) -> f64 {
        -self.max
    }

    /// The bit pattern of 1.0: the exponent bias shifted over the
    /// mantissa.
    pub fn one_bits(&self) -> u64 {
        let exponent_bits = self.bits - 1 - self.mantissa_bits;
        ((1u64 << (exponent_bits - 1)) - 1) << self.mantissa_bits
    }
}

impl DType {
    /// NumPy's `finfo` of a float type, or of a complex type's parts;
    /// `None` for the others.
    pub fn finfo(self) -> Option<FloatInfo> {
        let (bits, mantissa_bits, max, smallest_normal) = match self.real_part() {
            DType::F16 => (16, 10, 65504.0, 2f64.powi(-14)),
            DType::BF16 => (16, 7, 3.389_531_389_251_535_5e38, 2f64.powi(-126)),
            DType::F32 => (32, 23, f64::from(f32::MAX), 2f64.powi(-126)),
            DType::F64 => (64, 52, f64::MAX, f64::MIN_POSITIVE),
            DType::Bool
            | DType::I8
            | DType::I16
            | DType::I32
            | DType::I64
            | DType::U8
            | DType::U16
            | DType::U32
            | DType::U64
            | DType::C64
            | DType::C128 => return None,
        };
        Some(FloatInfo {
            bits,
            mantissa_bits,
            max,
            smallest_normal,
        })
    }

    /// [`DType::finfo`] of a float or complex type, and f32's for the
    /// others (the type they compute in where a float is needed).
    pub fn float_info(self) -> FloatInfo {
        self.finfo()
            .or_else(|| DType::F32.finfo())
            .expect("f32 is a float type")
    }

    /// NumPy's `iinfo` of an integer type, `(min, max)`, or bool's
    /// `(0, 1)`; `None` for the others.
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            DType::Bool => (0, 1),
            DType::I8 => (i8::MIN.into(), i8::MAX.into()),
            DType::I16 => (i16::MIN.into(), i16::MAX.into()),
            DType::I32 => (i32::MIN.into(), i32::MAX.into()),
            DType::I64 => (i64::MIN.into(), i64::MAX.into()),
            DType::U8 => (0, u8::MAX.into()),
            DType::U16 => (0, u16::MAX.into()),
            DType::U32 => (0, u32::MAX.into()),
            DType::U64 => (0, u64::MAX.into()),
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::C64 | DType::C128 => {
                return None;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finfo_matches_numpy() {
        let f16 = DType::F16.finfo().unwrap();
        assert_eq!((f16.eps(), f16.epsneg()), (9.765_625e-4, 4.882_812_5e-4));
        assert_eq!(f16.one_bits(), 0x3C00);
        let bf16 = DType::BF16.finfo().unwrap();
        assert_eq!((bf16.eps(), bf16.one_bits()), (7.812_5e-3, 0x3F80));
        assert_eq!(bf16.smallest_normal, f64::from(f32::MIN_POSITIVE));
        let f32_info = DType::F32.finfo().unwrap();
        assert_eq!(f32_info.eps(), f64::from(f32::EPSILON));
        assert_eq!(f32_info.one_bits(), u64::from(1f32.to_bits()));
        assert_eq!(f32_info.min(), f64::from(f32::MIN));
        let f64_info = DType::F64.finfo().unwrap();
        assert_eq!(f64_info.one_bits(), 1f64.to_bits());
        assert_eq!(f64_info.eps(), f64::EPSILON);
        assert_eq!(DType::C64.finfo(), DType::F32.finfo());
        assert_eq!(DType::I32.finfo(), None);
        assert_eq!(DType::U8.int_range(), Some((0, 255)));
        assert_eq!(DType::F32.int_range(), None);
    }
}
