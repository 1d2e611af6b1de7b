//! Compile and execute JAX's programs, check against JAX's values, metadata,
//! serialization, donation, multi-device SPMD, threads, and bad input.

use std::sync::Arc;

use oxla_pjrt::{
    Buffer, Client, CompileOptions, DeviceAssignment, ElementType, Error, ExecuteOptions,
    LoadedExecutable, Partitioner, Program, Shape,
};

use oxla_testing::{Tolerance, assert_matches_jax};

use crate::support::{
    Case, HostArray, case, cases, client, clients, from_buffer, pinned_plugins, to_buffer,
};

fn run_case(c: &Client, exe: &LoadedExecutable, case: &Case) -> Vec<HostArray> {
    let inputs: Vec<Buffer> = case.inputs.iter().map(|a| to_buffer(a, c, None)).collect();
    let refs: Vec<&Buffer> = inputs.iter().collect();
    exe.execute(&refs)
        .unwrap()
        .iter()
        .map(from_buffer)
        .collect()
}

/// Compiles a case's StableHLO text for one device.
fn compile_text(c: &Client, case: &Case) -> LoadedExecutable {
    c.compile(
        &Program::mlir(case.mlir_text.clone()),
        &CompileOptions::new(),
    )
    .unwrap()
}

fn check_outputs(got: &[HostArray], case: &Case, what: &str) {
    assert_eq!(got.len(), case.outputs.len(), "{what}: number of outputs");
    for (i, (g, want)) in got.iter().zip(&case.outputs).enumerate() {
        assert_matches_jax(
            g,
            want,
            Tolerance::OTHER_XLA_BUILD,
            &format!("{what} {} output {i}", case.name),
        );
    }
}

#[test]
fn stablehlo_text_from_jax_matches_jax() {
    for (p, c) in clients(1) {
        for case in cases().iter().filter(|c| c.num_partitions == 1) {
            let exe = compile_text(&c, case);
            check_outputs(&run_case(&c, &exe, case), case, &p.name);
        }
    }
}

#[test]
fn portable_artifacts_compile_as_bytecode_and_match_jax() {
    for (p, c) in clients(1) {
        for case in cases().iter().filter(|c| c.num_partitions == 1) {
            let program = Program::mlir(case.portable_artifact.clone());
            assert!(program.is_mlir_bytecode());
            let exe = c.compile(&program, &CompileOptions::new()).unwrap();
            check_outputs(&run_case(&c, &exe, case), case, &p.name);
        }
    }
}

#[test]
fn metadata_describes_the_program() {
    let case = case("sin_mul_sum");
    for (p, c) in clients(1) {
        let exe = compile_text(&c, case);
        assert_eq!(exe.num_outputs(), 2, "{}", p.name);
        assert_eq!(
            exe.output_element_types().unwrap(),
            vec![ElementType::F32, ElementType::F32]
        );
        assert_eq!(exe.output_dimensions().unwrap(), vec![vec![2, 3], vec![]]);
        assert_eq!(exe.num_replicas().unwrap(), 1);
        assert_eq!(exe.num_partitions().unwrap(), 1);
        assert_eq!(exe.addressable_devices().len(), 1);
        assert!(!exe.name().unwrap().is_empty());
        let shape = exe.program_shape().unwrap();
        let f32_23 = Shape::Array {
            element_type: ElementType::F32,
            dims: vec![2, 3],
        };
        assert_eq!(shape.parameters, vec![f32_23.clone(), f32_23]);
        assert_eq!(shape.result.to_string(), "(f32[2,3], f32[])");
        let stats = exe.compiled_memory_stats().unwrap();
        // Outputs, plus the tuple's table where the plugin counts it.
        assert!(
            stats.output_size_in_bytes >= 4 * 6 + 4,
            "{}: {stats:?}",
            p.name
        );
        assert_eq!(
            stats.argument_size_in_bytes,
            2 * 4 * 6,
            "{}: {stats:?}",
            p.name
        );
        // Plugins that have a cost model report flops.
        if let Some(costs) = exe.cost_analysis().unwrap() {
            assert!(
                costs.iter().any(|v| v.name == "flops"),
                "{}: {costs:?}",
                p.name
            );
        }
        if let Some(fp) = exe.fingerprint().unwrap() {
            assert!(!fp.is_empty());
        }
    }
}

#[test]
fn serialized_executables_load_and_run_without_compiling() {
    let case = case("matmul_tanh");
    for (p, c) in clients(1) {
        let exe = compile_text(&c, case);
        let bytes = exe.serialize().unwrap();
        assert!(bytes.len() > 100, "{}", p.name);
        let loaded = c.deserialize_and_load(&bytes).unwrap();
        check_outputs(&run_case(&c, &loaded, case), case, &p.name);
        assert_eq!(
            loaded.output_dimensions().unwrap(),
            exe.output_dimensions().unwrap()
        );
    }
}

#[test]
fn corrupt_serialized_executables_are_errors() {
    for (p, c) in clients(1) {
        let err = c
            .deserialize_and_load(b"definitely not an executable")
            .unwrap_err();
        assert!(matches!(err, Error::Plugin { .. }), "{}: {err}", p.name);
        let err = c.deserialize_and_load(&[]).unwrap_err();
        assert!(matches!(err, Error::Plugin { .. }), "{}: {err}", p.name);
    }
}

#[test]
fn malformed_programs_report_the_plugins_message() {
    for (p, c) in clients(1) {
        let err = c
            .compile(
                &Program::mlir("module { this is not mlir }"),
                &CompileOptions::new(),
            )
            .unwrap_err();
        match &err {
            Error::Plugin {
                function, message, ..
            } => {
                assert_eq!(*function, "PJRT_Client_Compile");
                assert!(!message.is_empty(), "{}", p.name);
            }
            other => panic!("{}: expected a plugin error, got {other}", p.name),
        }
        let err = c
            .compile(
                &Program::mlir(b"ML\xefR\x00garbage".to_vec()),
                &CompileOptions::new(),
            )
            .unwrap_err();
        assert!(matches!(err, Error::Plugin { .. }), "{}: {err}", p.name);
        let err = c
            .compile(&Program::mlir(Vec::new()), &CompileOptions::new())
            .unwrap_err();
        assert!(matches!(err, Error::Plugin { .. }), "{}: {err}", p.name);
    }
}

#[test]
fn wrong_arguments_are_errors_not_crashes() {
    let case = case("sin_mul_sum");
    for (p, c) in clients(1) {
        let exe = compile_text(&c, case);
        let x = to_buffer(&case.inputs[0], &c, None);
        let err = exe.execute(&[&x]).unwrap_err();
        assert!(
            err.to_string().contains("takes 2 arguments, 1 given"),
            "{}: {err}",
            p.name
        );
        let wrong_shape = c.buffer_from_slice(&[1.0f32; 3], &[3], None).unwrap();
        let err = exe.execute(&[&x, &wrong_shape]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argument: argument 1 is f32[3], but the program expects f32[2,3]"
        );
        let wrong_dtype = c.buffer_from_slice(&[1i32; 6], &[2, 3], None).unwrap();
        let err = exe.execute(&[&wrong_dtype, &x]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argument: argument 0 is i32[2,3], but the program expects f32[2,3]"
        );
        let other = client(&p, 1);
        let foreign = to_buffer(&case.inputs[1], &other, None);
        let err = exe.execute(&[&x, &foreign]).unwrap_err();
        assert!(
            err.to_string().contains("another PJRT client"),
            "{}: {err}",
            p.name
        );
        let err = exe
            .execute_sharded(&[&[&x, &x], &[&x, &x]], &ExecuteOptions::default())
            .unwrap_err();
        assert!(
            err.to_string().contains("2 argument lists"),
            "{}: {err}",
            p.name
        );
    }
}

#[test]
fn donated_inputs_are_consumed_unless_marked_non_donatable() {
    let case = case("donate_update");
    assert_eq!(case.donated, vec![0]);
    for (p, c) in clients(1) {
        let exe = compile_text(&c, case);
        let stats = exe.compiled_memory_stats().unwrap();
        assert_eq!(stats.alias_size_in_bytes, 64 * 4, "{}: {stats:?}", p.name);
        let w = to_buffer(&case.inputs[0], &c, None);
        let g = to_buffer(&case.inputs[1], &c, None);
        let keep = ExecuteOptions {
            non_donatable_input_indices: vec![0],
            ..Default::default()
        };
        let out = exe.execute_with(&[&w, &g], &keep).unwrap();
        assert_matches_jax(
            &from_buffer(&out[0]),
            &case.outputs[0],
            Tolerance::OTHER_XLA_BUILD,
            "non-donated",
        );
        assert!(!w.is_deleted().unwrap(), "{}", p.name);
        let out = exe.execute(&[&w, &g]).unwrap();
        assert_matches_jax(
            &from_buffer(&out[0]),
            &case.outputs[0],
            Tolerance::OTHER_XLA_BUILD,
            "donated",
        );
        assert!(
            w.is_deleted().unwrap(),
            "{}: donated input still alive",
            p.name
        );
        let err = exe.execute(&[&w, &g]).unwrap_err();
        assert!(matches!(err, Error::Plugin { .. }), "{}: {err}", p.name);
    }
}

#[test]
fn spmd_program_runs_partitioned_over_cpu_devices() {
    let case = case("sharded_sum");
    assert_eq!(case.num_partitions, 2);
    for (p, c) in clients(2) {
        let options = CompileOptions::new()
            .device_assignment(DeviceAssignment::new(&[vec![0, 1]]).unwrap())
            .spmd(Partitioner::Shardy);
        let exe = c
            .compile(&Program::mlir(case.mlir_text.clone()), &options)
            .unwrap();
        let devices = exe.addressable_devices();
        assert_eq!(devices.len(), 2, "{}", p.name);
        assert_eq!(exe.num_partitions().unwrap(), 2);
        let shards: Vec<Vec<Buffer>> = (0..2)
            .map(|d| {
                case.input_shards
                    .iter()
                    .map(|s| to_buffer(&s[d], &c, Some(&devices[d])))
                    .collect()
            })
            .collect();
        let outputs = exe
            .execute_sharded(&shards, &ExecuteOptions::default())
            .unwrap();
        for (d, device_outputs) in outputs.iter().enumerate() {
            for (o, buffer) in device_outputs.iter().enumerate() {
                assert_eq!(buffer.device().unwrap(), devices[d]);
                assert_matches_jax(
                    &from_buffer(buffer),
                    &case.output_shards[o][d],
                    Tolerance::OTHER_XLA_BUILD,
                    &format!("{} device {d} output {o}", p.name),
                );
            }
        }
        let first: Vec<&Buffer> = shards[0].iter().collect();
        let err = exe.execute(&first).unwrap_err();
        assert!(err.to_string().contains("execute_sharded"), "{err}");
    }
}

#[test]
fn one_executable_runs_from_many_threads_at_once() {
    let case = case("matmul_tanh");
    for (p, c) in clients(1) {
        let exe = Arc::new(compile_text(&c, case));
        let inputs: Arc<Vec<Buffer>> =
            Arc::new(case.inputs.iter().map(|a| to_buffer(a, &c, None)).collect());
        let name = p.name.as_str();
        std::thread::scope(|s| {
            for _ in 0..8 {
                let exe = exe.clone();
                let inputs = inputs.clone();
                s.spawn(move || {
                    for _ in 0..25 {
                        let refs: Vec<&Buffer> = inputs.iter().collect();
                        let out = exe.execute(&refs).unwrap();
                        assert_matches_jax(
                            &from_buffer(&out[0]),
                            &case.outputs[0],
                            Tolerance::OTHER_XLA_BUILD,
                            name,
                        );
                    }
                });
            }
        });
    }
}

#[test]
fn compile_options_are_checked_before_reaching_the_plugin() {
    let c = client(&pinned_plugins()[0], 1);
    let err = c
        .compile(
            &Program::mlir(case("sin_mul_sum").mlir_text.clone()),
            &CompileOptions::new().num_replicas(0),
        )
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}

#[test]
fn replicated_program_runs_on_each_device() {
    let case = case("matmul_tanh");
    // The module's own attribute says one replica; the options say two.
    let text = case
        .mlir_text
        .replace("mhlo.num_replicas = 1", "mhlo.num_replicas = 2");
    for (p, c) in clients(2) {
        let exe = c
            .compile(
                &Program::mlir(text.clone()),
                &CompileOptions::new().num_replicas(2),
            )
            .unwrap();
        assert_eq!(exe.num_replicas().unwrap(), 2, "{}", p.name);
        let devices = exe.addressable_devices();
        assert_eq!(devices.len(), 2);
        let inputs: Vec<Vec<Buffer>> = devices
            .iter()
            .map(|d| {
                case.inputs
                    .iter()
                    .map(|a| to_buffer(a, &c, Some(d)))
                    .collect()
            })
            .collect();
        let outputs = exe
            .execute_sharded(&inputs, &ExecuteOptions::default())
            .unwrap();
        for (d, device_outputs) in outputs.iter().enumerate() {
            assert_eq!(device_outputs[0].device().unwrap(), devices[d]);
            assert_matches_jax(
                &from_buffer(&device_outputs[0]),
                &case.outputs[0],
                Tolerance::OTHER_XLA_BUILD,
                &format!("{} replica {d}", p.name),
            );
        }
    }
}

#[test]
fn handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<oxla_pjrt::Api>();
    send_sync::<Client>();
    send_sync::<Buffer>();
    send_sync::<LoadedExecutable>();
    send_sync::<oxla_pjrt::Device>();
    send_sync::<oxla_pjrt::Memory>();
    send_sync::<oxla_pjrt::Event>();
}
