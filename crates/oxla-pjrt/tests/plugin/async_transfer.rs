//! Buffers whose data arrives later: computations enqueued on them wait for
//! it, and fail with the plugin's message when the data never comes.

use oxla_pjrt::{
    AsyncTransfer, Buffer, Client, CompileOptions, ElementType, Error, ErrorCode, Program,
};

use crate::support::clients;

const DOUBLE: &str = r#"
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = stablehlo.add %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}"#;

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `DOUBLE` enqueued on an f32[4] input whose data has not come: the
/// transfer that will fill or fail it, and the pending output.
fn double_of_pending_input(c: &Client) -> (AsyncTransfer, Buffer) {
    let exe = c
        .compile(&Program::mlir(DOUBLE), &CompileOptions::new())
        .unwrap();
    let transfer = c
        .create_buffers_for_async_host_to_device(&[(ElementType::F32, &[4])], None)
        .unwrap();
    assert_eq!(transfer.buffer_count(), 1);
    let x = transfer.retrieve_buffer(0).unwrap();
    assert_eq!(x.dims().unwrap(), vec![4]);
    // Execute returns while its input does not exist yet.
    let out = exe.execute(&[&x]).unwrap().remove(0);
    (transfer, out)
}

#[test]
fn an_execution_on_pending_data_waits_for_it() {
    for (p, c) in clients(1) {
        let (transfer, out) = double_of_pending_input(&c);
        assert!(
            !out.ready_event().unwrap().is_ready().unwrap(),
            "{}",
            p.name
        );
        let done = transfer
            .transfer(0, f32_bytes(&[1.0, 2.0, -3.0, 0.5]))
            .unwrap();
        done.wait().unwrap();
        assert_eq!(out.to_vec::<f32>().unwrap(), vec![2.0, 4.0, -6.0, 1.0]);
    }
}

#[test]
fn a_failed_input_fails_the_computation_at_the_next_wait() {
    for (p, c) in clients(1) {
        let (transfer, out) = double_of_pending_input(&c);
        transfer
            .set_buffer_error(0, ErrorCode::DataLoss, "the sensor went away")
            .unwrap();
        for err in [
            out.block_until_ready().unwrap_err(),
            out.to_host_bytes().unwrap_err(),
        ] {
            // The plugin re-codes the input's error as the computation's
            // (INTERNAL, "Error dispatching computation: ..."), message kept.
            match &err {
                Error::Plugin { message, .. } => {
                    assert!(
                        message.contains("the sensor went away"),
                        "{}: {err}",
                        p.name
                    );
                }
                other => panic!("{}: expected a plugin error, got {other}", p.name),
            }
        }
    }
}

#[test]
fn a_dropped_transfer_cancels_what_waits_on_it() {
    for (p, c) in clients(1) {
        let transfer = c
            .create_buffers_for_async_host_to_device(
                &[(ElementType::F32, &[4]), (ElementType::S32, &[2, 2])],
                None,
            )
            .unwrap();
        let x = transfer.retrieve_buffer(1).unwrap();
        drop(transfer);
        let err = x.block_until_ready().unwrap_err();
        assert!(
            err.to_string()
                .contains("dropped before this buffer's data was sent"),
            "{}: {err}",
            p.name
        );
    }
}

#[test]
fn misuse_of_a_transfer_is_an_error_not_a_crash() {
    for (p, c) in clients(1) {
        let transfer = c
            .create_buffers_for_async_host_to_device(&[(ElementType::F32, &[4])], None)
            .unwrap();
        let _x = transfer.retrieve_buffer(0).unwrap();
        let again = transfer.retrieve_buffer(0).unwrap_err();
        assert!(
            again.to_string().contains("already retrieved"),
            "{}: {again}",
            p.name
        );
        let out_of_range = transfer.retrieve_buffer(3).unwrap_err();
        assert!(
            out_of_range
                .to_string()
                .contains("buffer 3 of an async transfer of 1"),
            "{}: {out_of_range}",
            p.name
        );
        let short = transfer.transfer(0, vec![0; 3]).unwrap_err();
        assert!(
            short.to_string().contains("3 bytes given"),
            "{}: {short}",
            p.name
        );
        transfer
            .transfer(0, f32_bytes(&[0.0; 4]))
            .unwrap()
            .wait()
            .unwrap();
        let twice = transfer.transfer(0, f32_bytes(&[0.0; 4])).unwrap_err();
        assert!(
            twice.to_string().contains("already filled or failed"),
            "{}: {twice}",
            p.name
        );
        let fail_after = transfer
            .set_buffer_error(0, ErrorCode::Internal, "late")
            .unwrap_err();
        assert!(
            matches!(fail_after, Error::InvalidArgument(_)),
            "{}",
            p.name
        );
        let bad_dims = c
            .create_buffers_for_async_host_to_device(&[(ElementType::F32, &[-1])], None)
            .err()
            .expect("negative dims are refused");
        assert!(
            matches!(bad_dims, Error::InvalidArgument(_)),
            "{}: {bad_dims}",
            p.name
        );
    }
}
