//! `PJRT_LoadedExecutable`: a compiled program loaded on devices, its
//! metadata, execution and serialization.

use std::borrow::Borrow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use smallvec::SmallVec;

use crate::api::{c_string, pjrt_call};
use crate::args::PjrtArgs;
use crate::buffer::{ArrayType, Buffer};
use crate::client::{ClientInner, check_same_client};
use crate::device::Device;
use crate::element_type::ElementType;
use crate::element_type::ElementTypeTags;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::ffi;
use crate::named_value::{NamedValue, read_named_values};
use crate::program_shape::{ProgramShape, Shape};

/// Options of one execution.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecuteOptions {
    /// Inputs whose buffers must not be donated even where the program aliases
    /// them with an output. Inputs not listed here may be donated (consumed)
    /// when the program declares an alias for them.
    pub non_donatable_input_indices: Vec<i64>,
    /// An id shared by the executions of one multi-device launch (0: unset).
    pub launch_id: i32,
}

/// Memory the compiled program needs, as the compiler planned it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompiledMemoryStats {
    /// Size of the generated code.
    pub generated_code_size_in_bytes: i64,
    /// Size of the arguments.
    pub argument_size_in_bytes: i64,
    /// Size of the outputs.
    pub output_size_in_bytes: i64,
    /// Bytes shared between arguments and outputs (donation).
    pub alias_size_in_bytes: i64,
    /// Size of temporaries.
    pub temp_size_in_bytes: i64,
    /// Peak memory of one execution (0 where the plugin does not report it).
    pub peak_memory_in_bytes: i64,
}

struct ExecutableInner {
    client: Arc<ClientInner>,
    raw: *mut ffi::PJRT_LoadedExecutable,
    executable: *mut ffi::PJRT_Executable,
    num_outputs: usize,
    devices: Vec<*mut ffi::PJRT_Device>,
    program_shape: OnceLock<ProgramShape>,
    /// Each output's element type and dims as the program's signature gives
    /// them, when they matched the first execution's buffers (`None` when
    /// they did not, or the signature does not tell): later outputs take
    /// them without asking the plugin, so passing an output to the next
    /// execution costs no C call for its argument check.
    output_types: OnceLock<Option<Vec<ArrayType>>>,
}

// SAFETY: PjRtLoadedExecutable is thread-safe: one executable may run from
// several threads at once.
unsafe impl Send for ExecutableInner {}
// SAFETY: as above.
unsafe impl Sync for ExecutableInner {}

impl Drop for ExecutableInner {
    fn drop(&mut self) {
        let api = &self.client.api;
        let mut exe = ffi::PJRT_Executable_Destroy_Args::new();
        exe.executable = self.executable;
        let _ = (|| pjrt_call!(api, PJRT_Executable_Destroy, &mut exe))();
        let mut loaded = ffi::PJRT_LoadedExecutable_Destroy_Args::new();
        loaded.executable = self.raw;
        let _ = (|| pjrt_call!(api, PJRT_LoadedExecutable_Destroy, &mut loaded))();
    }
}

/// A compiled program loaded on its devices. Cloning is cheap and shares it;
/// it may be executed from several threads at once.
#[derive(Clone)]
pub struct LoadedExecutable {
    inner: Arc<ExecutableInner>,
}

impl fmt::Debug for LoadedExecutable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedExecutable")
            .field("name", &self.name().unwrap_or_default())
            .field("num_outputs", &self.inner.num_outputs)
            .field("num_devices", &self.inner.devices.len())
            .finish()
    }
}

impl LoadedExecutable {
    pub(crate) fn new(
        client: Arc<ClientInner>,
        raw: *mut ffi::PJRT_LoadedExecutable,
    ) -> Result<Self> {
        if raw.is_null() {
            return Err(Error::Protocol(
                "the plugin returned a null executable".into(),
            ));
        }
        let api = client.api.clone();
        let mut get = ffi::PJRT_LoadedExecutable_GetExecutable_Args::new();
        get.loaded_executable = raw;
        let got = pjrt_call!(&api, PJRT_LoadedExecutable_GetExecutable, &mut get);
        // The owner (whose Drop releases both handles) is built only once both
        // are known; until then, release the loaded executable by hand.
        if let Err(e) = got {
            let mut loaded = ffi::PJRT_LoadedExecutable_Destroy_Args::new();
            loaded.executable = raw;
            let _ = (|| pjrt_call!(&api, PJRT_LoadedExecutable_Destroy, &mut loaded))();
            return Err(e);
        }
        let mut inner = ExecutableInner {
            client,
            raw,
            executable: get.executable,
            num_outputs: 0,
            devices: Vec::new(),
            program_shape: OnceLock::new(),
            output_types: OnceLock::new(),
        };
        let mut outputs = ffi::PJRT_Executable_NumOutputs_Args::new();
        outputs.executable = inner.executable;
        pjrt_call!(&api, PJRT_Executable_NumOutputs, &mut outputs)?;
        inner.num_outputs = outputs.num_outputs;
        let mut devices = ffi::PJRT_LoadedExecutable_AddressableDevices_Args::new();
        devices.executable = raw;
        pjrt_call!(&api, PJRT_LoadedExecutable_AddressableDevices, &mut devices)?;
        if !devices.addressable_devices.is_null() {
            // SAFETY: the array is owned by the executable, which is alive.
            inner.devices = unsafe {
                std::slice::from_raw_parts(
                    devices.addressable_devices,
                    devices.num_addressable_devices,
                )
            }
            .to_vec();
        }
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// The raw loaded executable, for callers that go below oxla-pjrt.
    pub fn raw(&self) -> *mut ffi::PJRT_LoadedExecutable {
        self.inner.raw
    }

    /// Number of outputs of one execution on one device.
    pub fn num_outputs(&self) -> usize {
        self.inner.num_outputs
    }

    /// The devices the executable runs on, one per (replica, partition).
    pub fn addressable_devices(&self) -> Vec<Device> {
        self.inner
            .devices
            .iter()
            .map(|&raw| Device::new(self.inner.client.clone(), raw))
            .collect()
    }

    /// The program's name.
    pub fn name(&self) -> Result<String> {
        let mut args = ffi::PJRT_Executable_Name_Args::new();
        args.executable = self.inner.executable;
        pjrt_call!(&self.inner.client.api, PJRT_Executable_Name, &mut args)?;
        // SAFETY: the string is owned by the executable, which is alive.
        Ok(unsafe { c_string(args.executable_name, args.executable_name_size) })
    }

    /// Number of replicas it was compiled for.
    pub fn num_replicas(&self) -> Result<usize> {
        let mut args = ffi::PJRT_Executable_NumReplicas_Args::new();
        args.executable = self.inner.executable;
        pjrt_call!(
            &self.inner.client.api,
            PJRT_Executable_NumReplicas,
            &mut args
        )?;
        Ok(args.num_replicas)
    }

    /// Number of partitions it was compiled for.
    pub fn num_partitions(&self) -> Result<usize> {
        let mut args = ffi::PJRT_Executable_NumPartitions_Args::new();
        args.executable = self.inner.executable;
        pjrt_call!(
            &self.inner.client.api,
            PJRT_Executable_NumPartitions,
            &mut args
        )?;
        Ok(args.num_partitions)
    }

    /// The element type of each output.
    pub fn output_element_types(&self) -> Result<Vec<ElementType>> {
        let mut args = ffi::PJRT_Executable_OutputElementTypes_Args::new();
        args.executable = self.inner.executable;
        pjrt_call!(
            &self.inner.client.api,
            PJRT_Executable_OutputElementTypes,
            &mut args
        )?;
        if args.num_output_types == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: the array is owned by the executable, which is alive.
        unsafe { std::slice::from_raw_parts(args.output_types, args.num_output_types) }
            .iter()
            .map(|&t| ElementType::from_raw(t))
            .collect()
    }

    /// The dimensions of each output.
    pub fn output_dimensions(&self) -> Result<Vec<Vec<i64>>> {
        let mut args = ffi::PJRT_Executable_OutputDimensions_Args::new();
        args.executable = self.inner.executable;
        pjrt_call!(
            &self.inner.client.api,
            PJRT_Executable_OutputDimensions,
            &mut args
        )?;
        if args.num_outputs == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: the arrays are owned by the executable, which is alive:
        // `dim_sizes` has one rank per output, `dims` their concatenation.
        let ranks = unsafe { std::slice::from_raw_parts(args.dim_sizes, args.num_outputs) };
        let total: usize = ranks.iter().sum();
        let dims: &[i64] = if total == 0 {
            &[]
        } else {
            // SAFETY: as above.
            unsafe { std::slice::from_raw_parts(args.dims, total) }
        };
        let mut offset = 0;
        Ok(ranks
            .iter()
            .map(|&rank| {
                let d = dims[offset..offset + rank].to_vec();
                offset += rank;
                d
            })
            .collect())
    }

    /// A fingerprint of the compiled code, where the plugin provides one.
    pub fn fingerprint(&self) -> Result<Option<String>> {
        let mut args = ffi::PJRT_Executable_Fingerprint_Args::new();
        args.executable = self.inner.executable;
        let called = pjrt_call!(
            &self.inner.client.api,
            PJRT_Executable_Fingerprint,
            &mut args
        );
        Ok(unimplemented_as_none(called)?.and_then(|()| {
            // SAFETY: the string is owned by the executable, which is alive.
            (!args.executable_fingerprint.is_null()).then(|| unsafe {
                c_string(
                    args.executable_fingerprint,
                    args.executable_fingerprint_size,
                )
            })
        }))
    }

    /// The compiler's cost estimates (flops, bytes accessed, ...); `None`
    /// where the plugin has no cost model.
    pub fn cost_analysis(&self) -> Result<Option<Vec<NamedValue>>> {
        let mut args = ffi::PJRT_Executable_GetCostAnalysis_Args::new();
        args.executable = self.inner.executable;
        let called = pjrt_call!(
            &self.inner.client.api,
            PJRT_Executable_GetCostAnalysis,
            &mut args
        );
        Ok(unimplemented_as_none(called)?.map(|()| {
            // SAFETY: the values are owned by the executable, which is alive.
            unsafe { read_named_values(args.properties, args.num_properties) }
        }))
    }

    /// The memory the compiled program needs.
    pub fn compiled_memory_stats(&self) -> Result<CompiledMemoryStats> {
        let mut args = ffi::PJRT_Executable_GetCompiledMemoryStats_Args::new();
        args.executable = self.inner.executable;
        pjrt_call!(
            &self.inner.client.api,
            PJRT_Executable_GetCompiledMemoryStats,
            &mut args
        )?;
        Ok(CompiledMemoryStats {
            generated_code_size_in_bytes: args.generated_code_size_in_bytes,
            argument_size_in_bytes: args.argument_size_in_bytes,
            output_size_in_bytes: args.output_size_in_bytes,
            alias_size_in_bytes: args.alias_size_in_bytes,
            temp_size_in_bytes: args.temp_size_in_bytes,
            peak_memory_in_bytes: args.peak_memory_in_bytes,
        })
    }

    /// The optimized program: its format ("hlo" or "hlo_with_config") and
    /// its serialized proto.
    pub fn optimized_program(&self) -> Result<(String, Vec<u8>)> {
        let api = &self.inner.client.api;
        let mut program = ffi::PJRT_Program::new();
        let mut args = ffi::PJRT_Executable_OptimizedProgram_Args::new();
        args.executable = self.inner.executable;
        args.program = &mut program;
        // First call: the plugin fills in the code size.
        pjrt_call!(api, PJRT_Executable_OptimizedProgram, &mut args)?;
        let mut code = vec![0u8; program.code_size];
        program.code = code.as_mut_ptr().cast();
        args.program = &mut program;
        pjrt_call!(api, PJRT_Executable_OptimizedProgram, &mut args)?;
        code.truncate(program.code_size);
        // SAFETY: the format string is a static of the plugin.
        let format = unsafe { c_string(program.format, program.format_size) };
        Ok((format, code))
    }

    /// The entry signature: what each parameter must be, and the result.
    /// Computed once from the optimized program, then kept.
    pub fn program_shape(&self) -> Result<&ProgramShape> {
        if let Some(shape) = self.inner.program_shape.get() {
            return Ok(shape);
        }
        let (format, code) = self.optimized_program()?;
        let shape = ProgramShape::from_optimized_program(&format, &code)?;
        Ok(self.inner.program_shape.get_or_init(|| shape))
    }

    /// Serializes the executable; [`crate::Client::deserialize_and_load`] with
    /// the same plugin build loads it back without compiling.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let mut args = ffi::PJRT_Executable_Serialize_Args::new();
        args.executable = self.inner.executable;
        pjrt_call!(&self.inner.client.api, PJRT_Executable_Serialize, &mut args)?;
        let bytes = if args.serialized_bytes.is_null() {
            Vec::new()
        } else {
            // SAFETY: the bytes live as long as `serialized_executable`.
            unsafe {
                std::slice::from_raw_parts(
                    args.serialized_bytes.cast::<u8>(),
                    args.serialized_bytes_size,
                )
            }
            .to_vec()
        };
        if let Some(deleter) = args.serialized_executable_deleter {
            // SAFETY: called once, on the object the plugin handed out.
            unsafe { deleter(args.serialized_executable) };
        }
        Ok(bytes)
    }

    /// Runs on the executable's single device; returns its outputs, which
    /// may still be computing (see [`Buffer::block_until_ready`]).
    pub fn execute(&self, args: &[&Buffer]) -> Result<Vec<Buffer>> {
        self.execute_with(args, &ExecuteOptions::default())
    }

    /// [`execute`](Self::execute) with options.
    pub fn execute_with(&self, args: &[&Buffer], options: &ExecuteOptions) -> Result<Vec<Buffer>> {
        if self.inner.devices.len() != 1 {
            return Err(Error::InvalidArgument(format!(
                "this executable runs on {} devices; use execute_sharded with one argument list per device",
                self.inner.devices.len()
            )));
        }
        let outputs = self.launch(&[args], options)?;
        self.wrap_outputs(&outputs)
    }

    /// Runs on every device of the executable: `args[d]` are the arguments of
    /// the d-th addressable device (a `Vec<Buffer>` or a `&[&Buffer]` each);
    /// returns each device's outputs.
    pub fn execute_sharded<L, B>(
        &self,
        args: &[L],
        options: &ExecuteOptions,
    ) -> Result<Vec<Vec<Buffer>>>
    where
        L: AsRef<[B]>,
        B: Borrow<Buffer>,
    {
        let num_devices = self.inner.devices.len();
        if args.len() != num_devices {
            return Err(Error::InvalidArgument(format!(
                "{} argument lists given for an executable on {num_devices} devices",
                args.len()
            )));
        }
        let outputs = self.launch(args, options)?;
        // Wrap every handle before splitting, so that all are released if
        // one is missing.
        let mut all = self.wrap_outputs(&outputs)?.into_iter();
        let per_device = self.inner.num_outputs;
        Ok((0..num_devices)
            .map(|_| all.by_ref().take(per_device).collect())
            .collect())
    }

    /// Checks the argument lists (one per device) and calls
    /// `PJRT_LoadedExecutable_Execute`; returns the raw outputs, device by
    /// device. This is the hot path of every execution: no heap allocation
    /// for up to 16 arguments and outputs.
    fn launch<L, B>(
        &self,
        args: &[L],
        options: &ExecuteOptions,
    ) -> Result<SmallVec<[*mut ffi::PJRT_Buffer; 16]>>
    where
        L: AsRef<[B]>,
        B: Borrow<Buffer>,
    {
        let inner = &*self.inner;
        let num_devices = args.len();
        let num_args = args.first().map_or(0, |a| a.as_ref().len());
        // Where the plugin tells the signature, check arguments against it:
        // some plugins only compare byte sizes and would reinterpret an i32
        // argument as f32.
        let parameters = self.program_shape().ok().map(|s| s.parameters.as_slice());
        if let Some(parameters) = parameters
            && parameters.len() != num_args
        {
            return Err(Error::InvalidArgument(format!(
                "the program takes {} arguments, {num_args} given",
                parameters.len()
            )));
        }
        let mut arg_ptrs: SmallVec<[*mut ffi::PJRT_Buffer; 16]> =
            SmallVec::with_capacity(num_devices * num_args);
        for (d, list) in args.iter().enumerate() {
            let list = list.as_ref();
            if list.len() != num_args {
                return Err(Error::InvalidArgument(format!(
                    "device {d} has {} arguments, device 0 has {num_args}",
                    list.len()
                )));
            }
            for (i, buffer) in list.iter().enumerate() {
                let buffer: &Buffer = buffer.borrow();
                check_same_client(&inner.client, buffer.client_inner())?;
                if let Some(parameters) = parameters {
                    check_argument(i, buffer, &parameters[i])?;
                }
                arg_ptrs.push(buffer.raw());
            }
        }
        let arg_lists: SmallVec<[*const *mut ffi::PJRT_Buffer; 4]> = (0..num_devices)
            .map(|d| arg_ptrs[d * num_args..].as_ptr())
            .collect();
        let num_outputs = inner.num_outputs;
        let mut out_ptrs: SmallVec<[*mut ffi::PJRT_Buffer; 16]> =
            smallvec::smallvec![std::ptr::null_mut(); num_devices * num_outputs];
        let base = out_ptrs.as_mut_ptr();
        let out_lists: SmallVec<[*mut *mut ffi::PJRT_Buffer; 4]> = (0..num_devices)
            .map(|d| base.wrapping_add(d * num_outputs))
            .collect();

        let mut raw_options = ffi::PJRT_ExecuteOptions::new();
        raw_options.launch_id = options.launch_id;
        raw_options.non_donatable_input_indices = options.non_donatable_input_indices.as_ptr();
        raw_options.num_non_donatable_input_indices = options.non_donatable_input_indices.len();

        // Work in flight (see `in_flight`: a thread, or the process, that
        // ends waits for it). Each device's first output answers for its
        // execution (the outputs of one execution are defined together),
        // so no event is asked for; a program without outputs asks for one
        // completion event per device, kept as this thread's work.
        let mut complete: SmallVec<[*mut ffi::PJRT_Event; 4]> =
            smallvec::smallvec![std::ptr::null_mut(); num_devices];

        let mut exec_args = ffi::PJRT_LoadedExecutable_Execute_Args::new();
        exec_args.executable = inner.raw;
        exec_args.options = &mut raw_options;
        exec_args.argument_lists = arg_lists.as_ptr();
        exec_args.num_devices = num_devices;
        exec_args.num_args = num_args;
        exec_args.output_lists = out_lists.as_ptr();
        if num_outputs == 0 {
            exec_args.device_complete_events = complete.as_mut_ptr();
        }
        pjrt_call!(
            &inner.client.api,
            PJRT_LoadedExecutable_Execute,
            &mut exec_args
        )?;
        for &raw in &complete {
            if let Some(event) = Event::from_raw(inner.client.api.clone(), raw) {
                crate::in_flight::track(event);
            }
        }
        // This execution waits for its arguments' definitions, so whatever
        // answers for it (its outputs, or its events) answers for them too.
        for list in args {
            for buffer in list.as_ref() {
                buffer.borrow().settle();
            }
        }
        Ok(out_ptrs)
    }

    /// Owns the raw outputs of an execution; an error (after releasing the
    /// others) if the plugin returned a null handle. Each device's first
    /// output answers for its execution (see `in_flight`). After the first
    /// execution, each output is made with its known type (see
    /// `output_types`).
    fn wrap_outputs(&self, raw: &[*mut ffi::PJRT_Buffer]) -> Result<Vec<Buffer>> {
        let per_device = self.inner.num_outputs;
        let known = self.inner.output_types.get().and_then(Option::as_deref);
        let mut buffers = Vec::with_capacity(raw.len());
        let mut missing = false;
        for (i, &handle) in raw.iter().enumerate() {
            let array_type = known.map(|types| types[i % per_device].clone());
            let answers_for_execution = i % per_device == 0;
            let client = self.inner.client.clone();
            match Buffer::wrap(client, handle, answers_for_execution, array_type) {
                Ok(buffer) => buffers.push(buffer),
                Err(_) => missing = true,
            }
        }
        if missing {
            return Err(Error::Protocol(
                "the plugin returned a null output buffer".into(),
            ));
        }
        if self.inner.output_types.get().is_none() {
            let known = self
                .inner
                .output_types
                .get_or_init(|| self.declared_output_types(&buffers));
            if let Some(types) = known {
                for (buffer, array_type) in buffers.iter().zip(types.iter().cycle()) {
                    buffer.know_array_type(array_type.clone());
                }
            }
        }
        Ok(buffers)
    }

    /// The outputs' types from the program's signature, if it gives one
    /// array per output and those are what the plugin reports for the
    /// buffers of this (first) execution, device by device.
    fn declared_output_types(&self, buffers: &[Buffer]) -> Option<Vec<ArrayType>> {
        let result = &self.program_shape().ok()?.result;
        let declared: Vec<&Shape> = match result {
            Shape::Tuple(elements) => elements.iter().collect(),
            Shape::Array { .. } => vec![result],
            Shape::Token | Shape::Unsupported(_) => return None,
        };
        if declared.len() != self.inner.num_outputs {
            return None;
        }
        let types = declared
            .iter()
            .map(|shape| shape.as_array().map(|(t, dims)| (t, Arc::from(dims))))
            .collect::<Option<Vec<ArrayType>>>()?;
        let all_match = buffers
            .iter()
            .zip(types.iter().cycle())
            .all(|(buffer, (t, dims))| {
                buffer
                    .array_type()
                    .is_ok_and(|(got_t, got_dims)| got_t == *t && got_dims == &dims[..])
            });
        all_match.then_some(types)
    }
}

/// An error unless `buffer` has the element type and dims of `parameter`.
fn check_argument(index: usize, buffer: &Buffer, parameter: &Shape) -> Result<()> {
    let Some((want_type, want_dims)) = parameter.as_array() else {
        return Ok(());
    };
    let (got_type, got_dims) = buffer.array_type()?;
    if got_type != want_type || !same_dims(got_dims, want_dims) {
        let got = Shape::Array {
            element_type: got_type,
            dims: got_dims.to_vec(),
        };
        return Err(Error::InvalidArgument(format!(
            "argument {index} is {got}, but the program expects {parameter}"
        )));
    }
    Ok(())
}

/// Whether two shapes are equal, compared element by element: the shapes
/// checked before every execution have a few dims (none for a scalar), for
/// which a call of `memcmp`, which slice equality makes, costs more than
/// the comparison.
fn same_dims(a: &[i64], b: &[i64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// `Ok(None)` for a call the plugin reports as unimplemented (or lacks).
fn unimplemented_as_none(result: Result<()>) -> Result<Option<()>> {
    match result {
        Ok(()) => Ok(Some(())),
        Err(Error::Plugin {
            code: crate::ErrorCode::Unimplemented,
            ..
        })
        | Err(Error::Unsupported { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}
