//! `PJRT_Client`: creation, its platform and devices, compiling programs,
//! and buffers from host memory.

use std::ffi::{c_char, c_int, c_void};

use super::{
    PJRT_Buffer, PJRT_Buffer_MemoryLayout, PJRT_Buffer_Type, PJRT_Device, PJRT_Event,
    PJRT_HostBufferSemantics, PJRT_KeyValueGetCallback, PJRT_KeyValuePutCallback,
    PJRT_KeyValueTryGetCallback, PJRT_LoadedExecutable, PJRT_Memory, PJRT_NamedValue,
};

opaque_types! {
    /// A client of one platform's devices, made by `PJRT_Client_Create`.
    PJRT_Client,
}

pjrt_structs! {
    /// Arguments of `PJRT_Client_Create`: named options and, for a
    /// multi-process client, the key-value store callbacks (each with its
    /// `user_arg`); returns the client.
    args PJRT_Client_Create_Args / PJRT_Client_Create_Args_STRUCT_SIZE {
        create_options: *const PJRT_NamedValue,
        num_options: usize,
        kv_get_callback: PJRT_KeyValueGetCallback,
        kv_get_user_arg: *mut c_void,
        kv_put_callback: PJRT_KeyValuePutCallback,
        kv_put_user_arg: *mut c_void,
        client: *mut PJRT_Client,
        kv_try_get_callback: PJRT_KeyValueTryGetCallback,
        kv_try_get_user_arg: *mut c_void,
    }

    /// Arguments of `PJRT_Client_Destroy`.
    args PJRT_Client_Destroy_Args / PJRT_Client_Destroy_Args_STRUCT_SIZE {
        client: *mut PJRT_Client,
    }

    /// Arguments of `PJRT_Client_PlatformName` ("cpu", "cuda"; owned by
    /// the client).
    args PJRT_Client_PlatformName_Args / PJRT_Client_PlatformName_Args_STRUCT_SIZE {
        client: *mut PJRT_Client,
        platform_name: *const c_char,
        platform_name_size: usize,
    }

    /// Arguments of `PJRT_Client_ProcessIndex`.
    args PJRT_Client_ProcessIndex_Args / PJRT_Client_ProcessIndex_Args_STRUCT_SIZE {
        client: *mut PJRT_Client,
        process_index: c_int,
    }

    /// Arguments of `PJRT_Client_PlatformVersion` (owned by the client).
    args PJRT_Client_PlatformVersion_Args / PJRT_Client_PlatformVersion_Args_STRUCT_SIZE {
        client: *mut PJRT_Client,
        platform_version: *const c_char,
        platform_version_size: usize,
    }

    /// Arguments of `PJRT_Client_Devices`: every device, addressable or
    /// not (the array is owned by the client).
    args PJRT_Client_Devices_Args / PJRT_Client_Devices_Args_STRUCT_SIZE {
        client: *mut PJRT_Client,
        devices: *const *mut PJRT_Device,
        num_devices: usize,
    }

    /// Arguments of `PJRT_Client_AddressableDevices` (owned by the client).
    args PJRT_Client_AddressableDevices_Args / PJRT_Client_AddressableDevices_Args_STRUCT_SIZE {
        client: *mut PJRT_Client,
        addressable_devices: *const *mut PJRT_Device,
        num_addressable_devices: usize,
    }

    /// Arguments of `PJRT_Client_AddressableMemories` (owned by the client).
    args PJRT_Client_AddressableMemories_Args
        / PJRT_Client_AddressableMemories_Args_STRUCT_SIZE
    {
        client: *mut PJRT_Client,
        addressable_memories: *const *mut PJRT_Memory,
        num_addressable_memories: usize,
    }

    /// A program: its code and format ("mlir" or "hlo"). As an output of
    /// `PJRT_Executable_OptimizedProgram`, `code` is a caller buffer of
    /// `code_size` bytes (null to ask for the size).
    args PJRT_Program / PJRT_Program_STRUCT_SIZE {
        code: *mut c_char,
        code_size: usize,
        format: *const c_char,
        format_size: usize,
    }

    /// Arguments of `PJRT_Client_Compile`: a program and a serialized
    /// `CompileOptionsProto`; returns the loaded executable.
    args PJRT_Client_Compile_Args / PJRT_Client_Compile_Args_STRUCT_SIZE {
        client: *mut PJRT_Client,
        program: *const PJRT_Program,
        compile_options: *const c_char,
        compile_options_size: usize,
        executable: *mut PJRT_LoadedExecutable,
    }

    /// Arguments of `PJRT_Client_BufferFromHostBuffer`: host data of a type
    /// and shape (dense row-major unless `byte_strides`) to a device or
    /// memory; returns the buffer and an event for when `data` may be
    /// reused.
    args PJRT_Client_BufferFromHostBuffer_Args
        / PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE
    {
        client: *mut PJRT_Client,
        data: *const c_void,
        type_ as type: PJRT_Buffer_Type,
        dims: *const i64,
        num_dims: usize,
        byte_strides: *const i64,
        num_byte_strides: usize,
        host_buffer_semantics: PJRT_HostBufferSemantics,
        device: *mut PJRT_Device,
        memory: *mut PJRT_Memory,
        device_layout: *mut PJRT_Buffer_MemoryLayout,
        done_with_host_buffer: *mut PJRT_Event,
        buffer: *mut PJRT_Buffer,
    }
}
