//! oxla's leaf crate: the element types every other crate shares, with no
//! dependencies of its own. [`DType`] is the IR's element type (JAX's
//! dtypes); [`ElementType`] is a device buffer's (PJRT's and XLA's, complex
//! types included); the two convert into each other where both have the
//! type. [`callback_abi`] holds the names the compiler and the runtime
//! agree on for host callbacks.
#![warn(missing_docs)]

pub mod callback_abi;
mod dtype;
mod element;
mod finfo;

pub use dtype::DType;
pub use element::{ElementType, UnknownType};
pub use finfo::FloatInfo;

impl From<DType> for ElementType {
    /// The device element type of a dtype.
    fn from(dtype: DType) -> ElementType {
        match dtype {
            DType::Bool => ElementType::Pred,
            DType::I8 => ElementType::S8,
            DType::I16 => ElementType::S16,
            DType::I32 => ElementType::S32,
            DType::I64 => ElementType::S64,
            DType::U8 => ElementType::U8,
            DType::U16 => ElementType::U16,
            DType::U32 => ElementType::U32,
            DType::U64 => ElementType::U64,
            DType::F16 => ElementType::F16,
            DType::BF16 => ElementType::Bf16,
            DType::F32 => ElementType::F32,
            DType::F64 => ElementType::F64,
            DType::C64 => ElementType::C64,
            DType::C128 => ElementType::C128,
        }
    }
}

impl From<ElementType> for DType {
    /// The dtype of a device element type (oxla's IR has them all).
    fn from(element: ElementType) -> DType {
        match element {
            ElementType::Pred => DType::Bool,
            ElementType::S8 => DType::I8,
            ElementType::S16 => DType::I16,
            ElementType::S32 => DType::I32,
            ElementType::S64 => DType::I64,
            ElementType::U8 => DType::U8,
            ElementType::U16 => DType::U16,
            ElementType::U32 => DType::U32,
            ElementType::U64 => DType::U64,
            ElementType::F16 => DType::F16,
            ElementType::Bf16 => DType::BF16,
            ElementType::F32 => DType::F32,
            ElementType::F64 => DType::F64,
            ElementType::C64 => DType::C64,
            ElementType::C128 => DType::C128,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_round_trips_through_its_element_type_of_the_same_size() {
        for dtype in DType::ALL {
            let element = ElementType::from(dtype);
            assert_eq!(DType::from(element), dtype);
            assert_eq!(element.byte_size(), dtype.byte_size());
            assert_eq!(element.name(), dtype.name());
        }
        assert_eq!("c64".parse::<ElementType>(), Ok(ElementType::C64));
        assert_eq!(
            "f33".parse::<ElementType>().unwrap_err().to_string(),
            "unknown element type \"f33\""
        );
    }
}
