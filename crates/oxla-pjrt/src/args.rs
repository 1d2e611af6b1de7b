//! Construction of PJRT argument structs with the header's `struct_size`.
//!
//! Every struct oxla hands to the plugin is built with [`PjrtArgs::new`]: zeroed
//! (null pointers, `None` callbacks, zero counts) with `struct_size` set to the
//! header's `<Name>_STRUCT_SIZE` ([`ffi::PjrtStruct::STRUCT_SIZE`]), so a plugin
//! built against a newer or older header knows which fields oxla filled in.

use crate::ffi;

/// A PJRT argument struct: plain C data whose first field is `struct_size`.
pub(crate) trait PjrtArgs: ffi::PjrtStruct {
    /// A zeroed struct with `struct_size` set.
    fn new() -> Self;
}

/// Implements [`PjrtArgs`] for each listed struct, naming its last field
/// for the test below.
macro_rules! pjrt_args {
    ($($ty:ident { last: $last:ident },)*) => {
        $(
            impl PjrtArgs for ffi::$ty {
                fn new() -> Self {
                    // SAFETY: every PJRT argument struct is plain C data (integers,
                    // bools, raw pointers, optional function pointers, unions of
                    // those) for which all-zero bytes are a valid value.
                    let mut args: Self = unsafe { std::mem::zeroed() };
                    args.struct_size = <Self as ffi::PjrtStruct>::STRUCT_SIZE;
                    args
                }
            }
        )*

        /// For each struct oxla sends: its name, the `struct_size` that
        /// [`PjrtArgs::new`] sets, the end of its last field as laid out by the
        /// declarations in `ffi`, and its full Rust size.
        #[cfg(test)]
        pub(crate) fn sent_struct_layouts() -> Vec<(&'static str, usize, usize, usize)> {
            vec![$({
                // SAFETY: as in `new`, all-zero is a valid value of these structs.
                let zeroed: ffi::$ty = unsafe { std::mem::zeroed() };
                (
                    stringify!($ty),
                    <ffi::$ty as PjrtArgs>::new().struct_size,
                    std::mem::offset_of!(ffi::$ty, $last) + std::mem::size_of_val(&zeroed.$last),
                    std::mem::size_of::<ffi::$ty>(),
                )
            }),*]
        }
    };
}

pjrt_args! {
    PJRT_Error_Destroy_Args { last: error },
    PJRT_Error_Message_Args { last: message_size },
    PJRT_Error_GetCode_Args { last: code },
    PJRT_NamedValue { last: value_size },
    PJRT_Plugin_Initialize_Args { last: extension_start },
    PJRT_Plugin_Attributes_Args { last: num_attributes },
    PJRT_Event_Destroy_Args { last: event },
    PJRT_Event_IsReady_Args { last: is_ready },
    PJRT_Event_Await_Args { last: event },
    PJRT_Event_OnReady_Args { last: user_arg },
    PJRT_Client_Create_Args { last: kv_try_get_user_arg },
    PJRT_Client_Destroy_Args { last: client },
    PJRT_Client_PlatformName_Args { last: platform_name_size },
    PJRT_Client_PlatformVersion_Args { last: platform_version_size },
    PJRT_Client_ProcessIndex_Args { last: process_index },
    PJRT_Client_Devices_Args { last: num_devices },
    PJRT_Client_AddressableDevices_Args { last: num_addressable_devices },
    PJRT_Client_AddressableMemories_Args { last: num_addressable_memories },
    PJRT_Program { last: format_size },
    PJRT_Client_Compile_Args { last: executable },
    PJRT_Client_BufferFromHostBuffer_Args { last: buffer },
    PJRT_DeviceDescription_Id_Args { last: id },
    PJRT_DeviceDescription_ProcessIndex_Args { last: process_index },
    PJRT_DeviceDescription_Attributes_Args { last: attributes },
    PJRT_DeviceDescription_Kind_Args { last: device_kind_size },
    PJRT_DeviceDescription_DebugString_Args { last: debug_string_size },
    PJRT_DeviceDescription_ToString_Args { last: to_string_size },
    PJRT_Device_GetDescription_Args { last: device_description },
    PJRT_Device_IsAddressable_Args { last: is_addressable },
    PJRT_Device_LocalHardwareId_Args { last: local_hardware_id },
    PJRT_Device_AddressableMemories_Args { last: num_memories },
    PJRT_Device_DefaultMemory_Args { last: memory },
    PJRT_Memory_Id_Args { last: id },
    PJRT_Memory_Kind_Args { last: kind_size },
    PJRT_Memory_ToString_Args { last: to_string_size },
    PJRT_Executable_Destroy_Args { last: executable },
    PJRT_Executable_Name_Args { last: executable_name_size },
    PJRT_Executable_NumReplicas_Args { last: num_replicas },
    PJRT_Executable_NumPartitions_Args { last: num_partitions },
    PJRT_Executable_NumOutputs_Args { last: num_outputs },
    PJRT_Executable_SizeOfGeneratedCodeInBytes_Args { last: size_in_bytes },
    PJRT_Executable_GetCostAnalysis_Args { last: properties },
    PJRT_Executable_OptimizedProgram_Args { last: program },
    PJRT_Executable_Serialize_Args { last: serialized_executable_deleter },
    PJRT_Executable_OutputElementTypes_Args { last: num_output_types },
    PJRT_Executable_OutputDimensions_Args { last: dim_sizes },
    PJRT_Executable_Fingerprint_Args { last: executable_fingerprint_size },
    PJRT_Executable_GetCompiledMemoryStats_Args { last: peak_memory_in_bytes },
    PJRT_Executable_DeserializeAndLoad_Args { last: overridden_serialized_compile_options_size },
    PJRT_LoadedExecutable_Destroy_Args { last: executable },
    PJRT_LoadedExecutable_GetExecutable_Args { last: executable },
    PJRT_LoadedExecutable_AddressableDevices_Args { last: num_addressable_devices },
    PJRT_ExecuteOptions { last: incarnation_ids },
    PJRT_LoadedExecutable_Execute_Args { last: execute_device },
    PJRT_Buffer_Destroy_Args { last: buffer },
    PJRT_Buffer_ElementType_Args { last: type_ },
    PJRT_Buffer_Dimensions_Args { last: num_dims },
    PJRT_Buffer_OnDeviceSizeInBytes_Args { last: on_device_size_in_bytes },
    PJRT_Buffer_Device_Args { last: device },
    PJRT_Buffer_CopyToDevice_Args { last: dst_buffer },
    PJRT_Buffer_Delete_Args { last: buffer },
    PJRT_Buffer_IsDeleted_Args { last: is_deleted },
    PJRT_Buffer_ToHostBuffer_Args { last: event },
    PJRT_Buffer_ReadyEvent_Args { last: event },
    PJRT_ShapeSpec { last: element_type },
    PJRT_Client_CreateBuffersForAsyncHostToDevice_Args { last: transfer_manager },
    PJRT_AsyncHostToDeviceTransferManager_Destroy_Args { last: transfer_manager },
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args { last: done_with_h2d_transfer },
    PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args { last: buffer_out },
    PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args { last: error_message_size },
}

#[cfg(test)]
mod tests {
    use super::sent_struct_layouts;

    /// Each struct oxla sends carries the `struct_size` that ffi derives, and
    /// that size is where the field named last above ends: a struct declared
    /// in ffi with fields after the one the header ends it with fails here
    /// (the layout test checks the same sizes against the header itself).
    #[test]
    fn every_sent_struct_has_the_header_struct_size() {
        let layouts = sent_struct_layouts();
        assert!(layouts.len() > 50);
        for (name, sent, last_field_end, rust_size) in layouts {
            assert_eq!(
                sent, last_field_end,
                "{name}: struct_size vs end of last field"
            );
            assert!(
                sent <= rust_size,
                "{name}: struct_size {sent} > size_of {rust_size}"
            );
            assert!(
                rust_size - sent < 8,
                "{name}: fields after the declared last field"
            );
        }
    }
}
