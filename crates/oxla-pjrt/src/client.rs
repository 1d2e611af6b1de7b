//! `PJRT_Client`: a connection to one platform's devices, through which
//! programs are compiled and buffers created.

use std::fmt;
use std::sync::Arc;

use crate::api::{Api, c_string, pjrt_call};
use crate::args::PjrtArgs;
use crate::buffer::Buffer;
use crate::compile::{CompileOptions, Program};
use crate::device::{Device, Memory};
use crate::discovery::{Platform, find_plugin};
use crate::element_type::ElementTypeTags;
use crate::element_type::{ElementType, NativeType};
use crate::error::{Error, Result};
use crate::executable::LoadedExecutable;
use crate::ffi;
use crate::key_value::KeyValueCallbacks;
use crate::named_value::{NamedValue, RawNamedValues, Value};

/// Create options whose value type the PJRT plugins fix. Some plugins abort
/// the process on a value of another type (an uncaught C++ exception), so
/// oxla checks these before calling the plugin.
const TYPED_OPTIONS: &[(&str, &str)] = &[
    ("cpu_device_count", "int64"),
    ("max_inflight_computations_per_device", "int64"),
    ("node_id", "int64"),
    ("num_nodes", "int64"),
    ("collective_memory_size", "int64"),
    ("visible_devices", "int64 list"),
    ("memory_fraction", "float"),
    ("preallocate", "bool"),
    ("enable_mock_nccl", "bool"),
    ("should_stage_host_to_device_transfers", "bool"),
    ("allocator", "string"),
    ("platform_name", "string"),
    ("mock_gpu_topology", "string"),
];

/// Named options for `PJRT_Client_Create`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientOptions {
    values: Vec<NamedValue>,
}

impl ClientOptions {
    /// No options: the plugin's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets an option by name (replacing an earlier value of the same name).
    pub fn set(mut self, name: &str, value: Value) -> Self {
        self.values.retain(|v| v.name != name);
        self.values.push(NamedValue::new(name, value));
        self
    }

    /// CPU plugins: how many CPU devices the client exposes (`cpu_device_count`).
    pub fn cpu_device_count(self, count: i64) -> Self {
        self.set("cpu_device_count", Value::Int64(count))
    }

    /// GPU plugins: the fraction of device memory the allocator may use
    /// (`memory_fraction`).
    pub fn gpu_memory_fraction(self, fraction: f32) -> Self {
        self.set("memory_fraction", Value::Float(fraction))
    }

    /// GPU plugins: whether the allocator reserves its memory up front
    /// (`preallocate`).
    pub fn gpu_preallocate(self, preallocate: bool) -> Self {
        self.set("preallocate", Value::Bool(preallocate))
    }

    /// The options, in the order they were set.
    pub fn values(&self) -> &[NamedValue] {
        &self.values
    }

    /// An error naming the first option whose value has a type other than
    /// the one plugins expect for that name.
    pub fn check_types(&self) -> Result<()> {
        for v in &self.values {
            if let Some((_, expected)) = TYPED_OPTIONS.iter().find(|(name, _)| *name == v.name)
                && v.value.type_name() != *expected
            {
                return Err(Error::InvalidArgument(format!(
                    "client option {:?} must be {expected}, got {} {}",
                    v.name,
                    v.value.type_name(),
                    v.value
                )));
            }
        }
        Ok(())
    }
}

/// The owner of a `PJRT_Client`; buffers, executables and devices keep it
/// alive through an `Arc`, so the client is destroyed after all of them.
pub(crate) struct ClientInner {
    pub(crate) api: Arc<Api>,
    pub(crate) raw: *mut ffi::PJRT_Client,
    /// The store the plugin calls back into, if the client was made with
    /// one; dropped after the client is destroyed (fields drop after
    /// `Drop::drop`).
    _key_value: Option<Box<KeyValueCallbacks>>,
}

// SAFETY: PjRtClient is thread-safe; the C API may be called from any thread.
unsafe impl Send for ClientInner {}
// SAFETY: as above.
unsafe impl Sync for ClientInner {}

impl Drop for ClientInner {
    fn drop(&mut self) {
        let mut args = ffi::PJRT_Client_Destroy_Args::new();
        args.client = self.raw;
        let _ = (|| pjrt_call!(&self.api, PJRT_Client_Destroy, &mut args))();
    }
}

/// A PJRT client. Cloning is cheap and shares the client.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<ClientInner>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("plugin", &self.inner.api.path())
            .field("platform", &self.platform_name().unwrap_or_default())
            .finish()
    }
}

impl Client {
    /// Creates a client of a loaded plugin.
    pub fn new(api: Arc<Api>, options: &ClientOptions) -> Result<Client> {
        Self::create(api, options, None)
    }

    /// Creates a client of a loaded plugin that shares `key_value` with
    /// the other processes of its job (for multi-node clients; the plugin
    /// learns its place from options such as `node_id` and `num_nodes`).
    pub fn with_key_value_store(
        api: Arc<Api>,
        options: &ClientOptions,
        key_value: KeyValueCallbacks,
    ) -> Result<Client> {
        Self::create(api, options, Some(Box::new(key_value)))
    }

    fn create(
        api: Arc<Api>,
        options: &ClientOptions,
        key_value: Option<Box<KeyValueCallbacks>>,
    ) -> Result<Client> {
        options.check_types()?;
        let raw_options = RawNamedValues::new(options.values())?;
        let mut args = ffi::PJRT_Client_Create_Args::new();
        args.create_options = raw_options.as_ptr();
        args.num_options = raw_options.len();
        if let Some(callbacks) = &key_value {
            callbacks.install(&mut args);
        }
        pjrt_call!(&api, PJRT_Client_Create, &mut args)?;
        if args.client.is_null() {
            return Err(Error::Protocol(
                "PJRT_Client_Create returned no client".into(),
            ));
        }
        Ok(Client {
            inner: Arc::new(ClientInner {
                api,
                raw: args.client,
                _key_value: key_value,
            }),
        })
    }

    /// Finds the plugin for `platform` (see [`find_plugin`]), loads it with
    /// the libraries it needs ([`Api::load_for`]) and creates a client with
    /// `options`.
    pub fn for_platform(platform: Platform, options: &ClientOptions) -> Result<Client> {
        Self::create(Self::platform_api(platform)?, options, None)
    }

    /// [`for_platform`](Self::for_platform) with a job's key-value store
    /// (see [`with_key_value_store`](Self::with_key_value_store)).
    pub fn for_platform_with_key_value_store(
        platform: Platform,
        options: &ClientOptions,
        key_value: KeyValueCallbacks,
    ) -> Result<Client> {
        Self::create(
            Self::platform_api(platform)?,
            options,
            Some(Box::new(key_value)),
        )
    }

    /// The plugin of `platform`, found and loaded with its libraries.
    fn platform_api(platform: Platform) -> Result<Arc<Api>> {
        let path = find_plugin(platform, None)?;
        Api::load_for(platform, &path)
    }

    /// A CPU client with the plugin's default options.
    pub fn cpu() -> Result<Client> {
        Client::for_platform(Platform::Cpu, &ClientOptions::new())
    }

    /// The plugin this client belongs to.
    pub fn api(&self) -> &Arc<Api> {
        &self.inner.api
    }

    /// The raw client, for callers that go below oxla-pjrt.
    pub fn raw(&self) -> *mut ffi::PJRT_Client {
        self.inner.raw
    }

    /// The platform's name ("cpu", "cuda", "tpu").
    pub fn platform_name(&self) -> Result<String> {
        let mut args = ffi::PJRT_Client_PlatformName_Args::new();
        args.client = self.inner.raw;
        pjrt_call!(&self.inner.api, PJRT_Client_PlatformName, &mut args)?;
        // SAFETY: the string is owned by the client, which is alive.
        Ok(unsafe { c_string(args.platform_name, args.platform_name_size) })
    }

    /// The compile options oxla uses on this client's platform: one replica
    /// and partition, plus the settings the platform needs for correct
    /// results ([`CompileOptions::for_platform`]) and those its plugin's
    /// preparation found (`xla_gpu_cuda_data_dir`, see
    /// [`crate::prepare_plugin`]); plain defaults for a platform oxla does
    /// not know.
    pub fn default_compile_options(&self) -> crate::CompileOptions {
        let base = match self.platform_name().ok().and_then(|n| n.parse().ok()) {
            Some(platform) => crate::CompileOptions::for_platform(platform),
            None => crate::CompileOptions::new(),
        };
        let prepared = crate::preparation_of(self.inner.api.path());
        prepared
            .iter()
            .flat_map(|p| p.compile_overrides.iter())
            .fold(base, |options, (name, value)| {
                options.option_override(name, value.clone())
            })
    }

    /// The platform's version string.
    pub fn platform_version(&self) -> Result<String> {
        let mut args = ffi::PJRT_Client_PlatformVersion_Args::new();
        args.client = self.inner.raw;
        pjrt_call!(&self.inner.api, PJRT_Client_PlatformVersion, &mut args)?;
        // SAFETY: the string is owned by the client, which is alive.
        Ok(unsafe { c_string(args.platform_version, args.platform_version_size) })
    }

    /// This process's index among the processes of a multi-host client.
    pub fn process_index(&self) -> Result<i32> {
        let mut args = ffi::PJRT_Client_ProcessIndex_Args::new();
        args.client = self.inner.raw;
        pjrt_call!(&self.inner.api, PJRT_Client_ProcessIndex, &mut args)?;
        Ok(args.process_index)
    }

    /// Every device of the platform, addressable from this process or not.
    pub fn devices(&self) -> Result<Vec<Device>> {
        let mut args = ffi::PJRT_Client_Devices_Args::new();
        args.client = self.inner.raw;
        pjrt_call!(&self.inner.api, PJRT_Client_Devices, &mut args)?;
        // SAFETY: the array is owned by the client, which is alive.
        Ok(unsafe { self.wrap_devices(args.devices, args.num_devices) })
    }

    /// The devices this process can address.
    pub fn addressable_devices(&self) -> Result<Vec<Device>> {
        let mut args = ffi::PJRT_Client_AddressableDevices_Args::new();
        args.client = self.inner.raw;
        pjrt_call!(&self.inner.api, PJRT_Client_AddressableDevices, &mut args)?;
        // SAFETY: the array is owned by the client, which is alive.
        Ok(unsafe { self.wrap_devices(args.addressable_devices, args.num_addressable_devices) })
    }

    /// The memories this process can address.
    pub fn addressable_memories(&self) -> Result<Vec<Memory>> {
        let mut args = ffi::PJRT_Client_AddressableMemories_Args::new();
        args.client = self.inner.raw;
        pjrt_call!(&self.inner.api, PJRT_Client_AddressableMemories, &mut args)?;
        // SAFETY: the array is owned by the client, which is alive.
        Ok(unsafe {
            Memory::wrap_all(
                &self.inner,
                args.addressable_memories,
                args.num_addressable_memories,
            )
        })
    }

    /// # Safety
    /// `devices` must point at `count` device handles owned by this client.
    pub(crate) unsafe fn wrap_devices(
        &self,
        devices: *const *mut ffi::PJRT_Device,
        count: usize,
    ) -> Vec<Device> {
        if devices.is_null() || count == 0 {
            return Vec::new();
        }
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(devices, count) }
            .iter()
            .map(|&raw| Device::new(self.inner.clone(), raw))
            .collect()
    }

    /// The first addressable device: where single-device work goes by default.
    pub fn default_device(&self) -> Result<Device> {
        self.addressable_devices()?
            .into_iter()
            .next()
            .ok_or_else(|| Error::Protocol("the client has no addressable device".into()))
    }

    /// Readies this client's plugin for `program` before it is compiled
    /// or its executable loaded: a program that calls JAX's LAPACK
    /// targets gets oxla's handlers for them ([`Client::enable_lapack`]).
    pub fn prepare_for(&self, program: &Program) -> Result<()> {
        if crate::lapack::calls_lapack(program.code()) {
            self.enable_lapack()?;
        }
        Ok(())
    }

    /// Compiles a program (StableHLO text or bytecode) for this client,
    /// readied for it first ([`Client::prepare_for`]).
    pub fn compile(&self, program: &Program, options: &CompileOptions) -> Result<LoadedExecutable> {
        self.prepare_for(program)?;
        let options_bytes = options.to_proto_bytes()?;
        let format = program.format().as_str();
        let mut raw_program = ffi::PJRT_Program::new();
        raw_program.code = program.code().as_ptr().cast_mut().cast();
        raw_program.code_size = program.code().len();
        raw_program.format = format.as_ptr().cast();
        raw_program.format_size = format.len();
        let mut args = ffi::PJRT_Client_Compile_Args::new();
        args.client = self.inner.raw;
        args.program = &raw_program;
        args.compile_options = options_bytes.as_ptr().cast();
        args.compile_options_size = options_bytes.len();
        pjrt_call!(&self.inner.api, PJRT_Client_Compile, &mut args)?;
        LoadedExecutable::new(self.inner.clone(), args.executable)
    }

    /// Loads an executable serialized by [`LoadedExecutable::serialize`] with
    /// the same plugin build.
    pub fn deserialize_and_load(&self, serialized: &[u8]) -> Result<LoadedExecutable> {
        let mut args = ffi::PJRT_Executable_DeserializeAndLoad_Args::new();
        args.client = self.inner.raw;
        args.serialized_executable = serialized.as_ptr().cast();
        args.serialized_executable_size = serialized.len();
        pjrt_call!(
            &self.inner.api,
            PJRT_Executable_DeserializeAndLoad,
            &mut args
        )?;
        LoadedExecutable::new(self.inner.clone(), args.loaded_executable)
    }

    /// Copies host bytes (row-major, little-endian) of `element_type` and
    /// shape `dims` into a new buffer on `device` (the default device when
    /// `None`). The bytes are copied before this returns.
    pub fn buffer_from_bytes(
        &self,
        bytes: &[u8],
        element_type: ElementType,
        dims: &[i64],
        device: Option<&Device>,
    ) -> Result<Buffer> {
        let expected = expected_byte_len(element_type, dims)?;
        if bytes.len() != expected {
            return Err(Error::InvalidArgument(format!(
                "{} bytes given for a {element_type}{dims:?} buffer, which needs {expected}",
                bytes.len()
            )));
        }
        let device = match device {
            Some(d) => {
                self.check_owns(d.client_inner())?;
                d.raw()
            }
            None => self.default_device()?.raw(),
        };
        let mut args = ffi::PJRT_Client_BufferFromHostBuffer_Args::new();
        args.client = self.inner.raw;
        args.data = bytes.as_ptr().cast();
        args.type_ = element_type.to_raw();
        args.dims = dims.as_ptr();
        args.num_dims = dims.len();
        args.host_buffer_semantics = ffi::PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
        args.device = device;
        pjrt_call!(&self.inner.api, PJRT_Client_BufferFromHostBuffer, &mut args)?;
        // The data was copied during the call; the done event carries nothing
        // more, and dropping it destroys it.
        drop(crate::event::Event::from_raw(
            self.inner.api.clone(),
            args.done_with_host_buffer,
        ));
        // The copy to the device may still be running (GPUs): the buffer
        // answers for it until it is settled (see `in_flight`).
        Buffer::from_raw_unsettled(self.inner.clone(), args.buffer)
    }

    /// Copies a slice of host values into a new buffer of shape `dims`.
    pub fn buffer_from_slice<T: NativeType>(
        &self,
        values: &[T],
        dims: &[i64],
        device: Option<&Device>,
    ) -> Result<Buffer> {
        self.buffer_from_bytes(T::as_bytes(values), T::TYPE, dims, device)
    }

    /// Whether `buffer` belongs to this very client.
    pub fn owns(&self, buffer: &Buffer) -> bool {
        Arc::ptr_eq(&self.inner, buffer.client_inner())
    }

    /// An error unless `other` is this very client (handles of one client
    /// passed to another are undefined behaviour in the C API).
    pub(crate) fn check_owns(&self, other: &Arc<ClientInner>) -> Result<()> {
        check_same_client(&self.inner, other)
    }
}

/// An error unless `a` and `b` are the same client.
pub(crate) fn check_same_client(a: &Arc<ClientInner>, b: &Arc<ClientInner>) -> Result<()> {
    if Arc::ptr_eq(a, b) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(
            "a buffer or device of another PJRT client was passed to this one".into(),
        ))
    }
}

/// Bytes of a dense array of `element_type` and `dims`; an error for negative
/// dimensions or a size that overflows.
pub fn expected_byte_len(element_type: ElementType, dims: &[i64]) -> Result<usize> {
    dims.iter().try_fold(element_type.byte_size(), |acc, &d| {
        let d = usize::try_from(d).map_err(|_| {
            Error::InvalidArgument(format!("negative dimension {d} in shape {dims:?}"))
        })?;
        acc.checked_mul(d)
            .ok_or_else(|| Error::InvalidArgument(format!("shape {dims:?} is too large")))
    })
}
