//! Golden jaxpr texts of the jvp, transpose (as `grad`) and batching rules
//! of each family, in the manner of Cranelift's filetests: each case is a
//! function traced on abstract inputs (no plugin, no device), and the text
//! of its jaxpr is compared with the one checked in under
//! `src/transform/rules/golden/<family>.txt`. `OXLA_BLESS=1 cargo test -p
//! oxla --lib golden` rewrites those files; review their diff like code.
//! They run in seconds and stand beside the tests against live JAX; the
//! client fails while they trace, so none of them can reach a plugin.

use std::collections::BTreeMap;
use std::path::PathBuf;

use oxla_core::{Aval, DType, Location};

use crate::array::Array;
use crate::error::Result;
use crate::numpy as jnp;
use crate::{grad, jvp, lax, vmap};

/// One traced case: `f` gets tracers of `inputs` and returns the outputs
/// of a transformed function.
struct Golden {
    family: &'static str,
    name: &'static str,
    inputs: &'static [&'static str],
    f: fn(&[Array]) -> Result<Vec<Array>>,
}

fn aval(text: &str) -> Aval {
    let (dtype, dims) = text.split_once('[').expect("dtype[dims]");
    let dims: Vec<i64> = dims
        .trim_end_matches(']')
        .split(',')
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().expect("a dimension"))
        .collect();
    Aval::new(DType::from_name(dtype).expect("a dtype"), &dims)
}

fn sum(x: &Array) -> Array {
    jnp::sum(x, None, false)
}

/// `jvp` of a one-input function at `a[0]` along `a[1]`.
fn jvp1(f: fn(Array) -> Array, a: &[Array]) -> Result<Vec<Array>> {
    let (y, t) = jvp(f, &a[0], &a[1])?;
    Ok(vec![y, t])
}

/// `grad` of the sum of a one-input function at `a[0]`.
fn grad1(f: fn(Array) -> Array, a: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![grad(move |x: Array| sum(&f(x))).call(a[0].clone())?])
}

/// `vmap` of a one-input function over the leading axis of `a[0]`.
fn vmap1(f: fn(Array) -> Array, a: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![vmap(f).call(a[0].clone())?])
}

// Long by design: the table of golden cases, one entry per case.
fn cases() -> Vec<Golden> {
    vec![
        // Elementwise.
        Golden {
            family: "elementwise",
            name: "jvp of sin",
            inputs: &["f32[3]", "f32[3]"],
            f: |a| jvp1(|x| lax::sin(&x), a),
        },
        Golden {
            family: "elementwise",
            name: "grad of x * exp(x)",
            inputs: &["f32[3]"],
            f: |a| grad1(|x| &x * &lax::exp(&x), a),
        },
        Golden {
            family: "elementwise",
            name: "grad of clamp",
            inputs: &["f32[3]"],
            f: |a| {
                grad1(
                    |x| lax::clamp(&Array::weak_scalar(0.0f32), &x, &Array::weak_scalar(1.0f32)),
                    a,
                )
            },
        },
        Golden {
            family: "elementwise",
            name: "vmap of where",
            inputs: &["f32[4,3]"],
            f: |a| {
                vmap1(
                    |x| jnp::where_(&lax::gt(&x, &Array::weak_scalar(0.0f32)), &x, &lax::neg(&x)),
                    a,
                )
            },
        },
        // Shape.
        Golden {
            family: "shape",
            name: "jvp of broadcast and reshape",
            inputs: &["f32[3]", "f32[3]"],
            f: |a| jvp1(|x| lax::reshape(&jnp::broadcast_to(&x, &[2, 3]), &[6]), a),
        },
        Golden {
            family: "shape",
            name: "grad of transpose and concatenate",
            inputs: &["f32[2,3]"],
            f: |a| {
                grad1(
                    |x| {
                        lax::concatenate(
                            &[&lax::transpose(&x, &[1, 0]), &lax::transpose(&x, &[1, 0])],
                            0,
                        )
                    },
                    a,
                )
            },
        },
        Golden {
            family: "shape",
            name: "grad of pad",
            inputs: &["f32[3]"],
            f: |a| {
                grad1(
                    |x| lax::pad(&x, &Array::weak_scalar(0.0f32), &[(1, 2, 1)]),
                    a,
                )
            },
        },
        Golden {
            family: "shape",
            name: "vmap of transpose",
            inputs: &["f32[4,2,3]"],
            f: |a| vmap1(|x| lax::transpose(&x, &[1, 0]), a),
        },
        // Indexing.
        Golden {
            family: "index",
            name: "grad of slice",
            inputs: &["f32[6]"],
            f: |a| grad1(|x| lax::slice(&x, &[1], &[5], Some(&[2])), a),
        },
        Golden {
            family: "index",
            name: "grad of dynamic_slice",
            inputs: &["f32[6]"],
            f: |a| {
                grad1(
                    |x| lax::dynamic_slice(&x, &[&Array::weak_scalar(2i32)], &[3]),
                    a,
                )
            },
        },
        Golden {
            family: "index",
            name: "vmap of dynamic_slice",
            inputs: &["f32[4,6]"],
            f: |a| {
                vmap1(
                    |x| lax::dynamic_slice(&x, &[&Array::weak_scalar(2i32)], &[3]),
                    a,
                )
            },
        },
        // Reductions.
        Golden {
            family: "reduce",
            name: "jvp of max",
            inputs: &["f32[3]", "f32[3]"],
            f: |a| jvp1(|x| jnp::max(&x, None, false), a),
        },
        Golden {
            family: "reduce",
            name: "grad of cumsum",
            inputs: &["f32[4]"],
            f: |a| grad1(|x| lax::cumsum(&x, 0, false), a),
        },
        Golden {
            family: "reduce",
            name: "vmap of sum over an axis",
            inputs: &["f32[4,2,3]"],
            f: |a| vmap1(|x| jnp::sum(&x, Some(&[1]), false), a),
        },
        // Contractions.
        Golden {
            family: "contract",
            name: "grad of matmul",
            inputs: &["f32[2,3]"],
            f: |a| grad1(|x| jnp::matmul(&x, &lax::transpose(&x, &[1, 0])), a),
        },
        Golden {
            family: "contract",
            name: "vmap of dot",
            inputs: &["f32[4,3]"],
            f: |a| vmap1(|x| jnp::dot(&x, &x), a),
        },
        // Calls.
        Golden {
            family: "call",
            name: "grad of a checkpointed function",
            inputs: &["f32[3]"],
            f: |a| {
                grad1(
                    |x| {
                        crate::checkpoint(|x: Array| lax::sin(&lax::sin(&x)))
                            .call(x)
                            .unwrap_or_else(Array::error)
                    },
                    a,
                )
            },
        },
        Golden {
            family: "call",
            name: "vmap of a checkpointed function",
            inputs: &["f32[4,3]"],
            f: |a| {
                vmap1(
                    |x| {
                        crate::checkpoint(|x: Array| lax::cos(&x))
                            .call(x)
                            .unwrap_or_else(Array::error)
                    },
                    a,
                )
            },
        },
        // Control flow.
        Golden {
            family: "control",
            name: "grad of a scan",
            inputs: &["f32[4]"],
            f: |a| {
                grad1(
                    |xs| {
                        crate::control::scan(
                            |c: Array, x: Array| {
                                let c = &c * &x;
                                (c.clone(), c)
                            },
                            Array::weak_scalar(1.0f32),
                            xs,
                            Default::default(),
                        )
                        .map(|(c, _)| c)
                        .unwrap_or_else(Array::error)
                    },
                    a,
                )
            },
        },
        Golden {
            family: "control",
            name: "vmap of a cond",
            inputs: &["f32[4,3]"],
            f: |a| {
                vmap1(
                    |x| {
                        crate::control::cond(
                            &lax::gt(&sum(&x), &Array::weak_scalar(0.0f32)),
                            |x: Array| lax::sin(&x),
                            |x: Array| lax::cos(&x),
                            x,
                        )
                        .unwrap_or_else(Array::error)
                    },
                    a,
                )
            },
        },
        Golden {
            family: "control",
            name: "grad and vmap of a custom_linear_solve",
            inputs: &["f32[4,3]"],
            f: |a| {
                // x = b / d for the diagonal operator x ↦ d x, with b = d².
                fn diagonal(d: Array) -> Array {
                    crate::control::custom_linear_solve(
                        |x: Array| &d * &x,
                        &(&d * &d),
                        |_, b: Array| &b / &d,
                        crate::control::TransposeSolve::Symmetric,
                    )
                    .unwrap_or_else(Array::error)
                }
                let per_row =
                    |d: Array| -> Result<Array> { grad(|d: Array| sum(&diagonal(d))).call(d) };
                Ok(vec![vmap(per_row).call(a[0].clone())?])
            },
        },
        // XLA's generators: a batch of keys draws from its first key.
        Golden {
            family: "rng",
            name: "vmap of rng_bit_generator",
            inputs: &["u32[3,4]"],
            f: |a| {
                let (keys, bits) = vmap(|k: Array| {
                    lax::rng_bit_generator(&k, &[2], DType::U32, lax::RngAlgorithm::Default)
                })
                .call(a[0].clone())?;
                Ok(vec![keys, bits])
            },
        },
        // Collectives, over a vmap's named axis (no devices).
        Golden {
            family: "collective",
            name: "vmap of psum over its own axis",
            inputs: &["f32[4,3]"],
            f: |a| {
                Ok(vec![
                    vmap(|x: Array| crate::sharding::collectives::psum(&x, &["i"]))
                        .axis_name("i")
                        .call(a[0].clone())?,
                ])
            },
        },
        // Sharding: a constraint on an abstract mesh (no devices).
        Golden {
            family: "sharding",
            name: "grad of a sharding constraint",
            inputs: &["f32[4,8]"],
            f: |a| {
                let constrain = |x: Array| {
                    crate::ops::bind(
                        oxla_core::Primitive::Sharding(
                            oxla_core::primitive::sharding::Op::ShardingConstraint {
                                sharding: rows_split(oxla_core::AxisType::Auto),
                            },
                        ),
                        &[&x],
                    )
                };
                let g = grad(move |x: Array| sum(&lax::sin(&constrain(x)))).call(a[0].clone())?;
                Ok(vec![g])
            },
        },
        // Explicit sharding: the cotangent of a reshard goes back to the
        // operand's split; vmap leaves the batch dimension as it was.
        Golden {
            family: "sharding",
            name: "grad and vmap of a reshard onto explicit axes",
            inputs: &["f32[4,8]"],
            f: |a| {
                let onto = |x: Array| {
                    crate::ops::bind(
                        oxla_core::Primitive::Sharding(
                            oxla_core::primitive::sharding::Op::Reshard {
                                sharding: Some(rows_split(oxla_core::AxisType::Explicit)),
                            },
                        ),
                        &[&x],
                    )
                };
                let g = grad(move |x: Array| sum(&lax::sin(&onto(x)))).call(a[0].clone())?;
                let v = vmap(|r: Array| {
                    let rows = crate::ops::bind(
                        oxla_core::Primitive::Sharding(
                            oxla_core::primitive::sharding::Op::Reshard {
                                sharding: Some(oxla_core::ShardingDesc::new(
                                    rows_split(oxla_core::AxisType::Explicit).mesh,
                                    vec![std::sync::Arc::from([std::sync::Arc::from("x")])].into(),
                                )),
                            },
                        ),
                        &[&r],
                    );
                    &rows * 2.0
                })
                .call(a[0].clone())?;
                Ok(vec![g, v])
            },
        },
        // Host callbacks: vmap calls the host function once per example.
        Golden {
            family: "host",
            name: "vmap of a sequential pure_callback",
            inputs: &["f32[4,3]"],
            f: |a| {
                // The primitive itself (pure_callback would register a closure
                // with the plugin's client).
                let f = |x: Array| {
                    let callback = oxla_core::HostCallback {
                        id: 0,
                        name: "host".into(),
                        effectful: false,
                        vmap_method: oxla_core::VmapMethod::Sequential,
                    };
                    let host = oxla_core::primitive::host::Op::HostCallback {
                        callback,
                        results: vec![Aval::new(DType::F32, &[3])],
                    };
                    crate::ops::bind(oxla_core::Primitive::Host(host), &[&x])
                };
                Ok(vec![vmap(f).call(a[0].clone())?])
            },
        },
        // Markers.
        Golden {
            family: "marker",
            name: "grad through stop_gradient",
            inputs: &["f32[3]"],
            f: |a| grad1(|x| &x * &lax::stop_gradient(&x), a),
        },
        Golden {
            family: "marker",
            name: "grad of a named value",
            inputs: &["f32[3]"],
            f: |a| grad1(|x| lax::sin(&crate::checkpoint_name(&x, "h")), a),
        },
    ]
}

/// The checked-in text of each family's cases.
fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/transform/rules/golden")
}

/// Each family's cases as one text: a `== name : inputs` line, then the
/// jaxpr.
fn traced_texts() -> BTreeMap<&'static str, String> {
    let mut texts: BTreeMap<&'static str, String> = BTreeMap::new();
    for case in cases() {
        let avals: Vec<Aval> = case.inputs.iter().map(|a| aval(a)).collect();
        let location = Location::from_caller(std::panic::Location::caller());
        let traced = crate::runtime::without_plugin(|| {
            crate::transform::eval::trace_flat(&avals, true, location, case.f)
        });
        let text = match traced {
            Ok((jaxpr, _)) => jaxpr.to_string(),
            Err(e) => format!("error: {e}"),
        };
        let entry = texts.entry(case.family).or_default();
        entry.push_str(&format!(
            "== {} : {}\n{text}\n\n",
            case.name,
            case.inputs.join(" ")
        ));
    }
    texts
}

#[test]
fn every_familys_transformations_trace_to_their_golden_jaxprs() {
    let bless = std::env::var_os("OXLA_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (family, text) in traced_texts() {
        assert!(
            !text.contains("\nerror: "),
            "a {family} case failed to trace (it must trace on abstract inputs, without a plugin):\n{text}"
        );
        let path = golden_dir().join(format!("{family}.txt"));
        if bless {
            std::fs::create_dir_all(golden_dir()).expect("the golden directory");
            std::fs::write(&path, &text).expect("a golden file");
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if want != text {
            let diff: Vec<String> = text
                .lines()
                .zip(want.lines().chain(std::iter::repeat("<missing>")))
                .filter(|(got, want)| got != want)
                .take(6)
                .map(|(got, want)| format!("  got:  {got}\n  want: {want}"))
                .collect();
            stale.push(format!("{}:\n{}", path.display(), diff.join("\n")));
        }
    }
    assert!(
        stale.is_empty(),
        "jaxprs differ from the golden files (OXLA_BLESS=1 rewrites them; review the diff):\n{}",
        stale.join("\n")
    );
}

/// Rows split over axis 'x' of an abstract mesh of 4 devices whose axis has
/// type `axis_type`.
fn rows_split(axis_type: oxla_core::AxisType) -> oxla_core::ShardingDesc {
    let mesh = oxla_core::MeshDesc::new(
        std::sync::Arc::from([(std::sync::Arc::from("x"), 4)]),
        (0..4).collect(),
    )
    .with_axis_types(&[axis_type]);
    oxla_core::ShardingDesc::new(
        mesh,
        vec![std::sync::Arc::from([std::sync::Arc::from("x")])].into(),
    )
}
