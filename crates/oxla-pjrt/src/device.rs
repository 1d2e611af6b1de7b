//! `PJRT_Device` and `PJRT_Memory`: what a client can place buffers on.

use std::fmt;
use std::sync::Arc;

use crate::api::{c_string, pjrt_call};
use crate::args::PjrtArgs;
use crate::client::ClientInner;
use crate::error::Result;
use crate::ffi;
use crate::named_value::{NamedValue, read_named_values};

/// A device of a client. The handle is owned by the client, which it keeps alive.
#[derive(Clone)]
pub struct Device {
    client: Arc<ClientInner>,
    raw: *mut ffi::PJRT_Device,
}

// SAFETY: device handles are immutable descriptions owned by a thread-safe client.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl Eq for Device {}

impl Device {
    pub(crate) fn new(client: Arc<ClientInner>, raw: *mut ffi::PJRT_Device) -> Self {
        Self { client, raw }
    }

    /// The raw device, for callers that go below oxla-pjrt.
    pub fn raw(&self) -> *mut ffi::PJRT_Device {
        self.raw
    }

    pub(crate) fn client_inner(&self) -> &Arc<ClientInner> {
        &self.client
    }

    fn description(&self) -> Result<*mut ffi::PJRT_DeviceDescription> {
        let mut args = ffi::PJRT_Device_GetDescription_Args::new();
        args.device = self.raw;
        pjrt_call!(&self.client.api, PJRT_Device_GetDescription, &mut args)?;
        Ok(args.device_description)
    }

    /// The device's global id.
    pub fn id(&self) -> Result<i32> {
        let mut args = ffi::PJRT_DeviceDescription_Id_Args::new();
        args.device_description = self.description()?;
        pjrt_call!(&self.client.api, PJRT_DeviceDescription_Id, &mut args)?;
        Ok(args.id)
    }

    /// The index of the process the device belongs to.
    pub fn process_index(&self) -> Result<i32> {
        let mut args = ffi::PJRT_DeviceDescription_ProcessIndex_Args::new();
        args.device_description = self.description()?;
        pjrt_call!(
            &self.client.api,
            PJRT_DeviceDescription_ProcessIndex,
            &mut args
        )?;
        Ok(args.process_index)
    }

    /// The kind of device ("cpu", "NVIDIA H100 80GB HBM3", "TPU v5 lite").
    pub fn kind(&self) -> Result<String> {
        let mut args = ffi::PJRT_DeviceDescription_Kind_Args::new();
        args.device_description = self.description()?;
        pjrt_call!(&self.client.api, PJRT_DeviceDescription_Kind, &mut args)?;
        // SAFETY: the string is owned by the description, alive with the client.
        Ok(unsafe { c_string(args.device_kind, args.device_kind_size) })
    }

    /// Platform-specific attributes (coordinates, core counts, ...).
    pub fn attributes(&self) -> Result<Vec<NamedValue>> {
        let mut args = ffi::PJRT_DeviceDescription_Attributes_Args::new();
        args.device_description = self.description()?;
        pjrt_call!(
            &self.client.api,
            PJRT_DeviceDescription_Attributes,
            &mut args
        )?;
        // SAFETY: the values are owned by the description, alive with the client.
        Ok(unsafe { read_named_values(args.attributes, args.num_attributes) })
    }

    /// A verbose description for logs.
    pub fn debug_string(&self) -> Result<String> {
        let mut args = ffi::PJRT_DeviceDescription_DebugString_Args::new();
        args.device_description = self.description()?;
        pjrt_call!(
            &self.client.api,
            PJRT_DeviceDescription_DebugString,
            &mut args
        )?;
        // SAFETY: the string is owned by the description, alive with the client.
        Ok(unsafe { c_string(args.debug_string, args.debug_string_size) })
    }

    /// A short description, as the plugin prints it (`TFRT_CPU_0`).
    pub fn description_string(&self) -> Result<String> {
        let mut args = ffi::PJRT_DeviceDescription_ToString_Args::new();
        args.device_description = self.description()?;
        pjrt_call!(&self.client.api, PJRT_DeviceDescription_ToString, &mut args)?;
        // SAFETY: the string is owned by the description, alive with the client.
        Ok(unsafe { c_string(args.to_string, args.to_string_size) })
    }

    /// Whether this process can address the device.
    pub fn is_addressable(&self) -> Result<bool> {
        let mut args = ffi::PJRT_Device_IsAddressable_Args::new();
        args.device = self.raw;
        pjrt_call!(&self.client.api, PJRT_Device_IsAddressable, &mut args)?;
        Ok(args.is_addressable)
    }

    /// The device's id on its host (-1 if not addressable).
    pub fn local_hardware_id(&self) -> Result<i32> {
        let mut args = ffi::PJRT_Device_LocalHardwareId_Args::new();
        args.device = self.raw;
        pjrt_call!(&self.client.api, PJRT_Device_LocalHardwareId, &mut args)?;
        Ok(args.local_hardware_id)
    }

    /// The memories this device can address.
    pub fn addressable_memories(&self) -> Result<Vec<Memory>> {
        let mut args = ffi::PJRT_Device_AddressableMemories_Args::new();
        args.device = self.raw;
        pjrt_call!(&self.client.api, PJRT_Device_AddressableMemories, &mut args)?;
        // SAFETY: the array is owned by the client, which is alive.
        Ok(unsafe { Memory::wrap_all(&self.client, args.memories, args.num_memories) })
    }

    /// The memory buffers go to by default.
    pub fn default_memory(&self) -> Result<Memory> {
        let mut args = ffi::PJRT_Device_DefaultMemory_Args::new();
        args.device = self.raw;
        pjrt_call!(&self.client.api, PJRT_Device_DefaultMemory, &mut args)?;
        Ok(Memory {
            client: self.client.clone(),
            raw: args.memory,
        })
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Device({})",
            self.description_string().unwrap_or_else(|e| e.to_string())
        )
    }
}

/// A memory space of a client (device memory, pinned host memory, ...).
#[derive(Clone)]
pub struct Memory {
    client: Arc<ClientInner>,
    raw: *mut ffi::PJRT_Memory,
}

// SAFETY: memory handles are immutable descriptions owned by a thread-safe client.
unsafe impl Send for Memory {}
// SAFETY: as above.
unsafe impl Sync for Memory {}

impl Memory {
    /// The raw handle (owned by the client).
    pub fn raw(&self) -> *mut ffi::PJRT_Memory {
        self.raw
    }

    pub(crate) fn client_inner(&self) -> &Arc<ClientInner> {
        &self.client
    }

    /// # Safety
    /// `memories` must point at `count` memory handles owned by `client`.
    pub(crate) unsafe fn wrap_all(
        client: &Arc<ClientInner>,
        memories: *const *mut ffi::PJRT_Memory,
        count: usize,
    ) -> Vec<Memory> {
        if memories.is_null() || count == 0 {
            return Vec::new();
        }
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(memories, count) }
            .iter()
            .map(|&raw| Memory {
                client: client.clone(),
                raw,
            })
            .collect()
    }

    /// The memory's id.
    pub fn id(&self) -> Result<i32> {
        let mut args = ffi::PJRT_Memory_Id_Args::new();
        args.memory = self.raw;
        pjrt_call!(&self.client.api, PJRT_Memory_Id, &mut args)?;
        Ok(args.id)
    }

    /// The memory's kind ("device", "pinned_host", "unpinned_host").
    pub fn kind(&self) -> Result<String> {
        let mut args = ffi::PJRT_Memory_Kind_Args::new();
        args.memory = self.raw;
        pjrt_call!(&self.client.api, PJRT_Memory_Kind, &mut args)?;
        // SAFETY: the string is owned by the memory, alive with the client.
        Ok(unsafe { c_string(args.kind, args.kind_size) })
    }

    /// A short description, as the plugin prints it.
    pub fn description_string(&self) -> Result<String> {
        let mut args = ffi::PJRT_Memory_ToString_Args::new();
        args.memory = self.raw;
        pjrt_call!(&self.client.api, PJRT_Memory_ToString, &mut args)?;
        // SAFETY: the string is owned by the memory, alive with the client.
        Ok(unsafe { c_string(args.to_string, args.to_string_size) })
    }
}

impl fmt::Debug for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Memory({})",
            self.description_string().unwrap_or_else(|e| e.to_string())
        )
    }
}
