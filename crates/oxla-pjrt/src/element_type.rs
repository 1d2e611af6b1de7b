//! PJRT's tags for element types, and the Rust types that hold them on
//! the host. The element types themselves are `oxla_dtype::ElementType`.

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

pub use oxla_dtype::ElementType;

use crate::error::{Error, Result};
use crate::ffi;

/// The PJRT C API's and XLA's tags of an [`ElementType`].
pub trait ElementTypeTags: Sized {
    /// The PJRT C API's tag for this type.
    fn to_raw(self) -> ffi::PJRT_Buffer_Type;

    /// The element type of a PJRT tag; an error names tags oxla cannot hold
    /// (fp8, int4, tokens).
    fn from_raw(raw: ffi::PJRT_Buffer_Type) -> Result<Self>;

    /// The element type of an XLA `PrimitiveType` (as in HLO protos).
    fn from_primitive_type(p: crate::proto::PrimitiveType) -> Option<Self>;
}

impl ElementTypeTags for ElementType {
    /// The PJRT C API's tag for this type.
    fn to_raw(self) -> ffi::PJRT_Buffer_Type {
        match self {
            Self::Pred => ffi::PJRT_Buffer_Type_PRED,
            Self::S8 => ffi::PJRT_Buffer_Type_S8,
            Self::S16 => ffi::PJRT_Buffer_Type_S16,
            Self::S32 => ffi::PJRT_Buffer_Type_S32,
            Self::S64 => ffi::PJRT_Buffer_Type_S64,
            Self::U8 => ffi::PJRT_Buffer_Type_U8,
            Self::U16 => ffi::PJRT_Buffer_Type_U16,
            Self::U32 => ffi::PJRT_Buffer_Type_U32,
            Self::U64 => ffi::PJRT_Buffer_Type_U64,
            Self::F16 => ffi::PJRT_Buffer_Type_F16,
            Self::Bf16 => ffi::PJRT_Buffer_Type_BF16,
            Self::F32 => ffi::PJRT_Buffer_Type_F32,
            Self::F64 => ffi::PJRT_Buffer_Type_F64,
            Self::C64 => ffi::PJRT_Buffer_Type_C64,
            Self::C128 => ffi::PJRT_Buffer_Type_C128,
        }
    }

    /// The element type of a PJRT tag; an error names tags oxla cannot hold
    /// (fp8, int4, tokens).
    fn from_raw(raw: ffi::PJRT_Buffer_Type) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|t| t.to_raw() == raw)
            .ok_or_else(|| Error::Protocol(format!("unsupported PJRT buffer type {raw}")))
    }

    /// The element type of an XLA `PrimitiveType` (as in HLO protos).
    fn from_primitive_type(p: crate::proto::PrimitiveType) -> Option<Self> {
        use crate::proto::PrimitiveType as P;
        match p {
            P::Pred => Some(Self::Pred),
            P::S8 => Some(Self::S8),
            P::S16 => Some(Self::S16),
            P::S32 => Some(Self::S32),
            P::S64 => Some(Self::S64),
            P::U8 => Some(Self::U8),
            P::U16 => Some(Self::U16),
            P::U32 => Some(Self::U32),
            P::U64 => Some(Self::U64),
            P::F16 => Some(Self::F16),
            P::Bf16 => Some(Self::Bf16),
            P::F32 => Some(Self::F32),
            P::F64 => Some(Self::F64),
            P::C64 => Some(Self::C64),
            P::C128 => Some(Self::C128),
            P::Invalid | P::Tuple | P::OpaqueType | P::Token => None,
        }
    }
}

/// A Rust type that holds one element of an [`ElementType`] on the host, with
/// the same bytes as on the device (little-endian, as every PJRT platform).
pub trait NativeType: Copy + Send + Sync + 'static {
    /// The element type.
    const TYPE: ElementType;

    /// The elements' bytes.
    fn as_bytes(values: &[Self]) -> &[u8];

    /// Elements from bytes; an error if a byte pattern is not a valid value.
    fn from_bytes(bytes: &[u8]) -> Result<Vec<Self>>;
}

macro_rules! pod_native_type {
    ($($ty:ty => $et:ident),* $(,)?) => {$(
        impl NativeType for $ty {
            const TYPE: ElementType = ElementType::$et;

            fn as_bytes(values: &[Self]) -> &[u8] {
                bytemuck::cast_slice(values)
            }

            fn from_bytes(bytes: &[u8]) -> Result<Vec<Self>> {
                if bytes.len() % std::mem::size_of::<$ty>() != 0 {
                    return Err(Error::InvalidArgument(format!(
                        "{} bytes are not a whole number of {} elements",
                        bytes.len(),
                        ElementType::$et
                    )));
                }
                Ok(bytemuck::pod_collect_to_vec(bytes))
            }
        }
    )*};
}

pod_native_type! {
    i8 => S8, i16 => S16, i32 => S32, i64 => S64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f16 => F16, bf16 => Bf16, f32 => F32, f64 => F64,
    Complex32 => C64, Complex64 => C128,
}

impl NativeType for bool {
    const TYPE: ElementType = ElementType::Pred;

    fn as_bytes(values: &[Self]) -> &[u8] {
        bytemuck::cast_slice(values)
    }

    fn from_bytes(bytes: &[u8]) -> Result<Vec<Self>> {
        bytes
            .iter()
            .map(|&b| match b {
                0 => Ok(false),
                1 => Ok(true),
                other => Err(Error::InvalidArgument(format!(
                    "byte {other} is not a valid bool"
                ))),
            })
            .collect()
    }
}
