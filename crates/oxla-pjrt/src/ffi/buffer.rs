//! `PJRT_Buffer`: an array on a device; its type, shape, device, readiness
//! and copies to the host.

use std::ffi::c_void;

use super::{PJRT_Device, PJRT_Event};

opaque_types! {
    /// An array on a device (or in a memory), owned by the caller once
    /// returned; freed with `PJRT_Buffer_Destroy`.
    PJRT_Buffer,
    /// A buffer's memory layout. A complete struct in C (a union of tiled
    /// and strided layouts); oxla only ever passes null (the default
    /// layout), so it is opaque here.
    PJRT_Buffer_MemoryLayout,
}

pjrt_enums! {
    /// An element type (XLA's `PrimitiveType`, numbered differently).
    enum PJRT_Buffer_Type {
        PJRT_Buffer_Type_INVALID = 0,
        PJRT_Buffer_Type_PRED = 1,
        PJRT_Buffer_Type_S8 = 2,
        PJRT_Buffer_Type_S16 = 3,
        PJRT_Buffer_Type_S32 = 4,
        PJRT_Buffer_Type_S64 = 5,
        PJRT_Buffer_Type_U8 = 6,
        PJRT_Buffer_Type_U16 = 7,
        PJRT_Buffer_Type_U32 = 8,
        PJRT_Buffer_Type_U64 = 9,
        PJRT_Buffer_Type_F16 = 10,
        PJRT_Buffer_Type_F32 = 11,
        PJRT_Buffer_Type_F64 = 12,
        PJRT_Buffer_Type_BF16 = 13,
        PJRT_Buffer_Type_C64 = 14,
        PJRT_Buffer_Type_C128 = 15,
        PJRT_Buffer_Type_F8E5M2 = 16,
        PJRT_Buffer_Type_F8E4M3FN = 17,
        PJRT_Buffer_Type_F8E4M3B11FNUZ = 18,
        PJRT_Buffer_Type_F8E5M2FNUZ = 19,
        PJRT_Buffer_Type_F8E4M3FNUZ = 20,
        PJRT_Buffer_Type_S4 = 21,
        PJRT_Buffer_Type_U4 = 22,
        PJRT_Buffer_Type_TOKEN = 23,
        PJRT_Buffer_Type_S2 = 24,
        PJRT_Buffer_Type_U2 = 25,
        PJRT_Buffer_Type_F8E4M3 = 26,
        PJRT_Buffer_Type_F8E3M4 = 27,
        PJRT_Buffer_Type_F8E8M0FNU = 28,
        PJRT_Buffer_Type_F4E2M1FN = 29,
    }

    /// How long the plugin may read the host data of
    /// `PJRT_Client_BufferFromHostBuffer`.
    enum PJRT_HostBufferSemantics {
        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall = 0,
        PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes = 1,
        PJRT_HostBufferSemantics_kImmutableZeroCopy = 2,
        PJRT_HostBufferSemantics_kMutableZeroCopy = 3,
    }
}

pjrt_structs! {
    /// Arguments of `PJRT_Buffer_Destroy`: frees the handle (and the device
    /// memory once no computation uses it).
    args PJRT_Buffer_Destroy_Args / PJRT_Buffer_Destroy_Args_STRUCT_SIZE {
        buffer: *mut PJRT_Buffer,
    }

    /// Arguments of `PJRT_Buffer_ElementType`.
    args PJRT_Buffer_ElementType_Args / PJRT_Buffer_ElementType_Args_STRUCT_SIZE {
        buffer: *mut PJRT_Buffer,
        type_ as type: PJRT_Buffer_Type,
    }

    /// Arguments of `PJRT_Buffer_Dimensions` (owned by the buffer).
    args PJRT_Buffer_Dimensions_Args / PJRT_Buffer_Dimensions_Args_STRUCT_SIZE {
        buffer: *mut PJRT_Buffer,
        dims: *const i64,
        num_dims: usize,
    }

    /// Arguments of `PJRT_Buffer_OnDeviceSizeInBytes`.
    args PJRT_Buffer_OnDeviceSizeInBytes_Args
        / PJRT_Buffer_OnDeviceSizeInBytes_Args_STRUCT_SIZE
    {
        buffer: *mut PJRT_Buffer,
        on_device_size_in_bytes: usize,
    }

    /// Arguments of `PJRT_Buffer_Device`.
    args PJRT_Buffer_Device_Args / PJRT_Buffer_Device_Args_STRUCT_SIZE {
        buffer: *mut PJRT_Buffer,
        device: *mut PJRT_Device,
    }

    /// Arguments of `PJRT_Buffer_CopyToDevice`: a copy of `buffer` on
    /// `dst_device` of the same client (an error if it is already there);
    /// the caller owns `dst_buffer`.
    args PJRT_Buffer_CopyToDevice_Args / PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE {
        buffer: *mut PJRT_Buffer,
        dst_device: *mut PJRT_Device,
        dst_buffer: *mut PJRT_Buffer,
    }

    /// Arguments of `PJRT_Buffer_Delete`: frees the device memory now; the
    /// handle stays.
    args PJRT_Buffer_Delete_Args / PJRT_Buffer_Delete_Args_STRUCT_SIZE {
        buffer: *mut PJRT_Buffer,
    }

    /// Arguments of `PJRT_Buffer_IsDeleted`.
    args PJRT_Buffer_IsDeleted_Args / PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE {
        buffer: *mut PJRT_Buffer,
        is_deleted: bool,
    }

    /// Arguments of `PJRT_Buffer_ToHostBuffer`: with a null `dst`, sets
    /// `dst_size` to the bytes needed; otherwise starts the copy into
    /// `dst` and returns an event for its end.
    args PJRT_Buffer_ToHostBuffer_Args / PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE {
        src: *mut PJRT_Buffer,
        host_layout: *mut PJRT_Buffer_MemoryLayout,
        dst: *mut c_void,
        dst_size: usize,
        event: *mut PJRT_Event,
    }

    /// Arguments of `PJRT_Buffer_ReadyEvent`: an event for when the
    /// buffer's value is computed (owned by the caller).
    args PJRT_Buffer_ReadyEvent_Args / PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE {
        buffer: *mut PJRT_Buffer,
        event: *mut PJRT_Event,
    }
}
