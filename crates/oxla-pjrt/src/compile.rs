//! What goes into `PJRT_Client_Compile`: the program and its
//! `CompileOptionsProto` (prost messages declared in src/protos/xla.rs).

use prost::Message;

use crate::error::{Error, Result};
use crate::proto;

/// The format of a program's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramFormat {
    /// An MLIR module: StableHLO text, MLIR bytecode, or a portable artifact.
    Mlir,
    /// A serialized `HloModuleProto`.
    Hlo,
}

impl ProgramFormat {
    /// The format string the C API expects.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mlir => "mlir",
            Self::Hlo => "hlo",
        }
    }
}

/// The first bytes of MLIR bytecode ("ML\xEFR").
pub const MLIR_BYTECODE_MAGIC: &[u8; 4] = b"ML\xEFR";

/// A program to compile.
#[derive(Debug, Clone)]
pub struct Program {
    /// The code followed by one NUL byte that is not part of it: MLIR's lexer
    /// reads one byte past the end of the text it parses, expecting a
    /// terminator (valgrind showed the read past an unterminated buffer).
    code_nul: Vec<u8>,
    format: ProgramFormat,
}

impl Program {
    fn new(code: impl Into<Vec<u8>>, format: ProgramFormat) -> Self {
        let mut code_nul = code.into();
        code_nul.push(0);
        Self { code_nul, format }
    }

    /// An MLIR module (text, bytecode or a StableHLO portable artifact).
    pub fn mlir(code: impl Into<Vec<u8>>) -> Self {
        Self::new(code, ProgramFormat::Mlir)
    }

    /// A serialized `HloModuleProto`.
    pub fn hlo(code: impl Into<Vec<u8>>) -> Self {
        Self::new(code, ProgramFormat::Hlo)
    }

    /// The code (without the terminator).
    pub fn code(&self) -> &[u8] {
        &self.code_nul[..self.code_nul.len() - 1]
    }

    /// The format.
    pub fn format(&self) -> ProgramFormat {
        self.format
    }

    /// Whether the code is MLIR bytecode rather than text.
    pub fn is_mlir_bytecode(&self) -> bool {
        self.format == ProgramFormat::Mlir && self.code().starts_with(MLIR_BYTECODE_MAGIC)
    }
}

/// Which device runs each (replica, partition) of a computation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceAssignment {
    replicas: usize,
    /// `devices[partition][replica]` is a device id.
    devices: Vec<Vec<i64>>,
}

impl DeviceAssignment {
    /// An assignment from `devices[replica][partition]` (device ids); every
    /// row must have the same, non-zero length.
    pub fn new(devices: &[Vec<i64>]) -> Result<Self> {
        let replicas = devices.len();
        let partitions = devices.first().map_or(0, Vec::len);
        if replicas == 0 || partitions == 0 || devices.iter().any(|r| r.len() != partitions) {
            return Err(Error::InvalidArgument(format!(
                "a device assignment needs a non-empty replicas x partitions grid, got {devices:?}"
            )));
        }
        let by_partition = (0..partitions)
            .map(|p| devices.iter().map(|row| row[p]).collect())
            .collect();
        Ok(Self {
            replicas,
            devices: by_partition,
        })
    }

    /// Number of replicas.
    pub fn replicas(&self) -> usize {
        self.replicas
    }

    /// Number of partitions.
    pub fn partitions(&self) -> usize {
        self.devices.len()
    }

    fn to_proto(&self) -> proto::DeviceAssignmentProto {
        proto::DeviceAssignmentProto {
            replica_count: self.replicas as i32,
            computation_count: self.devices.len() as i32,
            computation_devices: self
                .devices
                .iter()
                .map(|ids| proto::device_assignment_proto::ComputationDevice {
                    replica_device_ids: ids.clone(),
                })
                .collect(),
        }
    }
}

/// How SPMD programs (num_partitions > 1) are partitioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Partitioner {
    /// Shardy (`sdy.sharding` attributes); JAX's default.
    #[default]
    Shardy,
    /// GSPMD (`mhlo.sharding` attributes); deprecated in XLA.
    Gspmd,
}

/// The value of a compiler option override (a `DebugOptions` field).
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// A string field.
    String(String),
    /// A boolean field.
    Bool(bool),
    /// An integer field.
    Int(i64),
    /// A floating-point field.
    Double(f64),
}

/// XLA:CPU's XNNPACK dot path computes a donated (in-place updated)
/// operand's product from its value before the update on the second and
/// later calls (found with a jitted AdamW step over a 784x300 dense layer
/// whose parameters are donated, on both pinned CPU plugins; jaxlib's own
/// XLA does not show it). Turning XNNPACK off cost nothing measurable on
/// the MNIST main job, so oxla compiles CPU programs without it.
const CPU_FIXES: [(&str, bool); 1] = [("xla_cpu_use_xnnpack", false)];

/// Options of one compilation. The defaults compile for one replica and one
/// partition (an empty options proto crashes some plugins, so oxla always
/// sets both).
#[derive(Debug, Clone, PartialEq)]
pub struct CompileOptions {
    num_replicas: usize,
    num_partitions: usize,
    spmd: bool,
    partitioner: Partitioner,
    device_assignment: Option<DeviceAssignment>,
    overrides: Vec<(String, OptionValue)>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        Self {
            num_replicas: 1,
            num_partitions: 1,
            spmd: false,
            partitioner: Partitioner::default(),
            device_assignment: None,
            overrides: Vec::new(),
        }
    }
}

impl CompileOptions {
    /// One replica, one partition.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the number of replicas (at least 1).
    pub fn num_replicas(mut self, n: usize) -> Self {
        self.num_replicas = n;
        self
    }

    /// Sets the number of partitions (at least 1).
    pub fn num_partitions(mut self, n: usize) -> Self {
        self.num_partitions = n;
        self
    }

    /// Partitions the program with SPMD, using `partitioner`.
    pub fn spmd(mut self, partitioner: Partitioner) -> Self {
        self.spmd = true;
        self.partitioner = partitioner;
        self
    }

    /// The default options with the compiler settings oxla needs on
    /// `platform` for correct results (on CPU: XNNPACK off, see `CPU_FIXES`).
    pub fn for_platform(platform: crate::Platform) -> Self {
        let fixes: &[(&str, bool)] = match platform {
            crate::Platform::Cpu => &CPU_FIXES,
            crate::Platform::Cuda | crate::Platform::Rocm | crate::Platform::Tpu => &[],
        };
        fixes.iter().fold(Self::new(), |options, &(name, value)| {
            options.option_override(name, OptionValue::Bool(value))
        })
    }

    /// Sets the compiler option `name` (a field of XLA's `DebugOptions`,
    /// as JAX's `compiler_options`); a later value for a name replaces an
    /// earlier one.
    pub fn option_override(mut self, name: &str, value: OptionValue) -> Self {
        self.overrides.retain(|(n, _)| n != name);
        self.overrides.push((name.to_string(), value));
        self
    }

    /// Fixes which device runs each replica and partition; also sets the
    /// replica and partition counts to the assignment's.
    pub fn device_assignment(mut self, assignment: DeviceAssignment) -> Self {
        self.num_replicas = assignment.replicas();
        self.num_partitions = assignment.partitions();
        self.device_assignment = Some(assignment);
        self
    }

    /// The serialized `CompileOptionsProto`.
    pub fn to_proto_bytes(&self) -> Result<Vec<u8>> {
        if self.num_replicas == 0 || self.num_partitions == 0 {
            return Err(Error::InvalidArgument(format!(
                "compile options need at least one replica and one partition, got {} and {}",
                self.num_replicas, self.num_partitions
            )));
        }
        if let Some(a) = &self.device_assignment
            && (a.replicas() != self.num_replicas || a.partitions() != self.num_partitions)
        {
            return Err(Error::InvalidArgument(format!(
                "device assignment is {}x{}, but {} replicas x {} partitions were asked for",
                a.replicas(),
                a.partitions(),
                self.num_replicas,
                self.num_partitions
            )));
        }
        let build = proto::ExecutableBuildOptionsProto {
            device_ordinal: -1,
            num_replicas: self.num_replicas as i64,
            num_partitions: self.num_partitions as i64,
            use_spmd_partitioning: self.spmd,
            use_auto_spmd_partitioning: false,
            device_assignment: self
                .device_assignment
                .as_ref()
                .map(DeviceAssignment::to_proto),
            use_shardy_partitioner: self.spmd && self.partitioner == Partitioner::Shardy,
        };
        let env_option_overrides = self
            .overrides
            .iter()
            .map(|(name, value)| {
                use proto::option_override_proto::Value;
                let value = match value {
                    OptionValue::String(s) => Value::StringField(s.clone()),
                    OptionValue::Bool(b) => Value::BoolField(*b),
                    OptionValue::Int(i) => Value::IntField(*i),
                    OptionValue::Double(d) => Value::DoubleField(*d),
                };
                (
                    name.clone(),
                    proto::OptionOverrideProto { value: Some(value) },
                )
            })
            .collect();
        Ok(proto::CompileOptionsProto {
            parameter_is_tupled_arguments: false,
            executable_build_options: Some(build),
            compile_portable_executable: false,
            env_option_overrides,
        }
        .encode_to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_code_is_followed_by_a_terminator_it_does_not_count() {
        let p = Program::mlir("module {}");
        assert_eq!(p.code(), b"module {}");
        // SAFETY: `code_nul` holds one byte past the code.
        let after = unsafe { *p.code().as_ptr().add(p.code().len()) };
        assert_eq!(after, 0);
        assert!(Program::mlir(b"ML\xEFR rest".to_vec()).is_mlir_bytecode());
        assert!(!Program::mlir("ML").is_mlir_bytecode());
    }

    #[test]
    fn default_options_set_one_replica_and_partition() {
        let bytes = CompileOptions::new().to_proto_bytes().unwrap();
        let decoded = proto::CompileOptionsProto::decode(bytes.as_slice()).unwrap();
        let build = decoded.executable_build_options.unwrap();
        assert_eq!((build.num_replicas, build.num_partitions), (1, 1));
        assert!(!build.use_spmd_partitioning);
    }

    #[test]
    fn cpu_options_turn_xnnpack_off_and_overrides_replace_by_name() {
        use crate::Platform;
        let decode = |o: &CompileOptions| {
            proto::CompileOptionsProto::decode(o.to_proto_bytes().unwrap().as_slice()).unwrap()
        };
        let cpu = decode(&CompileOptions::for_platform(Platform::Cpu));
        let xnn = &cpu.env_option_overrides["xla_cpu_use_xnnpack"];
        assert_eq!(
            xnn.value,
            Some(proto::option_override_proto::Value::BoolField(false))
        );
        assert!(
            decode(&CompileOptions::for_platform(Platform::Cuda))
                .env_option_overrides
                .is_empty()
        );
        let twice = CompileOptions::new()
            .option_override("xla_cpu_enable_fast_math", OptionValue::Bool(true))
            .option_override("xla_cpu_enable_fast_math", OptionValue::Bool(false));
        let overrides = decode(&twice).env_option_overrides;
        assert_eq!(overrides.len(), 1);
        assert_eq!(
            overrides["xla_cpu_enable_fast_math"].value,
            Some(proto::option_override_proto::Value::BoolField(false))
        );
    }

    #[test]
    fn zero_partitions_is_refused() {
        let err = CompileOptions::new()
            .num_partitions(0)
            .to_proto_bytes()
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("at least one replica and one partition"),
            "{err}"
        );
    }

    #[test]
    fn device_assignment_is_stored_by_partition() {
        let a = DeviceAssignment::new(&[vec![0, 1, 2]]).unwrap();
        let bytes = CompileOptions::new()
            .device_assignment(a)
            .spmd(Partitioner::Shardy)
            .to_proto_bytes()
            .unwrap();
        let build = proto::CompileOptionsProto::decode(bytes.as_slice())
            .unwrap()
            .executable_build_options
            .unwrap();
        assert_eq!((build.num_replicas, build.num_partitions), (1, 3));
        assert!(build.use_spmd_partitioning && build.use_shardy_partitioner);
        let da = build.device_assignment.unwrap();
        assert_eq!((da.replica_count, da.computation_count), (1, 3));
        let ids: Vec<_> = da
            .computation_devices
            .iter()
            .map(|c| c.replica_device_ids.clone())
            .collect();
        assert_eq!(ids, vec![vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn ragged_device_assignment_is_refused() {
        assert!(DeviceAssignment::new(&[vec![0, 1], vec![2]]).is_err());
        assert!(DeviceAssignment::new(&[]).is_err());
    }
}
