//! Host callbacks through the plugins' FFI extension: a Rust closure called
//! from a compiled program reads its argument and fills its result; its
//! error and its panic come back as the execution's error, and the client
//! keeps working.

use std::sync::Arc;

use oxla_pjrt::{
    CALLBACK_ID_ATTRIBUTE, CallbackArgument, CallbackResult, CompileOptions, ElementType,
    HOST_CALLBACK_TARGET, Program, register_callback,
};

use crate::support::{HostArray, clients, from_buffer, to_buffer};

fn module(id: u64) -> String {
    format!(
        r#"module {{
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{
    %0 = stablehlo.custom_call @{HOST_CALLBACK_TARGET}(%x) {{api_version = 4 : i32, has_side_effect = true, backend_config = {{{CALLBACK_ID_ATTRIBUTE} = {id} : ui64}}}} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.add %0, %x : tensor<4xf32>
    return %1 : tensor<4xf32>
  }}
}}"#
    )
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn a_closure_runs_inside_a_compiled_program_on_every_plugin() {
    let doubled = register_callback(Arc::new(
        |args: &[CallbackArgument<'_>], results: &mut [CallbackResult<'_>]| {
            assert_eq!(args[0].element_type, ElementType::F32);
            assert_eq!(args[0].dims, &[4]);
            let out: Vec<u8> = floats(args[0].bytes)
                .iter()
                .flat_map(|v| (v * 2.0).to_le_bytes())
                .collect();
            results[0].bytes.copy_from_slice(&out);
            Ok(())
        },
    ));
    let failing = register_callback(Arc::new(
        |_: &[CallbackArgument<'_>], _: &mut [CallbackResult<'_>]| {
            Err("the callback said no".into())
        },
    ));
    let panicking = register_callback(Arc::new(
        |_: &[CallbackArgument<'_>], _: &mut [CallbackResult<'_>]| panic!("the callback panicked"),
    ));
    let x = HostArray::new(
        ElementType::F32,
        vec![4],
        [1.0f32, 2.0, 3.0, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
    );
    for (plugin, client) in clients(1) {
        client.enable_host_callbacks().unwrap();
        // Twice is fine.
        client.enable_host_callbacks().unwrap();
        let run = |id: u64| {
            let exe = client
                .compile(&Program::mlir(module(id)), &CompileOptions::new())
                .unwrap();
            let input = to_buffer(&x, &client, None);
            exe.execute(&[&input])
                .and_then(|out| out[0].block_until_ready().map(|_| from_buffer(&out[0])))
        };
        let out = run(doubled).unwrap_or_else(|e| panic!("{}: {e}", plugin.name));
        assert_eq!(
            floats(&out.bytes),
            vec![3.0, 6.0, 9.0, 12.0],
            "{}",
            plugin.name
        );
        let err = run(failing).unwrap_err().to_string();
        assert!(
            err.contains("the callback said no"),
            "{}: {err}",
            plugin.name
        );
        let err = run(panicking).unwrap_err().to_string();
        assert!(
            err.contains("the host callback panicked: the callback panicked"),
            "{}: {err}",
            plugin.name
        );
        let err = run(987_654).unwrap_err().to_string();
        assert!(
            err.contains("no host callback 987654"),
            "{}: {err}",
            plugin.name
        );
        // The client still runs programs.
        assert_eq!(floats(&run(doubled).unwrap().bytes)[0], 3.0);
    }
}
