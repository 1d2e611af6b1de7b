//! Asynchronous dispatch: calls return before the device finishes, waits
//! and host reads surface what happened, with the plugin's message.

use oxla::{Array, Error, jit, numpy as jnp};
use oxla_pjrt::{AsyncTransfer, ElementType, ErrorCode};

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// An f32[4] array whose data has not arrived yet, and the transfer that
/// will fill or fail it.
fn pending_input() -> (Array, AsyncTransfer) {
    let transfer = oxla::client()
        .unwrap()
        .create_buffers_for_async_host_to_device(&[(ElementType::F32, &[4])], None)
        .unwrap();
    let x = Array::from_buffer(transfer.retrieve_buffer(0).unwrap()).unwrap();
    (x, transfer)
}

/// Whether the plugin enqueues a program whose inputs are still pending and
/// returns at once (the CPU plugins). The StreamExecutor GPU client instead
/// waits inside `PJRT_LoadedExecutable_Execute` until each input's
/// definition event exists (`BufferSequencingEvent::WaitForEventOnStream`,
/// seen on an H200 with jax-cuda13-pjrt 0.11.2), as JAX's calls do there.
fn enqueues_pending_inputs() -> bool {
    oxla_testing::platform() == oxla_pjrt::Platform::Cpu
}

/// Runs `settle` on the pending input's transfer from another thread after
/// a pause, for plugins whose call waits for that input: the call returns
/// once the input is filled or failed.
fn settle_later(
    transfer: AsyncTransfer,
    settle: impl FnOnce(&AsyncTransfer) + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        settle(&transfer);
    })
}

#[test]
fn a_jitted_call_on_a_pending_input_computes_once_it_arrives() {
    let (x, transfer) = pending_input();
    let f = jit(|x: Array| &x * 2.0 + 1.0);
    let fill = |t: &AsyncTransfer| {
        t.transfer(0, f32_bytes(&[1.0, 2.0, 3.0, -4.0])).unwrap();
    };
    let (y, total) = if enqueues_pending_inputs() {
        // The call returns before its input exists, and a later eager op
        // is enqueued on the pending result too.
        let y = f.call(x.clone()).unwrap();
        let total = jnp::sum(&y, None, false);
        assert!(!y.is_ready().unwrap());
        assert!(!total.is_ready().unwrap());
        fill(&transfer);
        (y, total)
    } else {
        let filler = settle_later(transfer, fill);
        let y = f.call(x.clone()).unwrap();
        let total = jnp::sum(&y, None, false);
        filler.join().unwrap();
        (y, total)
    };
    y.block_until_ready().unwrap();
    assert!(y.is_ready().unwrap());
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 5.0, 7.0, -7.0]);
    assert_eq!(total.item::<f32>().unwrap(), 8.0);
}

#[test]
fn an_execution_error_surfaces_at_the_next_wait_with_the_plugins_message() {
    if !enqueues_pending_inputs() {
        // The StreamExecutor GPU client (jax-cuda13-pjrt 0.11.2 on an
        // H200) ran the program on an input whose transfer had failed and
        // returned its stale memory with no error, whether the failure came
        // while the call waited for the input or before the call began.
        eprintln!(
            "skipped on {}: its plugin does not pass a failed input on to the program",
            oxla_testing::platform().name()
        );
        return;
    }
    let f = jit(|x: Array| jnp::exp(&x));
    let (x, transfer) = pending_input();
    // The call only enqueues; the input fails after it returned.
    let y = f
        .call(x)
        .expect("the call itself succeeds: it only enqueues");
    let total = jnp::sum(&y, None, false);
    transfer
        .set_buffer_error(0, ErrorCode::DataLoss, "the input stream broke")
        .unwrap();
    for err in [
        y.block_until_ready().unwrap_err(),
        total.to_vec::<f32>().unwrap_err(),
    ] {
        assert!(matches!(err, Error::Runtime(_)), "{err}");
        assert!(err.to_string().contains("the input stream broke"), "{err}");
    }
}

#[test]
fn foreign_and_unsupported_buffers_are_refused() {
    let api = oxla::client().unwrap().api().clone();
    let other = oxla_pjrt::Client::new(api, &oxla_pjrt::ClientOptions::new()).unwrap();
    let foreign = other.buffer_from_slice(&[1.0f32], &[1], None).unwrap();
    let err = Array::from_buffer(foreign).unwrap_err();
    assert!(err.to_string().contains("another PJRT client"), "{err}");
    let c = oxla::client().unwrap();
    let complex = c
        .buffer_from_bytes(&[0; 8], ElementType::C64, &[1], None)
        .unwrap();
    assert_eq!(
        Array::from_buffer(complex).unwrap().dtype(),
        oxla::DType::C64
    );
    // This binary runs with x64 off, where 64-bit arrays (and complex128)
    // do not exist.
    let wide = c.buffer_from_slice(&[1.0f64], &[1], None).unwrap();
    let err = Array::from_buffer(wide).unwrap_err();
    assert!(err.to_string().contains("needs x64"), "{err}");
    let wide_complex = c
        .buffer_from_bytes(&[0; 16], ElementType::C128, &[1], None)
        .unwrap();
    let err = Array::from_buffer(wide_complex).unwrap_err();
    assert!(err.to_string().contains("a c128 buffer needs x64"), "{err}");
}
