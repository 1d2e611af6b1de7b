//! `PJRT_AsyncHostToDeviceTransferManager`: device buffers that exist before
//! their data does. Computations can be enqueued on them at once; they run
//! when the data arrives, and fail with the given error if it never does.

use std::sync::{Arc, Mutex};

use crate::api::pjrt_call;
use crate::args::PjrtArgs;
use crate::buffer::Buffer;
use crate::client::{Client, ClientInner, expected_byte_len};
use crate::device::Memory;
use crate::element_type::ElementType;
use crate::element_type::ElementTypeTags;
use crate::error::{Error, ErrorCode, Result};
use crate::event::Event;
use crate::ffi;

/// What has happened to one buffer of a transfer.
#[derive(Debug, Default, Clone, Copy)]
struct Slot {
    retrieved: bool,
    /// Its data was sent or it was failed; nothing more may be sent.
    settled: bool,
}

/// Buffers created empty on a device, filled (or failed) later from the host.
///
/// Each buffer is retrieved once with [`AsyncTransfer::retrieve_buffer`],
/// then either filled with [`AsyncTransfer::transfer`] or failed with
/// [`AsyncTransfer::set_buffer_error`]. Dropping the transfer fails every
/// buffer still waiting with `CANCELLED`, so nothing waits forever.
pub struct AsyncTransfer {
    client: Arc<ClientInner>,
    raw: *mut ffi::PJRT_AsyncHostToDeviceTransferManager,
    specs: Vec<(ElementType, Vec<i64>)>,
    slots: Mutex<Vec<Slot>>,
}

// SAFETY: the transfer manager is thread-safe in PJRT; oxla's own state is
// behind a mutex.
unsafe impl Send for AsyncTransfer {}
// SAFETY: as above.
unsafe impl Sync for AsyncTransfer {}

impl Client {
    /// Creates one empty buffer per `(element type, dims)` in `memory` (the
    /// default device's default memory when `None`), to be filled later.
    pub fn create_buffers_for_async_host_to_device(
        &self,
        specs: &[(ElementType, &[i64])],
        memory: Option<&Memory>,
    ) -> Result<AsyncTransfer> {
        let memory = match memory {
            Some(m) => {
                self.check_owns(m.client_inner())?;
                m.raw()
            }
            None => self.default_device()?.default_memory()?.raw(),
        };
        for (element_type, dims) in specs {
            expected_byte_len(*element_type, dims)?;
        }
        let mut shape_specs: Vec<ffi::PJRT_ShapeSpec> = specs
            .iter()
            .map(|(element_type, dims)| {
                let mut spec = ffi::PJRT_ShapeSpec::new();
                spec.dims = dims.as_ptr();
                spec.num_dims = dims.len();
                spec.element_type = element_type.to_raw();
                spec
            })
            .collect();
        let mut args = ffi::PJRT_Client_CreateBuffersForAsyncHostToDevice_Args::new();
        args.client = self.inner.raw;
        args.shape_specs = shape_specs.as_mut_ptr();
        args.num_shape_specs = shape_specs.len();
        args.memory = memory;
        pjrt_call!(
            &self.inner.api,
            PJRT_Client_CreateBuffersForAsyncHostToDevice,
            &mut args
        )?;
        if args.transfer_manager.is_null() {
            return Err(Error::Protocol(
                "PJRT_Client_CreateBuffersForAsyncHostToDevice returned no transfer manager".into(),
            ));
        }
        Ok(AsyncTransfer {
            client: self.inner.clone(),
            raw: args.transfer_manager,
            specs: specs.iter().map(|(t, d)| (*t, d.to_vec())).collect(),
            slots: Mutex::new(vec![Slot::default(); specs.len()]),
        })
    }
}

impl AsyncTransfer {
    /// How many buffers the transfer fills.
    pub fn buffer_count(&self) -> usize {
        self.specs.len()
    }

    /// Takes buffer `index` (once); it can be used at once, and computations
    /// on it wait for its data.
    pub fn retrieve_buffer(&self, index: usize) -> Result<Buffer> {
        self.claim(index, "retrieved", |slot| &mut slot.retrieved)?;
        let mut args = ffi::PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args::new();
        args.transfer_manager = self.raw;
        args.buffer_index = index as i32;
        pjrt_call!(
            &self.client.api,
            PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer,
            &mut args
        )?;
        Buffer::from_raw(self.client.clone(), args.buffer_out)
    }

    /// Sends the whole of buffer `index`'s data (row-major bytes, exactly its
    /// size). The bytes are kept until the plugin is done with them; the
    /// returned event is ready then.
    pub fn transfer(&self, index: usize, data: Vec<u8>) -> Result<Event> {
        let (element_type, dims) = self.spec(index)?;
        let expected = expected_byte_len(*element_type, dims)?;
        if data.len() != expected {
            return Err(Error::InvalidArgument(format!(
                "{} bytes given for buffer {index} ({element_type}{dims:?}) of an async transfer, which needs {expected}",
                data.len()
            )));
        }
        self.claim(index, "filled or failed", |slot| &mut slot.settled)?;
        let mut args = ffi::PJRT_AsyncHostToDeviceTransferManager_TransferData_Args::new();
        args.transfer_manager = self.raw;
        args.buffer_index = index as i32;
        args.data = data.as_ptr().cast();
        args.offset = 0;
        args.transfer_size = data.len() as i64;
        args.is_last_transfer = true;
        pjrt_call!(
            &self.client.api,
            PJRT_AsyncHostToDeviceTransferManager_TransferData,
            &mut args
        )?;
        let Some(done) = Event::from_raw(self.client.api.clone(), args.done_with_h2d_transfer)
        else {
            // No event: the plugin copied the data during the call.
            return Err(Error::Protocol(
                "PJRT_AsyncHostToDeviceTransferManager_TransferData returned no event".into(),
            ));
        };
        // The plugin may read `data` until `done` is ready: the callback keeps
        // it alive until then, and counts the transfer as this thread's work
        // (see `in_flight`); if the plugin takes no callback or the work
        // cannot be counted, wait here.
        let data = Arc::new(data);
        let counted = crate::in_flight::begin();
        let uncounted = counted.is_none();
        let kept = data.clone();
        if done.on_ready(move |_| drop((kept, counted))).is_err() || uncounted {
            done.wait()?;
        }
        drop(data);
        Ok(done)
    }

    /// Fails buffer `index`: every computation that reads it, and every
    /// wait on them, reports `code` and `message`.
    pub fn set_buffer_error(&self, index: usize, code: ErrorCode, message: &str) -> Result<()> {
        self.spec(index)?;
        self.claim(index, "filled or failed", |slot| &mut slot.settled)?;
        self.fail(index, code, message)
    }

    fn fail(&self, index: usize, code: ErrorCode, message: &str) -> Result<()> {
        let mut args = ffi::PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args::new();
        args.transfer_manager = self.raw;
        args.buffer_index = index as i32;
        args.error_code = code.to_raw();
        args.error_message = message.as_ptr().cast();
        args.error_message_size = message.len();
        pjrt_call!(
            &self.client.api,
            PJRT_AsyncHostToDeviceTransferManager_SetBufferError,
            &mut args
        )
    }

    fn spec(&self, index: usize) -> Result<&(ElementType, Vec<i64>)> {
        self.specs.get(index).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "buffer {index} of an async transfer of {} buffers",
                self.specs.len()
            ))
        })
    }

    /// Sets the flag `field` of slot `index`, or says it was already set.
    fn claim(
        &self,
        index: usize,
        what: &str,
        field: impl Fn(&mut Slot) -> &mut bool,
    ) -> Result<()> {
        self.spec(index)?;
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let flag = field(&mut slots[index]);
        if *flag {
            return Err(Error::InvalidArgument(format!(
                "buffer {index} of this async transfer was already {what}"
            )));
        }
        *flag = true;
        Ok(())
    }
}

impl Drop for AsyncTransfer {
    fn drop(&mut self) {
        let slots = self
            .slots
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for (index, slot) in slots.iter().enumerate() {
            if !slot.settled {
                let _ = self.fail(
                    index,
                    ErrorCode::Cancelled,
                    "the async transfer was dropped before this buffer's data was sent",
                );
            }
        }
        let destroy = || -> Result<()> {
            let mut args = ffi::PJRT_AsyncHostToDeviceTransferManager_Destroy_Args::new();
            args.transfer_manager = self.raw;
            pjrt_call!(
                &self.client.api,
                PJRT_AsyncHostToDeviceTransferManager_Destroy,
                &mut args
            )
        };
        let _ = destroy();
    }
}
