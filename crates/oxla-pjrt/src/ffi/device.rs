//! Devices, their descriptions, and memories. Every handle here is owned
//! by the client and lives as long as it.

use std::ffi::{c_char, c_int};

use super::PJRT_NamedValue;

opaque_types! {
    /// A device of a client.
    PJRT_Device,
    /// What a device is, independently of any client (id, kind, attributes).
    PJRT_DeviceDescription,
    /// A memory space a device can address ("device", "pinned_host", ...).
    PJRT_Memory,
}

pjrt_structs! {
    /// Arguments of `PJRT_DeviceDescription_Id`: the device's global id.
    args PJRT_DeviceDescription_Id_Args / PJRT_DeviceDescription_Id_Args_STRUCT_SIZE {
        device_description: *mut PJRT_DeviceDescription,
        id: c_int,
    }

    /// Arguments of `PJRT_DeviceDescription_ProcessIndex`.
    args PJRT_DeviceDescription_ProcessIndex_Args
        / PJRT_DeviceDescription_ProcessIndex_Args_STRUCT_SIZE
    {
        device_description: *mut PJRT_DeviceDescription,
        process_index: c_int,
    }

    /// Arguments of `PJRT_DeviceDescription_Attributes` (note: the count
    /// comes before the array here).
    args PJRT_DeviceDescription_Attributes_Args
        / PJRT_DeviceDescription_Attributes_Args_STRUCT_SIZE
    {
        device_description: *mut PJRT_DeviceDescription,
        num_attributes: usize,
        attributes: *const PJRT_NamedValue,
    }

    /// Arguments of `PJRT_DeviceDescription_Kind` ("cpu", a GPU's name).
    args PJRT_DeviceDescription_Kind_Args / PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE {
        device_description: *mut PJRT_DeviceDescription,
        device_kind: *const c_char,
        device_kind_size: usize,
    }

    /// Arguments of `PJRT_DeviceDescription_DebugString`.
    args PJRT_DeviceDescription_DebugString_Args
        / PJRT_DeviceDescription_DebugString_Args_STRUCT_SIZE
    {
        device_description: *mut PJRT_DeviceDescription,
        debug_string: *const c_char,
        debug_string_size: usize,
    }

    /// Arguments of `PJRT_DeviceDescription_ToString`.
    args PJRT_DeviceDescription_ToString_Args
        / PJRT_DeviceDescription_ToString_Args_STRUCT_SIZE
    {
        device_description: *mut PJRT_DeviceDescription,
        to_string: *const c_char,
        to_string_size: usize,
    }

    /// Arguments of `PJRT_Device_GetDescription`.
    args PJRT_Device_GetDescription_Args / PJRT_Device_GetDescription_Args_STRUCT_SIZE {
        device: *mut PJRT_Device,
        device_description: *mut PJRT_DeviceDescription,
    }

    /// Arguments of `PJRT_Device_IsAddressable`.
    args PJRT_Device_IsAddressable_Args / PJRT_Device_IsAddressable_Args_STRUCT_SIZE {
        device: *mut PJRT_Device,
        is_addressable: bool,
    }

    /// Arguments of `PJRT_Device_LocalHardwareId` (-1 if not addressable).
    args PJRT_Device_LocalHardwareId_Args / PJRT_Device_LocalHardwareId_Args_STRUCT_SIZE {
        device: *mut PJRT_Device,
        local_hardware_id: c_int,
    }

    /// Arguments of `PJRT_Device_AddressableMemories`.
    args PJRT_Device_AddressableMemories_Args
        / PJRT_Device_AddressableMemories_Args_STRUCT_SIZE
    {
        device: *mut PJRT_Device,
        memories: *const *mut PJRT_Memory,
        num_memories: usize,
    }

    /// Arguments of `PJRT_Device_DefaultMemory`.
    args PJRT_Device_DefaultMemory_Args / PJRT_Device_DefaultMemory_Args_STRUCT_SIZE {
        device: *mut PJRT_Device,
        memory: *mut PJRT_Memory,
    }

    /// Arguments of `PJRT_Memory_Id`.
    args PJRT_Memory_Id_Args / PJRT_Memory_Id_Args_STRUCT_SIZE {
        memory: *mut PJRT_Memory,
        id: c_int,
    }

    /// Arguments of `PJRT_Memory_Kind` ("device", "pinned_host", ...).
    args PJRT_Memory_Kind_Args / PJRT_Memory_Kind_Args_STRUCT_SIZE {
        memory: *mut PJRT_Memory,
        kind: *const c_char,
        kind_size: usize,
    }

    /// Arguments of `PJRT_Memory_ToString`.
    args PJRT_Memory_ToString_Args / PJRT_Memory_ToString_Args_STRUCT_SIZE {
        memory: *mut PJRT_Memory,
        to_string: *const c_char,
        to_string_size: usize,
    }
}
