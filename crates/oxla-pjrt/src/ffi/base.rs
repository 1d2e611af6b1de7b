//! The header's foundations: the extension chain, the API version, named
//! values, and plugin initialization and attributes.

use std::ffi::{c_char, c_int};

/// The C API major version of the header these declarations follow;
/// a plugin of another major version is refused.
pub const PJRT_API_MAJOR: c_int = 0;
/// The C API minor version of the header these declarations follow.
pub const PJRT_API_MINOR: c_int = 81;

pjrt_enums! {
    /// What an extension struct in an `extension_start` chain is.
    enum PJRT_Extension_Type {
        PJRT_Extension_Type_Gpu_Custom_Call = 0,
        PJRT_Extension_Type_Profiler = 1,
        PJRT_Extension_Type_Custom_Partitioner = 2,
        PJRT_Extension_Type_Stream = 3,
        PJRT_Extension_Type_Layouts = 4,
        PJRT_Extension_Type_FFI = 5,
        PJRT_Extension_Type_MemoryDescriptions = 6,
        PJRT_Extension_Type_Triton = 7,
        PJRT_Extension_Type_RawBuffer = 8,
        PJRT_Extension_Type_PhaseCompile = 9,
        PJRT_Extension_Type_Example = 10,
        PJRT_Extension_Type_Unknown = 11,
        PJRT_Extension_Type_CrossHostTransfers = 12,
        PJRT_Extension_Type_ExecutableMetadata = 13,
        PJRT_Extension_Type_Callback = 14,
        PJRT_Extension_Type_HostAllocator = 15,
    }

    /// Which member of a [`PJRT_NamedValue`]'s value union is set.
    enum PJRT_NamedValue_Type {
        PJRT_NamedValue_kString = 0,
        PJRT_NamedValue_kInt64 = 1,
        PJRT_NamedValue_kInt64List = 2,
        PJRT_NamedValue_kFloat = 3,
        PJRT_NamedValue_kBool = 4,
    }
}

/// The value of a [`PJRT_NamedValue`], an anonymous union in C; the
/// member in use is the one its `type_` names, and `value_size` is the
/// string's byte length, the list's length, or 1.
#[repr(C)]
#[derive(Clone, Copy)]
pub union PJRT_NamedValue_Value {
    pub string_value: *const c_char,
    pub int64_value: i64,
    pub int64_array_value: *const i64,
    pub float_value: f32,
    pub bool_value: bool,
}

pjrt_structs! {
    /// The head of every extension struct: extensions form a linked list
    /// from a struct's `extension_start` (the plugin's own from
    /// `PJRT_Api.extension_start`), each knowing its type and size.
    struct PJRT_Extension_Base / PJRT_Extension_Base_STRUCT_SIZE {
        struct_size: usize,
        type_ as type: PJRT_Extension_Type,
        next: *mut PJRT_Extension_Base,
    }

    /// The C API version a plugin was built with (`PJRT_Api.pjrt_api_version`).
    args PJRT_Api_Version / PJRT_Api_Version_STRUCT_SIZE {
        major_version: c_int,
        minor_version: c_int,
    }

    /// A name and a typed value: client create options, plugin and device
    /// attributes, cost analyses.
    args PJRT_NamedValue / PJRT_NamedValue_STRUCT_SIZE {
        name: *const c_char,
        name_size: usize,
        type_ as type: PJRT_NamedValue_Type,
        value as string_value: PJRT_NamedValue_Value,
        value_size: usize,
    }

    /// Arguments of `PJRT_Plugin_Initialize`, called once before anything
    /// else: nothing but the header.
    args PJRT_Plugin_Initialize_Args / PJRT_Plugin_Initialize_Args_STRUCT_SIZE {}

    /// Arguments of `PJRT_Plugin_Attributes`: the plugin's attributes
    /// (xla_version, stablehlo versions), owned by the plugin.
    args PJRT_Plugin_Attributes_Args / PJRT_Plugin_Attributes_Args_STRUCT_SIZE {
        attributes: *const PJRT_NamedValue,
        num_attributes: usize,
    }
}
