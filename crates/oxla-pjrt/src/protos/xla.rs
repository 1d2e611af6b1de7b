//! The messages of XLA's protos (package `xla`) that oxla sends to or reads
//! from PJRT plugins, declared by hand with prost's derives. They mirror
//! upstream's messages with upstream's field numbers, from
//! `xla/xla_data.proto` (`PrimitiveType`, `ShapeProto`,
//! `ProgramShapeProto`, `DeviceAssignmentProto`, `OpSharding`),
//! `xla/pjrt/proto/compile_options.proto` (`CompileOptionsProto`,
//! `ExecutableBuildOptionsProto`, `OptionOverrideProto`) and
//! `xla/service/hlo.proto` (`HloModuleProto`, `HloComputationProto`,
//! `HloModuleProtoWithConfig`). Only the fields oxla sets or reads are
//! declared, which protobuf allows: unknown fields are skipped when
//! decoding and absent when encoding (`ShapeProto` has no layout, the
//! HLO messages no instructions, `HloModuleProtoWithConfig` no config).
//!
//! Maps are `BTreeMap`s: the encoded [`CompileOptionsProto`] is part of
//! oxla-cache's disk cache key, so its bytes must not depend on hash order.

use std::collections::BTreeMap;

use prost::{Enumeration, Message};

/// `PrimitiveType`: an element type (the values oxla maps to its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Enumeration)]
#[repr(i32)]
pub enum PrimitiveType {
    /// `PRIMITIVE_TYPE_INVALID`.
    Invalid = 0,
    /// `PRED`: boolean.
    Pred = 1,
    /// `S8`.
    S8 = 2,
    /// `S16`.
    S16 = 3,
    /// `S32`.
    S32 = 4,
    /// `S64`.
    S64 = 5,
    /// `U8`.
    U8 = 6,
    /// `U16`.
    U16 = 7,
    /// `U32`.
    U32 = 8,
    /// `U64`.
    U64 = 9,
    /// `F16`.
    F16 = 10,
    /// `F32`.
    F32 = 11,
    /// `F64`.
    F64 = 12,
    /// `TUPLE`: a tuple shape, not an array.
    Tuple = 13,
    /// `OPAQUE_TYPE`.
    OpaqueType = 14,
    /// `C64`: complex of two f32.
    C64 = 15,
    /// `BF16`.
    Bf16 = 16,
    /// `TOKEN`: orders side effects.
    Token = 17,
    /// `C128`: complex of two f64.
    C128 = 18,
}

impl PrimitiveType {
    /// The value's name in the proto (`PRED`, `OPAQUE_TYPE`).
    pub fn as_str_name(&self) -> &'static str {
        match self {
            Self::Invalid => "PRIMITIVE_TYPE_INVALID",
            Self::Pred => "PRED",
            Self::S8 => "S8",
            Self::S16 => "S16",
            Self::S32 => "S32",
            Self::S64 => "S64",
            Self::U8 => "U8",
            Self::U16 => "U16",
            Self::U32 => "U32",
            Self::U64 => "U64",
            Self::F16 => "F16",
            Self::F32 => "F32",
            Self::F64 => "F64",
            Self::Tuple => "TUPLE",
            Self::OpaqueType => "OPAQUE_TYPE",
            Self::C64 => "C64",
            Self::Bf16 => "BF16",
            Self::Token => "TOKEN",
            Self::C128 => "C128",
        }
    }
}

/// `ShapeProto`: an array's element type and dims, or a tuple's shapes
/// (the layout is left out).
#[derive(Clone, PartialEq, Message)]
pub struct ShapeProto {
    /// The element type (a [`PrimitiveType`]).
    #[prost(enumeration = "PrimitiveType", tag = "2")]
    pub element_type: i32,
    /// The dims (an array's).
    #[prost(int64, repeated, tag = "3")]
    pub dimensions: Vec<i64>,
    /// The element shapes (a tuple's).
    #[prost(message, repeated, tag = "4")]
    pub tuple_shapes: Vec<ShapeProto>,
    /// Whether each dim is dynamic (its size an upper bound).
    #[prost(bool, repeated, tag = "6")]
    pub is_dynamic_dimension: Vec<bool>,
}

/// `ProgramShapeProto`: a computation's signature.
#[derive(Clone, PartialEq, Message)]
pub struct ProgramShapeProto {
    /// The parameters' shapes.
    #[prost(message, repeated, tag = "1")]
    pub parameters: Vec<ShapeProto>,
    /// The result's shape.
    #[prost(message, optional, tag = "2")]
    pub result: Option<ShapeProto>,
    /// The parameters' names.
    #[prost(string, repeated, tag = "3")]
    pub parameter_names: Vec<String>,
}

/// `DeviceAssignmentProto`: which device runs each replica of each
/// computation (partition).
#[derive(Clone, PartialEq, Message)]
pub struct DeviceAssignmentProto {
    /// The number of replicas.
    #[prost(int32, tag = "1")]
    pub replica_count: i32,
    /// The number of computations (partitions).
    #[prost(int32, tag = "2")]
    pub computation_count: i32,
    /// One entry per computation.
    #[prost(message, repeated, tag = "3")]
    pub computation_devices: Vec<device_assignment_proto::ComputationDevice>,
}

/// The messages nested in `DeviceAssignmentProto`.
pub mod device_assignment_proto {
    use prost::Message;

    /// `DeviceAssignmentProto.ComputationDevice`: the devices of one
    /// computation.
    #[derive(Clone, PartialEq, Eq, Hash, Message)]
    pub struct ComputationDevice {
        /// The device id of each replica.
        #[prost(int64, repeated, tag = "1")]
        pub replica_device_ids: Vec<i64>,
    }
}

/// `ExecutableBuildOptionsProto` (the fields oxla sets).
#[derive(Clone, PartialEq, Message)]
pub struct ExecutableBuildOptionsProto {
    /// The device to build for; -1 lets the plugin choose.
    #[prost(int64, tag = "1")]
    pub device_ordinal: i64,
    /// The number of replicas.
    #[prost(int64, tag = "4")]
    pub num_replicas: i64,
    /// The number of partitions.
    #[prost(int64, tag = "5")]
    pub num_partitions: i64,
    /// Whether the program is partitioned with SPMD.
    #[prost(bool, tag = "6")]
    pub use_spmd_partitioning: bool,
    /// Whether XLA chooses the shardings itself.
    #[prost(bool, tag = "7")]
    pub use_auto_spmd_partitioning: bool,
    /// Which device runs each replica and partition.
    #[prost(message, optional, tag = "9")]
    pub device_assignment: Option<DeviceAssignmentProto>,
    /// Whether SPMD partitioning uses Shardy (else GSPMD).
    #[prost(bool, tag = "19")]
    pub use_shardy_partitioner: bool,
}

/// `OptionOverrideProto`: one value of a `DebugOptions` field set by name
/// (as JAX's `compiler_options`).
#[derive(Clone, PartialEq, Message)]
pub struct OptionOverrideProto {
    /// The value.
    #[prost(oneof = "option_override_proto::Value", tags = "1, 2, 3, 4")]
    pub value: Option<option_override_proto::Value>,
}

/// The oneof of `OptionOverrideProto`.
pub mod option_override_proto {
    use prost::Oneof;

    /// `OptionOverrideProto.value`.
    #[derive(Clone, PartialEq, Oneof)]
    pub enum Value {
        /// A string field's value.
        #[prost(string, tag = "1")]
        StringField(String),
        /// A bool field's value.
        #[prost(bool, tag = "2")]
        BoolField(bool),
        /// An integer field's value.
        #[prost(int64, tag = "3")]
        IntField(i64),
        /// A floating-point field's value.
        #[prost(double, tag = "4")]
        DoubleField(f64),
    }
}

/// `CompileOptionsProto` (the fields oxla sets): what
/// `PJRT_Client_Compile` takes beside the program.
#[derive(Clone, PartialEq, Message)]
pub struct CompileOptionsProto {
    /// Whether the parameters come as one tuple.
    #[prost(bool, tag = "2")]
    pub parameter_is_tupled_arguments: bool,
    /// Replicas, partitions, devices, partitioner.
    #[prost(message, optional, tag = "3")]
    pub executable_build_options: Option<ExecutableBuildOptionsProto>,
    /// Whether the executable may run on any device of its kind.
    #[prost(bool, tag = "4")]
    pub compile_portable_executable: bool,
    /// `DebugOptions` fields set by name.
    #[prost(btree_map = "string, message", tag = "7")]
    pub env_option_overrides: BTreeMap<String, OptionOverrideProto>,
}

/// `OpSharding` (the fields that say how an array is tiled over devices).
#[derive(Clone, PartialEq, Message)]
pub struct OpSharding {
    /// The kind of sharding (an [`op_sharding::Type`]).
    #[prost(enumeration = "op_sharding::Type", tag = "1")]
    pub r#type: i32,
    /// The tile grid's shape.
    #[prost(int64, repeated, tag = "3")]
    pub tile_assignment_dimensions: Vec<i64>,
    /// The device of each tile, row-major (empty when given by iota).
    #[prost(int64, repeated, tag = "4")]
    pub tile_assignment_devices: Vec<i64>,
    /// The shardings of a tuple's elements.
    #[prost(message, repeated, tag = "5")]
    pub tuple_shardings: Vec<OpSharding>,
    /// Whether the last tile dim replicates rather than splits.
    #[prost(bool, tag = "6")]
    pub replicate_on_last_tile_dim: bool,
    /// The kinds of the trailing tile dims that do not split the array.
    #[prost(enumeration = "op_sharding::Type", repeated, tag = "8")]
    pub last_tile_dims: Vec<i32>,
    /// Without explicit devices: the device ids `0..n` reshaped to these
    /// dims,
    #[prost(int64, repeated, tag = "9")]
    pub iota_reshape_dims: Vec<i64>,
    /// then transposed by this permutation, then flattened.
    #[prost(int32, repeated, tag = "10")]
    pub iota_transpose_perm: Vec<i32>,
}

/// The enum nested in `OpSharding`.
pub mod op_sharding {
    use prost::Enumeration;

    /// `OpSharding.Type`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Enumeration)]
    #[repr(i32)]
    pub enum Type {
        /// `REPLICATED`: every device holds the whole array.
        Replicated = 0,
        /// `MAXIMAL`: one device holds the whole array.
        Maximal = 1,
        /// `TUPLE`: a tuple, sharded element by element.
        Tuple = 2,
        /// `OTHER`: tiled.
        Other = 3,
        /// `MANUAL`: the program splits it itself.
        Manual = 4,
        /// `UNKNOWN`: left to the partitioner.
        Unknown = 5,
        /// `UNREDUCED`: partial values still to be reduced.
        Unreduced = 6,
    }
}

/// `HloComputationProto`, reduced to what names the entry signature.
#[derive(Clone, PartialEq, Message)]
pub struct HloComputationProto {
    /// Its name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its signature.
    #[prost(message, optional, tag = "4")]
    pub program_shape: Option<ProgramShapeProto>,
    /// Its id in the module.
    #[prost(int64, tag = "5")]
    pub id: i64,
}

/// `HloModuleProto`, reduced to what names the entry signature.
#[derive(Clone, PartialEq, Message)]
pub struct HloModuleProto {
    /// Its name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// The entry computation's name.
    #[prost(string, tag = "2")]
    pub entry_computation_name: String,
    /// Its computations.
    #[prost(message, repeated, tag = "3")]
    pub computations: Vec<HloComputationProto>,
    /// The entry computation's signature as the host sees it.
    #[prost(message, optional, tag = "4")]
    pub host_program_shape: Option<ProgramShapeProto>,
    /// The entry computation's id.
    #[prost(int64, tag = "6")]
    pub entry_computation_id: i64,
    /// How the outputs (a tuple sharding for several) of an
    /// SPMD-partitioned entry computation are split over the partitions.
    #[prost(message, optional, tag = "12")]
    pub spmd_output_sharding: Option<OpSharding>,
    /// How each parameter of an SPMD-partitioned entry computation is
    /// split over the partitions.
    #[prost(message, repeated, tag = "14")]
    pub spmd_parameters_shardings: Vec<OpSharding>,
}

/// `HloModuleProtoWithConfig`, what `PJRT_Executable_OptimizedProgram`
/// returns in the `hlo_with_config` format (the config left out).
#[derive(Clone, PartialEq, Message)]
pub struct HloModuleProtoWithConfig {
    /// The module.
    #[prost(message, optional, tag = "1")]
    pub hlo_module: Option<HloModuleProto>,
}
