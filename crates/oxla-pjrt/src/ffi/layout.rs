//! What the declarations of [`crate::ffi`] assume of the C ABI: every
//! struct's size, alignment, `struct_size` and field offsets, and every
//! constant's value, gathered from the declaring macros. The layout test
//! (`tests/plugin/layout.rs`) prints the same facts from the real
//! `pjrt_c_api.h` with a C compiler and compares.

/// One field of a [`StructLayout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldLayout {
    /// The field's name in C (`type`, not Rust's `type_`; an anonymous
    /// union by its first member).
    pub name: &'static str,
    /// `offset_of!` in Rust, `offsetof` in C.
    pub offset: usize,
    /// The size of the field's type.
    pub size: usize,
}

/// The layout of one declared struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StructLayout {
    /// The struct's name, the same in C and Rust.
    pub name: &'static str,
    /// `size_of` / `sizeof`.
    pub size: usize,
    /// `align_of` / `_Alignof`.
    pub align: usize,
    /// The end of the last field: the header's `<name>_STRUCT_SIZE`.
    pub struct_size: usize,
    /// Every field, in declaration order.
    pub fields: &'static [FieldLayout],
}

/// A named integer constant of the header (an enum value or a macro).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constant {
    /// The name, the same in C and Rust.
    pub name: &'static str,
    /// Its value.
    pub value: i64,
}

/// Every struct [`crate::ffi`] declares.
pub fn structs() -> impl Iterator<Item = &'static StructLayout> {
    [
        super::base::STRUCTS,
        super::error_event::STRUCTS,
        super::callback::STRUCTS,
        super::client::STRUCTS,
        super::device::STRUCTS,
        super::buffer::STRUCTS,
        super::executable::STRUCTS,
        super::transfer::STRUCTS,
        super::api::STRUCTS,
    ]
    .into_iter()
    .flatten()
}

/// The API version macros, which are `int`s rather than enum values.
const VERSION: &[Constant] = &[
    Constant {
        name: "PJRT_API_MAJOR",
        value: super::PJRT_API_MAJOR as i64,
    },
    Constant {
        name: "PJRT_API_MINOR",
        value: super::PJRT_API_MINOR as i64,
    },
];

/// Every constant [`crate::ffi`] declares.
pub fn constants() -> impl Iterator<Item = &'static Constant> {
    [
        VERSION,
        super::base::CONSTANTS,
        super::error_event::CONSTANTS,
        super::buffer::CONSTANTS,
    ]
    .into_iter()
    .flatten()
}
