//! Buffers: host to device and back for every element type, readiness, size,
//! deletion, and bad input.

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use oxla_pjrt::{ElementType, Error, NativeType};

use crate::support::{client, clients, pinned_plugins};

/// Deterministic bytes that are valid values of `t` (bools 0/1).
fn sample_bytes(t: ElementType, count: usize) -> Vec<u8> {
    let n = count * t.byte_size();
    (0..n)
        .map(|i| match t {
            ElementType::Pred => (i % 2) as u8,
            _ => (i as u8).wrapping_mul(37).wrapping_add(11),
        })
        .collect()
}

#[test]
fn every_element_type_round_trips_through_the_device() {
    for (p, c) in clients(1) {
        for t in ElementType::ALL {
            for dims in [vec![], vec![0], vec![3], vec![2, 3, 4]] {
                let count: i64 = dims.iter().product();
                let bytes = sample_bytes(t, count as usize);
                let b = c.buffer_from_bytes(&bytes, t, &dims, None).unwrap();
                assert_eq!(b.element_type().unwrap(), t, "{}", p.name);
                assert_eq!(b.dims().unwrap(), dims);
                b.block_until_ready().unwrap();
                assert!(b.on_device_size().unwrap() >= bytes.len());
                assert_eq!(b.to_host_bytes().unwrap(), bytes, "{}: {t}{dims:?}", p.name);
                assert_eq!(b.device().unwrap(), c.default_device().unwrap());
            }
        }
    }
}

fn typed_round_trip<T: NativeType + PartialEq + std::fmt::Debug>(
    c: &oxla_pjrt::Client,
    values: &[T],
) {
    let b = c
        .buffer_from_slice(values, &[values.len() as i64], None)
        .unwrap();
    assert_eq!(b.element_type().unwrap(), T::TYPE);
    assert_eq!(b.to_vec::<T>().unwrap(), values);
}

#[test]
fn typed_slices_round_trip() {
    let c = client(&pinned_plugins()[0], 1);
    typed_round_trip(&c, &[true, false, true]);
    typed_round_trip(&c, &[-1i8, 2]);
    typed_round_trip(&c, &[-300i16, 2]);
    typed_round_trip(&c, &[i32::MIN, 7]);
    typed_round_trip(&c, &[i64::MAX, -7]);
    typed_round_trip(&c, &[255u8, 0]);
    typed_round_trip(&c, &[65535u16]);
    typed_round_trip(&c, &[u32::MAX]);
    typed_round_trip(&c, &[u64::MAX]);
    typed_round_trip(&c, &[f16::from_f32(1.5), f16::NEG_INFINITY]);
    typed_round_trip(&c, &[bf16::from_f32(-2.25)]);
    typed_round_trip(&c, &[1.5f32, f32::MIN_POSITIVE]);
    typed_round_trip(&c, &[std::f64::consts::PI]);
    typed_round_trip(&c, &[Complex32::new(1.0, -2.0)]);
    typed_round_trip(&c, &[Complex64::new(-1.0, 2.0)]);
}

#[test]
fn buffers_go_to_the_device_asked_for() {
    for (p, c) in clients(3) {
        let devices = c.addressable_devices().unwrap();
        let b = c
            .buffer_from_slice(&[1.0f32, 2.0], &[2], Some(&devices[2]))
            .unwrap();
        assert_eq!(b.device().unwrap(), devices[2], "{}", p.name);
        assert_eq!(b.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    }
}

#[test]
fn wrong_sizes_and_types_are_errors() {
    let c = client(&pinned_plugins()[0], 1);
    let err = c
        .buffer_from_bytes(&[0u8; 7], ElementType::F32, &[2], None)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(
        err.to_string().contains("7 bytes") && err.to_string().contains("needs 8"),
        "{err}"
    );
    let err = c
        .buffer_from_bytes(&[], ElementType::F32, &[-1], None)
        .unwrap_err();
    assert!(err.to_string().contains("negative dimension"), "{err}");
    let err = c
        .buffer_from_bytes(&[], ElementType::F32, &[i64::MAX, i64::MAX], None)
        .unwrap_err();
    assert!(err.to_string().contains("too large"), "{err}");
    let b = c.buffer_from_slice(&[1i32, 2], &[2], None).unwrap();
    let err = b.to_vec::<f32>().unwrap_err();
    assert!(err.to_string().contains("holds i32, not f32"), "{err}");
    let mut small = [0u8; 3];
    assert!(b.copy_to_host(&mut small).is_err());
}

#[test]
fn a_device_of_another_client_is_refused() {
    let plugins = pinned_plugins();
    let a = client(&plugins[0], 1);
    let b = client(&plugins[0], 1);
    let other_device = b.default_device().unwrap();
    let err = a
        .buffer_from_slice(&[1.0f32], &[1], Some(&other_device))
        .unwrap_err();
    assert!(err.to_string().contains("another PJRT client"), "{err}");
}

#[test]
fn a_deleted_buffer_reports_an_error_when_read() {
    for (p, c) in clients(1) {
        let b = c.buffer_from_slice(&[1.0f32, 2.0], &[2], None).unwrap();
        assert!(!b.is_deleted().unwrap());
        b.delete().unwrap();
        assert!(b.is_deleted().unwrap(), "{}", p.name);
        let err = b.to_host_bytes().unwrap_err();
        assert!(matches!(err, Error::Plugin { .. }), "{}: {err}", p.name);
    }
}

#[test]
fn ready_events_signal_and_call_back() {
    for (_, c) in clients(1) {
        let b = c.buffer_from_slice(&[1u8, 2, 3], &[3], None).unwrap();
        let event = b.ready_event().unwrap();
        event.wait().unwrap();
        assert!(event.is_ready().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        event
            .on_ready(move |result| tx.send(result.is_ok()).unwrap())
            .unwrap();
        assert!(rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap());
    }
}
