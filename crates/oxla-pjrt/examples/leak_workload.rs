//! Creates and drops every kind of handle oxla-pjrt owns (client, buffers,
//! events, executables, serialized and deserialized executables, errors),
//! `ROUNDS` times, for leak checkers:
//!
//! ```sh
//! cargo build --release -p oxla-pjrt --example leak_workload
//! valgrind --leak-check=full target/release/examples/leak_workload 3
//! ```
//!
//! and prints the resident memory after each round, which must stay flat.

use oxla_pjrt::{Client, ClientOptions, CompileOptions, Platform, Program};

const PROGRAM: &str = r#"
func.func public @main(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<f32>) {
  %0 = stablehlo.multiply %a, %b : tensor<1024xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<1024xf32>, tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<1024xf32>, tensor<f32>
}
"#;

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn round() -> oxla_pjrt::Result<()> {
    let client = Client::for_platform(Platform::Cpu, &ClientOptions::new().cpu_device_count(2))?;
    let exe = client.compile(&Program::mlir(PROGRAM), &CompileOptions::new())?;
    let loaded = client.deserialize_and_load(&exe.serialize()?)?;
    let a = client.buffer_from_slice(&[1.5f32; 1024], &[1024], None)?;
    for _ in 0..200 {
        let b = client.buffer_from_slice(&[2.0f32; 1024], &[1024], None)?;
        let out = loaded.execute(&[&a, &b])?;
        out[0].ready_event()?.wait()?;
        assert_eq!(out[1].to_vec::<f32>()?, vec![3072.0]);
    }
    // Errors are created by the plugin and must be freed too.
    for _ in 0..100 {
        assert!(
            client
                .compile(&Program::mlir("not mlir"), &CompileOptions::new())
                .is_err()
        );
        assert!(client.deserialize_and_load(b"garbage").is_err());
    }
    // Async transfers: filled, failed, and dropped with a buffer waiting.
    for _ in 0..50 {
        let transfer = client.create_buffers_for_async_host_to_device(
            &[
                (oxla_pjrt::ElementType::F32, &[1024]),
                (oxla_pjrt::ElementType::U8, &[16]),
            ],
            None,
        )?;
        let x = transfer.retrieve_buffer(0)?;
        let waiting = transfer.retrieve_buffer(1)?;
        let out = loaded.execute(&[&a, &x])?;
        transfer.transfer(0, vec![0; 4096])?;
        out[0].ready_event()?.wait()?;
        drop(transfer);
        assert!(waiting.block_until_ready().is_err());
        let failed = client.create_buffers_for_async_host_to_device(
            &[(oxla_pjrt::ElementType::F32, &[4])],
            None,
        )?;
        failed.set_buffer_error(0, oxla_pjrt::ErrorCode::Aborted, "left out")?;
    }
    let deleted = client.buffer_from_slice(&[1u8; 16], &[16], None)?;
    deleted.delete()?;
    assert!(deleted.to_host_bytes().is_err());
    exe.program_shape()?;
    Ok(())
}

fn main() -> oxla_pjrt::Result<()> {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(10);
    for i in 0..rounds {
        round()?;
        println!("round {i}: resident {} KiB", resident_kib());
    }
    Ok(())
}
