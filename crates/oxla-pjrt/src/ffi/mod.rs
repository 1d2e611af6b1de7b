//! The PJRT C API, declared by hand from the documented layout of
//! `pjrt_c_api.h` (C API 0.81, the header the pinned `xla-cpu-pjrt` wheel
//! ships): `#[repr(C)]` mirrors of the structs oxla-pjrt sends or reads
//! (each with all its fields), the enums whose values it uses (each
//! whole), the opaque handles, and the whole `PJRT_Api` function table;
//! nothing else. Everything here is `unsafe` to use; the rest of the crate
//! wraps it.
//!
//! Nothing is generated at build time. The layouts are written from the
//! header's documented ABI and checked against the header itself by
//! `tests/plugin/layout.rs`, which compiles a C program that prints
//! `sizeof`, `_Alignof`, `<Name>_STRUCT_SIZE` and every field's `offsetof`
//! and `sizeof` for the structs in [`layout::structs`], and the values of
//! the constants in [`layout::constants`], and compares them with Rust's.
//! Both lists come from the declaring macros below, so a struct or
//! constant added here is checked with no further step.
//!
//! Conventions:
//! - opaque handles (`PJRT_Client`, `PJRT_Buffer`, ...) are zero-sized
//!   `#[repr(C)]` structs only ever used behind pointers;
//! - C enums are `c_uint` type aliases with one constant per value, named
//!   as in C (`PJRT_Buffer_Type_F32`);
//! - an argument struct starts with `struct_size` (the header's
//!   `<Name>_STRUCT_SIZE`, see [`PjrtStruct::STRUCT_SIZE`]) and
//!   `extension_start`; a C field named `type` is `type_` here;
//! - `PJRT_Api` entries are `Option<unsafe extern "C" fn(*mut Args) ->
//!   *mut PJRT_Error>` ([`PjrtFn`]); entries oxla never calls are untyped
//!   [`PjrtSlot`]s that only keep the table's order and size.
#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    missing_docs
)]

/// A struct of the C API with the header's `PJRT_DEFINE_STRUCT_TRAITS`.
pub trait PjrtStruct: Sized {
    /// The header's `<Name>_STRUCT_SIZE`: `offsetof(last field) +
    /// sizeof(last field)`, what a caller puts in `struct_size` so that a
    /// plugin built against another version knows which fields it filled.
    const STRUCT_SIZE: usize;
    /// The struct's layout as declared here, for the layout test.
    const LAYOUT: layout::StructLayout;
}

/// The last of `ends`: given every field's end in declaration order, the
/// end of the last field (the header's `PJRT_STRUCT_SIZE`).
const fn last_field_end(ends: &[usize]) -> usize {
    ends[ends.len() - 1]
}

/// The C name of a field: its own, or the one given after `as`.
macro_rules! c_field_name {
    ($field:ident) => {
        stringify!($field)
    };
    ($field:ident $c_name:tt) => {
        stringify!($c_name)
    };
}

/// Declares `#[repr(C)]` structs of the C API, each with its
/// `<Name>_STRUCT_SIZE` constant, a [`PjrtStruct`] impl, and a place in the
/// module's `STRUCTS` list (which [`layout::structs`] gathers).
///
/// `args Name / Name_STRUCT_SIZE { fields }` declares an argument struct:
/// `struct_size: usize` and `extension_start: *mut PJRT_Extension_Base`
/// come first, then the listed fields. `struct Name / SIZE { fields }`
/// declares exactly the listed fields. A field whose C name differs (a C
/// keyword, an anonymous union's first member) is written
/// `rust_name as c_name: Type`.
macro_rules! pjrt_structs {
    (@munch [$($done:ident)*]) => {
        /// The structs this module declares, for the layout test.
        pub(super) const STRUCTS: &[$crate::ffi::layout::StructLayout] =
            &[$(<$done as $crate::ffi::PjrtStruct>::LAYOUT),*];
    };
    (@munch [$($done:ident)*]
        $(#[$attr:meta])*
        args $name:ident / $size:ident { $($body:tt)* }
        $($rest:tt)*
    ) => {
        pjrt_structs!(@struct $(#[$attr])* $name / $size {
            struct_size: usize,
            extension_start: *mut $crate::ffi::PJRT_Extension_Base,
            $($body)*
        });
        pjrt_structs!(@munch [$($done)* $name] $($rest)*);
    };
    (@munch [$($done:ident)*]
        $(#[$attr:meta])*
        struct $name:ident / $size:ident { $($body:tt)* }
        $($rest:tt)*
    ) => {
        pjrt_structs!(@struct $(#[$attr])* $name / $size { $($body)* });
        pjrt_structs!(@munch [$($done)* $name] $($rest)*);
    };
    (@struct
        $(#[$attr:meta])*
        $name:ident / $size:ident {
            $( $(#[$field_attr:meta])* $field:ident $(as $c_name:tt)? : $ty:ty ),+ $(,)?
        }
    ) => {
        $(#[$attr])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub struct $name {
            $( $(#[$field_attr])* pub $field: $ty, )+
        }

        impl $crate::ffi::PjrtStruct for $name {
            const STRUCT_SIZE: usize = $crate::ffi::last_field_end(&[$(
                ::std::mem::offset_of!($name, $field) + ::std::mem::size_of::<$ty>()
            ),+]);
            const LAYOUT: $crate::ffi::layout::StructLayout = $crate::ffi::layout::StructLayout {
                name: stringify!($name),
                size: ::std::mem::size_of::<$name>(),
                align: ::std::mem::align_of::<$name>(),
                struct_size: <$name as $crate::ffi::PjrtStruct>::STRUCT_SIZE,
                fields: &[$(
                    $crate::ffi::layout::FieldLayout {
                        name: c_field_name!($field $($c_name)?),
                        offset: ::std::mem::offset_of!($name, $field),
                        size: ::std::mem::size_of::<$ty>(),
                    }
                ),+],
            };
        }

        #[doc = concat!("The header's `", stringify!($size), "`: `",
            stringify!($name), "`'s [`STRUCT_SIZE`](crate::ffi::PjrtStruct::STRUCT_SIZE) (a `c_uint`, \
            as the header's anonymous enum).")]
        pub const $size: ::std::ffi::c_uint =
            <$name as $crate::ffi::PjrtStruct>::STRUCT_SIZE as ::std::ffi::c_uint;
    };
    ($($items:tt)*) => {
        pjrt_structs!(@munch [] $($items)*);
    };
}

/// Declares C enums as `c_uint` type aliases with one constant per value
/// (values written out, checked against the header by the layout test),
/// and the module's `CONSTANTS` list (which [`layout::constants`] gathers).
macro_rules! pjrt_enums {
    ($(
        $(#[$attr:meta])*
        enum $ty:ident { $( $name:ident = $value:literal ),+ $(,)? }
    )*) => {
        $(
            $(#[$attr])*
            pub type $ty = ::std::ffi::c_uint;
            $(
                #[doc = concat!("`", stringify!($name), "` (", stringify!($value), ").")]
                pub const $name: $ty = $value;
            )+
        )*

        /// The enum values this module declares, for the layout test.
        pub(super) const CONSTANTS: &[$crate::ffi::layout::Constant] = &[$($(
            $crate::ffi::layout::Constant { name: stringify!($name), value: $name as i64 },
        )+)*];
    };
}

/// Declares opaque handle types: C's incomplete structs, only ever used
/// behind pointers (zero-sized, neither `Send`, `Sync` nor `Unpin`).
macro_rules! opaque_types {
    ($( $(#[$attr:meta])* $name:ident ),+ $(,)?) => {
        $(
            $(#[$attr])*
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
                _not_send_sync_unpin: ::std::marker::PhantomData<(*mut u8, ::std::marker::PhantomPinned)>,
            }
        )+
    };
}

mod api;
mod base;
mod buffer;
mod callback;
mod client;
mod device;
mod error_event;
mod executable;
pub mod layout;
mod transfer;

pub use self::api::*;
pub use self::base::*;
pub use self::buffer::*;
pub use self::callback::*;
pub use self::client::*;
pub use self::device::*;
pub use self::error_event::*;
pub use self::executable::*;
pub use self::transfer::*;
