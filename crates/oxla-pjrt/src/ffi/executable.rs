//! Executables: `PJRT_Executable` (compiled code and its metadata) and
//! `PJRT_LoadedExecutable` (the same loaded on a client's devices, which
//! executes), serialization, and execution.

use std::ffi::{c_char, c_int};

use super::{
    PJRT_Buffer, PJRT_Buffer_Type, PJRT_Client, PJRT_Device, PJRT_Event, PJRT_NamedValue,
    PJRT_Program,
};

opaque_types! {
    /// A compiled program, independent of devices: its metadata and
    /// serialization.
    PJRT_Executable,
    /// A compiled program loaded on a client's devices.
    PJRT_LoadedExecutable,
    /// The storage behind a serialized executable's bytes, freed with the
    /// deleter `PJRT_Executable_Serialize` returns.
    PJRT_SerializedExecutable,
    /// Per-execution context (`PJRT_ExecuteOptions.context`); oxla passes
    /// none.
    PJRT_ExecuteContext,
    /// A send callback of a host transfer. A complete struct in C; oxla
    /// passes none, so it is opaque here.
    PJRT_SendCallbackInfo,
    /// A receive callback of a host transfer. A complete struct in C; oxla
    /// passes none, so it is opaque here.
    PJRT_RecvCallbackInfo,
}

/// Frees what a `PJRT_Executable_Serialize` call returned.
pub type PJRT_SerializedExecutable_Deleter =
    Option<unsafe extern "C" fn(exec: *mut PJRT_SerializedExecutable)>;

pjrt_structs! {
    /// Arguments of `PJRT_Executable_Destroy`.
    args PJRT_Executable_Destroy_Args / PJRT_Executable_Destroy_Args_STRUCT_SIZE {
        executable: *mut PJRT_Executable,
    }

    /// Arguments of `PJRT_Executable_Name` (owned by the executable).
    args PJRT_Executable_Name_Args / PJRT_Executable_Name_Args_STRUCT_SIZE {
        executable: *mut PJRT_Executable,
        executable_name: *const c_char,
        executable_name_size: usize,
    }

    /// Arguments of `PJRT_Executable_NumReplicas`.
    args PJRT_Executable_NumReplicas_Args / PJRT_Executable_NumReplicas_Args_STRUCT_SIZE {
        executable: *mut PJRT_Executable,
        num_replicas: usize,
    }

    /// Arguments of `PJRT_Executable_NumPartitions`.
    args PJRT_Executable_NumPartitions_Args / PJRT_Executable_NumPartitions_Args_STRUCT_SIZE {
        executable: *mut PJRT_Executable,
        num_partitions: usize,
    }

    /// Arguments of `PJRT_Executable_NumOutputs` (outputs per device).
    args PJRT_Executable_NumOutputs_Args / PJRT_Executable_NumOutputs_Args_STRUCT_SIZE {
        executable: *mut PJRT_Executable,
        num_outputs: usize,
    }

    /// Arguments of `PJRT_Executable_SizeOfGeneratedCodeInBytes`.
    args PJRT_Executable_SizeOfGeneratedCodeInBytes_Args
        / PJRT_Executable_SizeOfGeneratedCodeInBytes_Args_STRUCT_SIZE
    {
        executable: *mut PJRT_Executable,
        size_in_bytes: i64,
    }

    /// Arguments of `PJRT_Executable_GetCostAnalysis` (owned by the
    /// executable; note: the count comes before the array here).
    args PJRT_Executable_GetCostAnalysis_Args
        / PJRT_Executable_GetCostAnalysis_Args_STRUCT_SIZE
    {
        executable: *mut PJRT_Executable,
        num_properties: usize,
        properties: *const PJRT_NamedValue,
    }

    /// Arguments of `PJRT_Executable_OptimizedProgram`: fills `program`
    /// (the optimized HLO module, as [`PJRT_Program`] describes).
    args PJRT_Executable_OptimizedProgram_Args
        / PJRT_Executable_OptimizedProgram_Args_STRUCT_SIZE
    {
        executable: *mut PJRT_Executable,
        program: *mut PJRT_Program,
    }

    /// Arguments of `PJRT_Executable_Serialize`: bytes owned by
    /// `serialized_executable` until its deleter is called.
    args PJRT_Executable_Serialize_Args / PJRT_Executable_Serialize_Args_STRUCT_SIZE {
        executable: *const PJRT_Executable,
        serialized_bytes: *const c_char,
        serialized_bytes_size: usize,
        serialized_executable: *mut PJRT_SerializedExecutable,
        serialized_executable_deleter: PJRT_SerializedExecutable_Deleter,
    }

    /// Arguments of `PJRT_Executable_OutputElementTypes` (owned by the
    /// executable).
    args PJRT_Executable_OutputElementTypes_Args
        / PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE
    {
        executable: *mut PJRT_Executable,
        output_types: *mut PJRT_Buffer_Type,
        num_output_types: usize,
    }

    /// Arguments of `PJRT_Executable_OutputDimensions`: every output's
    /// dims concatenated in `dims`, each output's rank in `dim_sizes`.
    args PJRT_Executable_OutputDimensions_Args
        / PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE
    {
        executable: *mut PJRT_Executable,
        num_outputs: usize,
        dims: *const i64,
        dim_sizes: *const usize,
    }

    /// Arguments of `PJRT_Executable_Fingerprint` (owned by the executable).
    args PJRT_Executable_Fingerprint_Args / PJRT_Executable_Fingerprint_Args_STRUCT_SIZE {
        executable: *mut PJRT_Executable,
        executable_fingerprint: *const c_char,
        executable_fingerprint_size: usize,
    }

    /// Arguments of `PJRT_Executable_GetCompiledMemoryStats`, in bytes.
    args PJRT_Executable_GetCompiledMemoryStats_Args
        / PJRT_Executable_GetCompiledMemoryStats_Args_STRUCT_SIZE
    {
        executable: *mut PJRT_Executable,
        generated_code_size_in_bytes: i64,
        argument_size_in_bytes: i64,
        output_size_in_bytes: i64,
        alias_size_in_bytes: i64,
        temp_size_in_bytes: i64,
        host_generated_code_size_in_bytes: i64,
        host_argument_size_in_bytes: i64,
        host_output_size_in_bytes: i64,
        host_alias_size_in_bytes: i64,
        host_temp_size_in_bytes: i64,
        peak_memory_in_bytes: i64,
    }

    /// Arguments of `PJRT_Executable_DeserializeAndLoad`: bytes from
    /// `PJRT_Executable_Serialize` of the same plugin build, optionally with
    /// other serialized compile options; returns the loaded executable.
    args PJRT_Executable_DeserializeAndLoad_Args
        / PJRT_Executable_DeserializeAndLoad_Args_STRUCT_SIZE
    {
        client: *mut PJRT_Client,
        serialized_executable: *const c_char,
        serialized_executable_size: usize,
        loaded_executable: *mut PJRT_LoadedExecutable,
        overridden_serialized_compile_options: *const c_char,
        overridden_serialized_compile_options_size: usize,
    }

    /// Arguments of `PJRT_LoadedExecutable_Destroy`.
    args PJRT_LoadedExecutable_Destroy_Args / PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE {
        executable: *mut PJRT_LoadedExecutable,
    }

    /// Arguments of `PJRT_LoadedExecutable_GetExecutable`: the executable
    /// behind a loaded one (owned by the caller).
    args PJRT_LoadedExecutable_GetExecutable_Args
        / PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE
    {
        loaded_executable: *mut PJRT_LoadedExecutable,
        executable: *mut PJRT_Executable,
    }

    /// Arguments of `PJRT_LoadedExecutable_AddressableDevices`: the devices
    /// an execution runs on, in the order of its argument lists.
    args PJRT_LoadedExecutable_AddressableDevices_Args
        / PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE
    {
        executable: *mut PJRT_LoadedExecutable,
        addressable_devices: *const *mut PJRT_Device,
        num_addressable_devices: usize,
    }

    /// Options of one execution.
    args PJRT_ExecuteOptions / PJRT_ExecuteOptions_STRUCT_SIZE {
        send_callbacks: *mut *mut PJRT_SendCallbackInfo,
        recv_callbacks: *mut *mut PJRT_RecvCallbackInfo,
        num_send_ops: usize,
        num_recv_ops: usize,
        launch_id: c_int,
        non_donatable_input_indices: *const i64,
        num_non_donatable_input_indices: usize,
        context: *mut PJRT_ExecuteContext,
        call_location: *const c_char,
        num_tasks: usize,
        task_ids: *mut c_int,
        incarnation_ids: *mut i64,
    }

    /// Arguments of `PJRT_LoadedExecutable_Execute`: one argument list and
    /// one output list per device (`num_devices` of each, `num_args`
    /// arguments per list); outputs are written into the caller's lists.
    args PJRT_LoadedExecutable_Execute_Args / PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE {
        executable: *mut PJRT_LoadedExecutable,
        options: *mut PJRT_ExecuteOptions,
        argument_lists: *const *const *mut PJRT_Buffer,
        num_devices: usize,
        num_args: usize,
        output_lists: *const *mut *mut PJRT_Buffer,
        device_complete_events: *mut *mut PJRT_Event,
        execute_device: *mut PJRT_Device,
    }
}
