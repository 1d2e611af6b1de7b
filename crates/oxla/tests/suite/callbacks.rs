//! Host callbacks (`pure_callback`, `io_callback`) eagerly, under jit, vmap
//! (sequential and expand_dims) and grad (an error naming the callback);
//! their errors (an Err, a wrong shape, a panic) are errors of the call and
//! the process keeps running; effects stay in program order and are never
//! dropped as dead code.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use oxla::lax::{self, ScanOptions};
use oxla::{
    Array, Aval, DType, HostArray, VmapMethod, grad, io_callback, jit, numpy as jnp, pure_callback,
    vmap,
};

/// A callback as a boxed closure.
type HostFn = dyn Fn(&[HostArray]) -> oxla::callback::CallbackOutput + Send + Sync;

/// The host's `x * 3 + 1` on f32 data.
fn triple_plus_one(values: &[HostArray]) -> oxla::callback::CallbackOutput {
    let x = &values[0];
    let bytes = x
        .bytes
        .chunks(4)
        .flat_map(|c| (f32::from_le_bytes(c.try_into().unwrap()) * 3.0 + 1.0).to_le_bytes())
        .collect();
    Ok(vec![HostArray::new(
        x.element_type(),
        x.dims.clone(),
        bytes,
    )])
}

/// `triple_plus_one` called from `x`'s program, its result typed as `x`.
fn host_triple(x: &Array) -> Array {
    let aval = x.aval().unwrap().clone();
    pure_callback(triple_plus_one, &[aval], &[x], VmapMethod::Sequential)
        .unwrap()
        .remove(0)
}

fn f32s(a: &Array) -> Vec<f32> {
    a.to_vec::<f32>().unwrap()
}

#[test]
fn a_pure_callback_runs_eagerly_and_inside_jit() {
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let aval = Aval::new(DType::F32, &[4]);
    let eager = pure_callback(
        triple_plus_one,
        std::slice::from_ref(&aval),
        &[&x],
        VmapMethod::Sequential,
    )
    .unwrap();
    assert_eq!(f32s(&eager[0]), vec![4.0, 7.0, 10.0, 13.0]);
    let f = jit(move |x: Array| {
        let y = host_triple(&x);
        jnp::sum(&(y * 2.0), None, false)
    });
    assert_eq!(f.call(x.clone()).unwrap().item::<f32>().unwrap(), 68.0);
    // Called again, the compiled program calls the closure again.
    assert_eq!(f.call(x).unwrap().item::<f32>().unwrap(), 68.0);
}

#[test]
fn vmap_calls_once_per_example_or_once_for_the_batch() {
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]).unwrap();
    for (method, calls_expected) in [(VmapMethod::Sequential, 3), (VmapMethod::ExpandDims, 1)] {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let f = move |x: Array| {
            let counted = counted.clone();
            pure_callback(
                move |v| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    triple_plus_one(v)
                },
                &[Aval::new(DType::F32, &[2])],
                &[&x],
                method,
            )
            .unwrap()
            .remove(0)
        };
        let batched = vmap(f);
        let y = jit(move |x: Array| batched.call(x).unwrap())
            .call(x.clone())
            .unwrap();
        assert_eq!(y.shape(), &[3, 2]);
        assert_eq!(
            f32s(&y),
            vec![4.0, 7.0, 10.0, 13.0, 16.0, 19.0],
            "{method:?}"
        );
        assert_eq!(calls.load(Ordering::SeqCst), calls_expected, "{method:?}");
    }
}

#[test]
fn grad_through_a_pure_callback_is_an_error_naming_it() {
    let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let err = grad(|x: Array| {
        match pure_callback(
            triple_plus_one,
            &[Aval::new(DType::F32, &[2])],
            &[&x],
            VmapMethod::Sequential,
        ) {
            Ok(y) => jnp::sum(&y[0], None, false),
            Err(e) => Array::error(e),
        }
    })
    .call(x)
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("pure_callback at")
            && err.contains("callbacks.rs")
            && err.contains("has no derivative"),
        "{err}"
    );
}

#[test]
fn a_failing_callback_is_an_error_of_the_call_and_the_process_goes_on() {
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let aval = Aval::new(DType::F32, &[4]);
    let run = |f: Box<HostFn>| {
        let aval = aval.clone();
        let f = Arc::new(f);
        jit(move |x: Array| {
            let f = f.clone();
            pure_callback(
                move |v| f(v),
                std::slice::from_ref(&aval),
                &[&x],
                VmapMethod::Sequential,
            )
            .unwrap()
            .remove(0)
        })
        .call(x.clone())
        // On a GPU the call only enqueues: the callback's error comes at
        // the wait.
        .and_then(|y| y.to_vec::<f32>())
    };
    let err = run(Box::new(|_| Err("the sensor is offline".into())))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the sensor is offline") && err.contains("callbacks.rs"),
        "{err}"
    );
    let err = run(Box::new(|_| {
        Ok(vec![HostArray::new(
            oxla_pjrt::ElementType::F32,
            vec![3],
            vec![0; 12],
        )])
    }))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("returned f32[3] for result 0; it was declared f32[4]"),
        "{err}"
    );
    let err = run(Box::new(|_| Ok(Vec::new()))).unwrap_err().to_string();
    assert!(
        err.contains("returned 0 arrays; it was declared with 1"),
        "{err}"
    );
    let err = run(Box::new(|_| panic!("index out of range in the callback")))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("panicked: index out of range in the callback"),
        "{err}"
    );
    assert_eq!(run(Box::new(triple_plus_one)).unwrap()[0], 4.0);
}

#[test]
fn io_callbacks_run_in_program_order_and_are_never_dropped() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let f = jit(move |x: Array| {
        for i in 0..12 {
            let log = log.clone();
            // Results unused: an effect all the same.
            io_callback(
                move |_| {
                    log.lock().unwrap().push(i);
                    Ok(Vec::new())
                },
                &[],
                &[&x],
            )
            .unwrap();
        }
        x * 2.0
    });
    let x = Array::from_slice(&[1.0f32], &[1]).unwrap();
    f.call(x.clone()).unwrap().block_until_ready().unwrap();
    f.call(x).unwrap().block_until_ready().unwrap();
    let order: Vec<i32> = (0..12).chain(0..12).collect();
    assert_eq!(*seen.lock().unwrap(), order);
}

#[test]
fn a_custom_vjp_gives_a_callback_its_derivative_and_exports_refuse_callbacks() {
    // The host computes 3x + 1; the rule says its derivative is 3.
    let f = oxla::custom_vjp(
        |x: Array| host_triple(&x),
        |x: Array| (host_triple(&x), ()),
        |_: (), g: Array| g * 3.0,
    );
    let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let dx = jit(move |x: Array| {
        grad(|x: Array| jnp::sum(&f.call(x).unwrap(), None, false))
            .call(x)
            .unwrap()
    })
    .call(x.clone())
    .unwrap();
    assert_eq!(f32s(&dx), vec![3.0, 3.0]);

    let err = jit(|x: Array| host_triple(&x))
        .export(&x, &oxla::ExportOptions::new())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("calls the host callback pure_callback at")
            && err.contains("no export can carry"),
        "{err}"
    );
}

#[test]
fn io_callbacks_keep_their_order_across_loops_and_branches() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let logger = |log: &Arc<Mutex<Vec<String>>>, what: &'static str| {
        let log = log.clone();
        move |args: &[HostArray]| {
            let value = args.first().map(|a| format!(" {}", a.to_f64_vec()[0]));
            log.lock()
                .unwrap()
                .push(format!("{what}{}", value.unwrap_or_default()));
            Ok(Vec::new())
        }
    };
    let log = seen.clone();
    let f = jit(move |x: Array| {
        for _ in 0..4 {
            io_callback(logger(&log, "before"), &[], &[]).unwrap();
        }
        let (total, _) = lax::scan(
            |c: Array, v: Array| {
                io_callback(logger(&log, "scan"), &[], &[&v]).unwrap();
                (&c + &v, c)
            },
            Array::scalar(0.0f32).unwrap(),
            x,
            ScanOptions::default(),
        )
        .unwrap();
        let positive = jnp::greater(&total, &Array::scalar(0.0f32).unwrap());
        let total = lax::cond(
            &positive,
            |t: Array| {
                io_callback(logger(&log, "branch"), &[], &[&t]).unwrap();
                t * 2.0
            },
            |t: Array| t,
            total,
        )
        .unwrap();
        let total = lax::fori_loop(
            0,
            2,
            |i: Array, t: Array| {
                io_callback(logger(&log, "while"), &[], &[&i]).unwrap();
                t + 1.0
            },
            total,
        )
        .unwrap();
        for _ in 0..4 {
            io_callback(logger(&log, "after"), &[], &[]).unwrap();
        }
        total
    });
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    // One order value (a `ui8`) runs through the whole program: the loops
    // and the branch take and give it back, no region starts a chain.
    let text = f.lower(&x).unwrap();
    assert_eq!(text.matches("dense<0> : tensor<ui8>").count(), 1, "{text}");
    let total = f.call(x).unwrap();
    assert_eq!(total.to_vec::<f32>().unwrap(), vec![14.0]);
    let want = [
        "before", "before", "before", "before", "scan 1", "scan 2", "scan 3", "branch 6",
        "while 0", "while 1", "after", "after", "after", "after",
    ];
    assert_eq!(*seen.lock().unwrap(), want);
}
