//! Asynchronous host-to-device transfers: buffers created empty, filled
//! later through a `PJRT_AsyncHostToDeviceTransferManager`.

use std::ffi::{c_char, c_int, c_void};

use super::{
    PJRT_Buffer, PJRT_Buffer_MemoryLayout, PJRT_Buffer_Type, PJRT_Client, PJRT_Error_Code,
    PJRT_Event, PJRT_Memory,
};

opaque_types! {
    /// The buffers of one asynchronous transfer, before and while their
    /// data arrives; freed with `PJRT_AsyncHostToDeviceTransferManager_Destroy`.
    PJRT_AsyncHostToDeviceTransferManager,
}

pjrt_structs! {
    /// The element type and dims of one buffer to create.
    args PJRT_ShapeSpec / PJRT_ShapeSpec_STRUCT_SIZE {
        dims: *const i64,
        num_dims: usize,
        element_type: PJRT_Buffer_Type,
    }

    /// Arguments of `PJRT_Client_CreateBuffersForAsyncHostToDevice`: one
    /// buffer per shape spec in `memory` (default layouts when
    /// `device_layouts` is null); returns their transfer manager.
    args PJRT_Client_CreateBuffersForAsyncHostToDevice_Args
        / PJRT_Client_CreateBuffersForAsyncHostToDevice_Args_STRUCT_SIZE
    {
        client: *mut PJRT_Client,
        shape_specs: *mut PJRT_ShapeSpec,
        num_shape_specs: usize,
        device_layouts: *mut *mut PJRT_Buffer_MemoryLayout,
        num_device_layouts: usize,
        memory: *mut PJRT_Memory,
        transfer_manager: *mut PJRT_AsyncHostToDeviceTransferManager,
    }

    /// Arguments of `PJRT_AsyncHostToDeviceTransferManager_Destroy`.
    args PJRT_AsyncHostToDeviceTransferManager_Destroy_Args
        / PJRT_AsyncHostToDeviceTransferManager_Destroy_Args_STRUCT_SIZE
    {
        transfer_manager: *mut PJRT_AsyncHostToDeviceTransferManager,
    }

    /// Arguments of `PJRT_AsyncHostToDeviceTransferManager_TransferData`:
    /// `transfer_size` bytes of `data` at `offset` of buffer `buffer_index`;
    /// `data` must stay valid until the returned event is ready.
    args PJRT_AsyncHostToDeviceTransferManager_TransferData_Args
        / PJRT_AsyncHostToDeviceTransferManager_TransferData_Args_STRUCT_SIZE
    {
        transfer_manager: *mut PJRT_AsyncHostToDeviceTransferManager,
        buffer_index: c_int,
        data: *const c_void,
        offset: i64,
        transfer_size: i64,
        is_last_transfer: bool,
        done_with_h2d_transfer: *mut PJRT_Event,
    }

    /// Arguments of `PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer`:
    /// buffer `buffer_index`, owned by the caller (once per index).
    args PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args
        / PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args_STRUCT_SIZE
    {
        transfer_manager: *mut PJRT_AsyncHostToDeviceTransferManager,
        buffer_index: c_int,
        buffer_out: *mut PJRT_Buffer,
    }

    /// Arguments of `PJRT_AsyncHostToDeviceTransferManager_SetBufferError`:
    /// fails buffer `buffer_index` instead of filling it.
    args PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args
        / PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args_STRUCT_SIZE
    {
        transfer_manager: *mut PJRT_AsyncHostToDeviceTransferManager,
        buffer_index: c_int,
        error_code: PJRT_Error_Code,
        error_message: *const c_char,
        error_message_size: usize,
    }
}
