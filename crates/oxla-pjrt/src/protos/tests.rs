//! The hand-declared messages encode exactly as the prost-build code
//! generated from the former proto/*_subset.proto files did: the expected
//! bytes below were written by that generated code (before it was
//! removed). The encoded `CompileOptionsProto` is part of oxla-cache's disk
//! cache key, so a changed byte would orphan every cached executable.

use std::collections::BTreeMap;

use prost::Message;

use crate::profiler_proto::ProfileOptions;
use crate::profiler_proto::profile_options::DeviceType;
use crate::profiler_proto::profiler::{
    XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, x_event, x_stat,
};
use crate::proto::{
    CompileOptionsProto, DeviceAssignmentProto, ExecutableBuildOptionsProto, HloComputationProto,
    HloModuleProto, HloModuleProtoWithConfig, OpSharding, OptionOverrideProto, PrimitiveType,
    ProgramShapeProto, ShapeProto, device_assignment_proto::ComputationDevice, op_sharding,
    option_override_proto::Value,
};
use crate::{CompileOptions, DeviceAssignment, OptionValue, Partitioner, Platform};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Every field oxla sets, through the public builder: an explicit device
/// assignment, SPMD with Shardy, the CPU fixes and one override of each
/// value type, added out of name order.
fn built_compile_options() -> Vec<u8> {
    let assignment = DeviceAssignment::new(&[vec![0, 1, 2], vec![3, 4, 5]]).unwrap();
    CompileOptions::for_platform(Platform::Cpu)
        .device_assignment(assignment)
        .spmd(Partitioner::Shardy)
        .option_override(
            "xla_gpu_cuda_data_dir",
            OptionValue::String("/opt/cuda".into()),
        )
        .option_override("xla_backend_optimization_level", OptionValue::Int(-3))
        .option_override("xla_cpu_fast_math_honor_nans", OptionValue::Double(0.25))
        .option_override("xla_cpu_enable_fast_math", OptionValue::Bool(true))
        .to_proto_bytes()
        .unwrap()
}

/// Every declared field of `CompileOptionsProto`, set away from its default.
fn full_compile_options() -> CompileOptionsProto {
    let overrides = [
        ("z_string", Value::StringField("text".into())),
        ("a_bool", Value::BoolField(true)),
        ("m_int", Value::IntField(i64::MIN)),
        ("b_double", Value::DoubleField(-1.5)),
    ];
    CompileOptionsProto {
        parameter_is_tupled_arguments: true,
        executable_build_options: Some(ExecutableBuildOptionsProto {
            device_ordinal: -1,
            num_replicas: 2,
            num_partitions: 4,
            use_spmd_partitioning: true,
            use_auto_spmd_partitioning: true,
            device_assignment: Some(DeviceAssignmentProto {
                replica_count: 2,
                computation_count: 2,
                computation_devices: vec![
                    ComputationDevice {
                        replica_device_ids: vec![0, 1],
                    },
                    ComputationDevice {
                        replica_device_ids: vec![2, 300],
                    },
                ],
            }),
            use_shardy_partitioner: true,
        }),
        compile_portable_executable: true,
        env_option_overrides: overrides
            .into_iter()
            .map(|(k, v)| (k.to_string(), OptionOverrideProto { value: Some(v) }))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// Every declared field of `ProfileOptions`, set away from its default.
fn full_profile_options() -> ProfileOptions {
    ProfileOptions {
        include_dataset_ops: true,
        host_tracer_level: 2,
        device_tracer_level: 1,
        python_tracer_level: 3,
        version: 1,
        device_type: DeviceType::PluggableDevice as i32,
        enable_hlo_proto: true,
    }
}

fn stat(metadata_id: i64, value: x_stat::Value) -> XStat {
    XStat {
        metadata_id,
        value: Some(value),
    }
}

/// Every declared field of the XSpace messages, every oneof case.
fn full_xspace() -> XSpace {
    let event_metadata = XEventMetadata {
        id: 7,
        name: "fusion.1".into(),
        display_name: "fusion".into(),
        metadata: vec![0, 1, 255],
        stats: vec![stat(2, x_stat::Value::StrValue("hlo".into()))],
        child_id: vec![8, 9],
    };
    let stat_metadata = XStatMetadata {
        id: 2,
        name: "hlo_module".into(),
        description: "the module".into(),
    };
    XSpace {
        planes: vec![XPlane {
            id: 3,
            name: "/device:GPU:0".into(),
            lines: vec![XLine {
                id: 1,
                display_id: 11,
                name: "stream".into(),
                display_name: "Stream #1".into(),
                timestamp_ns: 1_700_000_000_000_000_000,
                duration_ps: 9_000,
                events: vec![
                    XEvent {
                        metadata_id: 7,
                        data: Some(x_event::Data::OffsetPs(1_500)),
                        duration_ps: 5_000,
                        stats: vec![
                            stat(2, x_stat::Value::DoubleValue(0.5)),
                            stat(2, x_stat::Value::Uint64Value(u64::MAX)),
                            stat(2, x_stat::Value::Int64Value(-4)),
                            stat(2, x_stat::Value::BytesValue(vec![1, 2])),
                            stat(2, x_stat::Value::RefValue(2)),
                        ],
                    },
                    XEvent {
                        metadata_id: 7,
                        data: Some(x_event::Data::NumOccurrences(3)),
                        ..Default::default()
                    },
                ],
            }],
            event_metadata: BTreeMap::from([(7, event_metadata.clone()), (1, event_metadata)]),
            stat_metadata: BTreeMap::from([(2, stat_metadata)]),
            stats: vec![stat(2, x_stat::Value::StrValue("plane".into()))],
        }],
        errors: vec!["an error".into()],
        warnings: vec!["a warning".into()],
        hostnames: vec!["host".into(), "other".into()],
    }
}

/// Every declared field of the HLO module messages.
fn full_hlo_module() -> HloModuleProtoWithConfig {
    let shape = |t: PrimitiveType, dims: &[i64]| ShapeProto {
        element_type: t as i32,
        dimensions: dims.to_vec(),
        tuple_shapes: vec![],
        is_dynamic_dimension: dims.iter().map(|&d| d < 0).collect(),
    };
    let program_shape = ProgramShapeProto {
        parameters: vec![
            shape(PrimitiveType::F32, &[2, 3]),
            shape(PrimitiveType::Bf16, &[-1]),
        ],
        result: Some(ShapeProto {
            element_type: PrimitiveType::Tuple as i32,
            tuple_shapes: vec![
                shape(PrimitiveType::C128, &[]),
                shape(PrimitiveType::Pred, &[4]),
            ],
            ..Default::default()
        }),
        parameter_names: vec!["x".into(), "y".into()],
    };
    let tiled = OpSharding {
        r#type: op_sharding::Type::Other as i32,
        tile_assignment_dimensions: vec![2, 1, 2],
        tile_assignment_devices: vec![0, 1, 2, 3],
        tuple_shardings: vec![],
        replicate_on_last_tile_dim: true,
        last_tile_dims: vec![
            op_sharding::Type::Manual as i32,
            op_sharding::Type::Unreduced as i32,
        ],
        iota_reshape_dims: vec![4],
        iota_transpose_perm: vec![0],
    };
    HloModuleProtoWithConfig {
        hlo_module: Some(HloModuleProto {
            name: "jit_f".into(),
            entry_computation_name: "main.5".into(),
            computations: vec![HloComputationProto {
                name: "main.5".into(),
                program_shape: Some(program_shape.clone()),
                id: 5,
            }],
            host_program_shape: Some(program_shape),
            entry_computation_id: 5,
            spmd_output_sharding: Some(OpSharding {
                r#type: op_sharding::Type::Tuple as i32,
                tuple_shardings: vec![tiled.clone()],
                ..Default::default()
            }),
            spmd_parameters_shardings: vec![
                tiled,
                OpSharding {
                    r#type: op_sharding::Type::Maximal as i32,
                    tile_assignment_devices: vec![1],
                    ..Default::default()
                },
            ],
        }),
    }
}

// The bytes the generated code wrote for the values above, in hex.

/// `built_compile_options()`.
const BUILT_COMPILE_OPTIONS: &[&str] = &[
    "1a2c08ffffffffffffffffff012002280330014a16080210031a040a0200031a",
    "040a0201041a040a0202059801013a2d0a1e786c615f6261636b656e645f6f70",
    "74696d697a6174696f6e5f6c6576656c120b18fdffffffffffffffff013a1e0a",
    "18786c615f6370755f656e61626c655f666173745f6d617468120210013a290a",
    "1c786c615f6370755f666173745f6d6174685f686f6e6f725f6e616e73120921",
    "000000000000d03f3a190a13786c615f6370755f7573655f786e6e7061636b12",
    "0210003a240a15786c615f6770755f637564615f646174615f646972120b0a09",
    "2f6f70742f63756461",
];

/// `full_compile_options()`.
const FULL_COMPILE_OPTIONS: &[&str] = &[
    "10011a2908ffffffffffffffffff0120022804300138014a11080210021a040a",
    "0200011a050a0302ac0298010120013a0c0a06615f626f6f6c120210013a150a",
    "08625f646f75626c65120921000000000000f8bf3a140a056d5f696e74120b18",
    "808080808080808080013a120a087a5f737472696e6712060a0474657874",
];

/// `full_profile_options()`.
const PROFILE_OPTIONS: &[&str] = &["0801100218012003280130043801"];

/// `full_xspace()`.
const XSPACE: &[&str] = &[
    "0a83020803120d2f6465766963653a4750553a301a6d0801120673747265616d",
    "188080a8b1e39fe7cb172241080710dc0b188827220b080211000000000000e0",
    "3f220d080218ffffffffffffffffff01220d080220fcffffffffffffffff0122",
    "0608023202010222040802380222040807280348a846500b5a0953747265616d",
    "202331222a0801122608071208667573696f6e2e311a030001ff220666757369",
    "6f6e2a0708022a03686c6f32020809222a0807122608071208667573696f6e2e",
    "311a030001ff2206667573696f6e2a0708022a03686c6f320208092a1e080212",
    "1a0802120a686c6f5f6d6f64756c651a0a746865206d6f64756c65320908022a",
    "05706c616e651208616e206572726f721a0961207761726e696e672204686f73",
    "7422056f74686572",
];

/// `full_hlo_module()`.
const HLO_MODULE: &[&str] = &[
    "0ad0010a056a69745f6612066d61696e2e351a430a066d61696e2e3522370a0a",
    "100b1a020203320200000a1110101a0affffffffffffffffff01320101121010",
    "0d22021012220810011a01043201001a01781a0179280522370a0a100b1a0202",
    "03320200000a1110101a0affffffffffffffffff013201011210100d22021012",
    "220810011a01043201001a01781a01793005621d08022a1908031a0302010222",
    "04000102033001420204064a0104520100721908031a03020102220400010203",
    "3001420204064a010452010072050801220101",
];

/// `value` encodes to `expected`, and `expected` decodes back to `value`.
fn assert_wire<M: Message + Default + PartialEq + std::fmt::Debug>(value: &M, expected: &[&str]) {
    let expected = unhex(&expected.concat());
    let bytes = value.encode_to_vec();
    assert_eq!(hex(&bytes), hex(&expected));
    assert_eq!(&M::decode(expected.as_slice()).unwrap(), value);
}

#[test]
fn compile_options_encode_as_the_generated_code_did() {
    assert_eq!(
        hex(&built_compile_options()),
        hex(&unhex(&BUILT_COMPILE_OPTIONS.concat()))
    );
    assert_wire(&full_compile_options(), FULL_COMPILE_OPTIONS);
}

#[test]
fn profile_options_encode_as_the_generated_code_did() {
    assert_wire(&full_profile_options(), PROFILE_OPTIONS);
}

#[test]
fn an_xspace_round_trips_through_the_generated_codes_bytes() {
    assert_wire(&full_xspace(), XSPACE);
}

#[test]
fn an_hlo_module_round_trips_through_the_generated_codes_bytes() {
    assert_wire(&full_hlo_module(), HLO_MODULE);
}

#[test]
fn primitive_types_keep_their_proto_names() {
    assert_eq!(PrimitiveType::OpaqueType.as_str_name(), "OPAQUE_TYPE");
    assert_eq!(
        PrimitiveType::Invalid.as_str_name(),
        "PRIMITIVE_TYPE_INVALID"
    );
    assert_eq!(PrimitiveType::try_from(16), Ok(PrimitiveType::Bf16));
}
