//! `PJRT_Buffer`: an array on a device.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::api::pjrt_call;
use crate::args::PjrtArgs;
use crate::client::ClientInner;
use crate::device::Device;
use crate::element_type::ElementTypeTags;
use crate::element_type::{ElementType, NativeType};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::ffi;

/// A buffer's element type and dimensions; the dimensions are shared, so
/// that the outputs of an executable take them from its signature without
/// a C call or an allocation.
pub(crate) type ArrayType = (ElementType, Arc<[i64]>);

/// An array on a device. Dropping it releases the device memory (once the
/// computations that use it are done).
pub struct Buffer {
    client: Arc<ClientInner>,
    raw: *mut ffi::PJRT_Buffer,
    /// Element type and dims as the buffer's maker knew them (an output of
    /// a program whose signature gives them): kept outside a `OnceLock`,
    /// whose setting costs more than the rest of making the buffer.
    declared_type: Option<ArrayType>,
    /// Otherwise, element type and dims asked of the plugin once (they never
    /// change), so that checking arguments before an execution costs no C
    /// call.
    array_type: OnceLock<ArrayType>,
    /// Whether this buffer answers for work that may still be running and
    /// that nothing else waits for: the execution (or copy) that defines it.
    /// Cleared once its readiness is seen or a later execution takes it as
    /// an argument; a buffer dropped while set hands its ready event to the
    /// thread's work in flight (see `in_flight`).
    unsettled: AtomicBool,
}

// SAFETY: PjRtBuffer is thread-safe.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

impl Buffer {
    pub(crate) fn from_raw(client: Arc<ClientInner>, raw: *mut ffi::PJRT_Buffer) -> Result<Buffer> {
        Buffer::wrap(client, raw, false, None)
    }

    /// Wraps a buffer whose definition may still be running (an execution's
    /// output, a copy): it answers for that work until it is settled.
    pub(crate) fn from_raw_unsettled(
        client: Arc<ClientInner>,
        raw: *mut ffi::PJRT_Buffer,
    ) -> Result<Buffer> {
        Buffer::wrap(client, raw, true, None)
    }

    /// Wraps a buffer the plugin returned: `unsettled` when it answers for
    /// the work that defines it (an execution's output, a copy), with its
    /// element type and dims when its maker knows them (an output of a
    /// program whose signature gives them), so that neither is ever asked
    /// of the plugin.
    pub(crate) fn wrap(
        client: Arc<ClientInner>,
        raw: *mut ffi::PJRT_Buffer,
        unsettled: bool,
        array_type: Option<ArrayType>,
    ) -> Result<Buffer> {
        if raw.is_null() {
            return Err(Error::Protocol("the plugin returned a null buffer".into()));
        }
        Ok(Buffer {
            client,
            raw,
            declared_type: array_type,
            array_type: OnceLock::new(),
            unsettled: AtomicBool::new(unsettled),
        })
    }

    /// Marks the work that defines this buffer as answered for elsewhere:
    /// it is done, or an execution that takes this buffer (and so waits for
    /// it) answers for it now.
    pub(crate) fn settle(&self) {
        self.unsettled.store(false, Ordering::Relaxed);
    }

    /// When the buffer still answers for its definition, hands that work to
    /// the current thread's work in flight, so that the thread's end (and
    /// the process's exit) waits for it; called before the handle goes.
    fn hand_over_unsettled_work(&self) {
        if self.unsettled.swap(false, Ordering::Relaxed)
            && let Ok(ready) = self.ready_event()
        {
            crate::in_flight::track(ready);
        }
    }

    /// The element type and dims (cached after the first call).
    pub fn array_type(&self) -> Result<(ElementType, &[i64])> {
        if let Some((t, dims)) = self
            .declared_type
            .as_ref()
            .or_else(|| self.array_type.get())
        {
            return Ok((*t, dims));
        }
        let fetched = (self.fetch_element_type()?, Arc::from(self.fetch_dims()?));
        let (t, dims) = self.array_type.get_or_init(|| fetched);
        Ok((*t, dims))
    }

    /// Records the element type and dims the buffer is known to have (an
    /// output of a program whose signature gives them), so that asking
    /// costs no C call.
    pub(crate) fn know_array_type(&self, array_type: ArrayType) {
        let _ = self.array_type.set(array_type);
    }

    /// The raw buffer, for callers that go below oxla-pjrt.
    pub fn raw(&self) -> *mut ffi::PJRT_Buffer {
        self.raw
    }

    pub(crate) fn client_inner(&self) -> &Arc<ClientInner> {
        &self.client
    }

    /// The element type.
    pub fn element_type(&self) -> Result<ElementType> {
        Ok(self.array_type()?.0)
    }

    /// The dimensions.
    pub fn dims(&self) -> Result<Vec<i64>> {
        Ok(self.array_type()?.1.to_vec())
    }

    fn fetch_element_type(&self) -> Result<ElementType> {
        let mut args = ffi::PJRT_Buffer_ElementType_Args::new();
        args.buffer = self.raw;
        pjrt_call!(&self.client.api, PJRT_Buffer_ElementType, &mut args)?;
        ElementType::from_raw(args.type_)
    }

    fn fetch_dims(&self) -> Result<Vec<i64>> {
        let mut args = ffi::PJRT_Buffer_Dimensions_Args::new();
        args.buffer = self.raw;
        pjrt_call!(&self.client.api, PJRT_Buffer_Dimensions, &mut args)?;
        if args.num_dims == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: the array is owned by the buffer, which is alive.
        Ok(unsafe { std::slice::from_raw_parts(args.dims, args.num_dims) }.to_vec())
    }

    /// Bytes the buffer occupies on the device (layout and padding included).
    pub fn on_device_size(&self) -> Result<usize> {
        let mut args = ffi::PJRT_Buffer_OnDeviceSizeInBytes_Args::new();
        args.buffer = self.raw;
        pjrt_call!(&self.client.api, PJRT_Buffer_OnDeviceSizeInBytes, &mut args)?;
        Ok(args.on_device_size_in_bytes)
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> Result<Device> {
        let mut args = ffi::PJRT_Buffer_Device_Args::new();
        args.buffer = self.raw;
        pjrt_call!(&self.client.api, PJRT_Buffer_Device, &mut args)?;
        Ok(Device::new(self.client.clone(), args.device))
    }

    /// A copy of the buffer on `device` of the same client, made by the
    /// plugin without passing through the host (the plugin refuses a copy
    /// to the buffer's own device).
    pub fn copy_to_device(&self, device: &Device) -> Result<Buffer> {
        let mut args = ffi::PJRT_Buffer_CopyToDevice_Args::new();
        args.buffer = self.raw;
        args.dst_device = device.raw();
        pjrt_call!(&self.client.api, PJRT_Buffer_CopyToDevice, &mut args)?;
        // The copy may still be running: the new buffer answers for it.
        Buffer::from_raw_unsettled(self.client.clone(), args.dst_buffer)
    }

    /// An event that is ready when the buffer's value is computed (or failed).
    pub fn ready_event(&self) -> Result<Event> {
        let mut args = ffi::PJRT_Buffer_ReadyEvent_Args::new();
        args.buffer = self.raw;
        pjrt_call!(&self.client.api, PJRT_Buffer_ReadyEvent, &mut args)?;
        Event::from_raw(self.client.api.clone(), args.event)
            .ok_or_else(|| Error::Protocol("PJRT_Buffer_ReadyEvent returned no event".into()))
    }

    /// Whether the buffer's value is computed (or failed), without waiting.
    pub fn is_ready(&self) -> Result<bool> {
        let ready = self.ready_event()?.is_ready()?;
        if ready {
            self.settle();
        }
        Ok(ready)
    }

    /// Waits until the buffer's value is computed; returns the error of the
    /// computation that produced it, if it failed.
    pub fn block_until_ready(&self) -> Result<()> {
        self.ready_event()?.wait()?;
        self.settle();
        Ok(())
    }

    /// Copies the value to the host as row-major bytes. Waits for the value
    /// first, so a failed computation is its error rather than a host
    /// allocation of its size; a size the host cannot hold is an error, not
    /// an abort.
    pub fn to_host_bytes(&self) -> Result<Vec<u8>> {
        self.block_until_ready()?;
        let mut args = ffi::PJRT_Buffer_ToHostBuffer_Args::new();
        args.src = self.raw;
        pjrt_call!(&self.client.api, PJRT_Buffer_ToHostBuffer, &mut args)?;
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(args.dst_size)
            .map_err(|_| Error::HostAllocation {
                bytes: args.dst_size,
            })?;
        self.copy_to_host_uninit(&mut bytes.spare_capacity_mut()[..args.dst_size])?;
        // SAFETY: the copy wrote all `dst_size` bytes (its event completed
        // without error), which `try_reserve_exact` made the capacity.
        unsafe { bytes.set_len(args.dst_size) };
        Ok(bytes)
    }

    /// Copies the value into `dst`, which must have exactly the buffer's size.
    pub fn copy_to_host(&self, dst: &mut [u8]) -> Result<()> {
        // SAFETY: initialized bytes are valid `MaybeUninit`s, and the copy
        // only writes whole bytes into them.
        let dst = unsafe { &mut *(dst as *mut [u8] as *mut [std::mem::MaybeUninit<u8>]) };
        self.copy_to_host_uninit(dst)
    }

    /// Copies the value into `dst` (exactly the buffer's size), which need
    /// not be initialized: a host copy without first zeroing its memory
    /// (one pass over the bytes instead of two). Every byte is written
    /// when this returns `Ok`.
    fn copy_to_host_uninit(&self, dst: &mut [std::mem::MaybeUninit<u8>]) -> Result<()> {
        let (element_type, dims) = self.array_type()?;
        let expected = crate::client::expected_byte_len(element_type, dims)?;
        if dst.len() != expected {
            return Err(Error::InvalidArgument(format!(
                "host destination has {} bytes, the buffer {expected}",
                dst.len()
            )));
        }
        let mut args = ffi::PJRT_Buffer_ToHostBuffer_Args::new();
        args.src = self.raw;
        args.dst = dst.as_mut_ptr().cast();
        args.dst_size = dst.len();
        pjrt_call!(&self.client.api, PJRT_Buffer_ToHostBuffer, &mut args)?;
        if let Some(done) = Event::from_raw(self.client.api.clone(), args.event) {
            done.wait()?;
        }
        // The copy waited for the value: its definition is done.
        self.settle();
        Ok(())
    }

    /// Copies the value to the host as `T`s; an error if `T` is not the
    /// buffer's element type.
    pub fn to_vec<T: NativeType>(&self) -> Result<Vec<T>> {
        let element_type = self.element_type()?;
        if element_type != T::TYPE {
            return Err(Error::InvalidArgument(format!(
                "buffer holds {element_type}, not {}",
                T::TYPE
            )));
        }
        T::from_bytes(&self.to_host_bytes()?)
    }

    /// Frees the device memory now; the handle stays, and using it is an error.
    pub fn delete(&self) -> Result<()> {
        self.hand_over_unsettled_work();
        let mut args = ffi::PJRT_Buffer_Delete_Args::new();
        args.buffer = self.raw;
        pjrt_call!(&self.client.api, PJRT_Buffer_Delete, &mut args)
    }

    /// Whether the device memory was freed (by `delete` or by donation).
    pub fn is_deleted(&self) -> Result<bool> {
        let mut args = ffi::PJRT_Buffer_IsDeleted_Args::new();
        args.buffer = self.raw;
        pjrt_call!(&self.client.api, PJRT_Buffer_IsDeleted, &mut args)?;
        Ok(args.is_deleted)
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.element_type(), self.dims()) {
            (Ok(t), Ok(d)) => write!(f, "Buffer({t}{d:?})"),
            _ => write!(f, "Buffer(<unavailable>)"),
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.hand_over_unsettled_work();
        let mut args = ffi::PJRT_Buffer_Destroy_Args::new();
        args.buffer = self.raw;
        let _ = (|| pjrt_call!(&self.client.api, PJRT_Buffer_Destroy, &mut args))();
    }
}
