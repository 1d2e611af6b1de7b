//! The portable linear algebra: LU, QR, eigh and SVD lowered without
//! LAPACK, as XLA's own expansions (`Qr`, `Eigh`) and StableHLO loops, which
//! is how oxla lowers them for GPUs and TPUs and for exports to several
//! platforms. Each is exported for the CPU and CUDA (so the module is
//! portable), run on the CPU plugin, and compared with JAX's LAPACK
//! results (reference/portable_linalg.py): factors, pivots and values
//! directly, eigenvectors and singular vectors up to each column's sign or
//! phase, plus the reconstruction and orthonormality of what has no
//! unique answer (a rank-deficient matrix's null vectors, the completion
//! of a full U).

use oxla::numpy::linalg as la;
use oxla::{Array, ExportOptions, jit, lax};
use oxla_npy::HostArray;
use oxla_pjrt::ElementType;
use oxla_testing::{Tolerance, assert_matches_jax};

use crate::reference;

/// How closely the expansions match LAPACK: other algorithms (Householder
/// blocks of another size, Jacobi rotations against divide and conquer)
/// whose roundings differ along chains of dependent sums.
const EXPANSION: Tolerance = Tolerance::chain(
    512.0,
    128.0,
    "XLA's Householder and Jacobi expansions against LAPACK's blocked geqrf and syevd: other \
     algorithms, other roundings along chains of dependent sums",
);

fn want(name: &str) -> &'static serde_json::Value {
    &reference::script("portable_linalg.py")[name]
}

fn input(name: &str) -> Array {
    reference::array(want(&format!("in_{name}")))
}

/// `f` on `x`, exported for the CPU and CUDA (portable linear algebra) and
/// run on the CPU plugin; the module must call `target`.
fn portable(f: impl Fn(Array) -> Vec<Array>, x: &Array, target: &str) -> Vec<HostArray> {
    let exported = jit(f)
        .export(x, &ExportOptions::new().platforms(&["cpu", "cuda"]))
        .unwrap();
    let text = oxla_export::artifact_to_text(&exported.mlir_module).unwrap();
    assert!(
        text.contains(target) && !text.contains("lapack_"),
        "the export should call {target} and no LAPACK: {text}"
    );
    let loaded = oxla_export::LoadedExport::new(oxla::client().unwrap(), &exported).unwrap();
    loaded.call(&[x.to_host().unwrap()]).unwrap()
}

/// A host array's matrices as complex f64 numbers: (batch, rows, columns,
/// elements in row-major order).
fn matrices(h: &HostArray) -> (usize, usize, usize, Vec<(f64, f64)>) {
    let dims: Vec<usize> = h.dims.iter().map(|&d| d as usize).collect();
    let (rows, cols) = (dims[dims.len() - 2], dims[dims.len() - 1]);
    let batch = dims[..dims.len() - 2].iter().product();
    let floats: Vec<f64> = h
        .bytes
        .chunks_exact(4)
        .map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap())))
        .collect();
    let values = match h.element_type() {
        ElementType::F32 => floats.iter().map(|&x| (x, 0.0)).collect(),
        ElementType::C64 => floats.chunks_exact(2).map(|c| (c[0], c[1])).collect(),
        other => panic!("no matrices of {other:?} here"),
    };
    (batch, rows, cols, values)
}

/// `Σ_i conj(a[i, j]) b[i, k]` for each batch element: the inner products
/// of `a`'s columns with `b`'s.
fn column_products(a: &HostArray, b: &HostArray) -> Vec<Vec<Vec<(f64, f64)>>> {
    let (batch, rows, a_cols, a) = matrices(a);
    let (_, _, b_cols, b) = matrices(b);
    (0..batch)
        .map(|t| {
            (0..a_cols)
                .map(|j| {
                    (0..b_cols)
                        .map(|k| {
                            (0..rows).fold((0.0, 0.0), |(re, im), i| {
                                let (x, y) = a[t * rows * a_cols + i * a_cols + j];
                                let (u, v) = b[t * rows * b_cols + i * b_cols + k];
                                (re + x * u + y * v, im + x * v - y * u)
                            })
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// `got`'s columns are `want`'s up to a sign or phase each (the first
/// `columns`), and orthonormal (all of them).
fn assert_same_columns(got: &HostArray, want: &HostArray, columns: usize, what: &str) {
    for (t, products) in column_products(want, got).iter().enumerate() {
        for (j, row) in products.iter().enumerate().take(columns) {
            let (re, im) = row[j];
            let alignment = (re * re + im * im).sqrt();
            assert!(
                (alignment - 1.0).abs() < 1e-4,
                "{what}[{t}]: column {j} is not JAX's up to its sign: |<want, got>| = {alignment}"
            );
        }
    }
    assert_orthonormal_columns(got, what);
}

fn assert_orthonormal_columns(got: &HostArray, what: &str) {
    for (t, gram) in column_products(got, got).iter().enumerate() {
        for (j, row) in gram.iter().enumerate() {
            for (k, &(re, im)) in row.iter().enumerate() {
                let expected = if j == k { 1.0 } else { 0.0 };
                assert!(
                    (re - expected).abs() < 1e-5 && im.abs() < 1e-5,
                    "{what}[{t}]: columns {j} and {k} have inner product ({re}, {im})"
                );
            }
        }
    }
}

/// The conjugate transpose of a host array of f32 or c64 matrices.
fn adjoint(h: &HostArray) -> HostArray {
    let (batch, rows, cols, values) = matrices(h);
    let complex = h.element_type() == ElementType::C64;
    let mut bytes = Vec::with_capacity(h.bytes.len());
    for t in 0..batch {
        for j in 0..cols {
            for i in 0..rows {
                let (re, im) = values[t * rows * cols + i * cols + j];
                bytes.extend_from_slice(&(re as f32).to_le_bytes());
                if complex {
                    bytes.extend_from_slice(&(-im as f32).to_le_bytes());
                }
            }
        }
    }
    let mut dims = h.dims.clone();
    let last = dims.len() - 1;
    dims.swap(last - 1, last);
    HostArray::new(h.element_type(), dims, bytes)
}

/// `‖U diag(s) Vᴴ - A‖_max` is within 1e-5 of `‖A‖_max`.
fn assert_reconstructs(u: &HostArray, s: &HostArray, vh: &HostArray, a: &Array, what: &str) {
    let a = a.to_host().unwrap();
    let (batch, m, n, a) = matrices(&a);
    let (_, _, k, u) = matrices(u);
    let (_, _, _, vh) = matrices(vh);
    let s: Vec<f64> = s
        .bytes
        .chunks_exact(4)
        .map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap())))
        .collect();
    let scale = a.iter().map(|(x, y)| x.hypot(*y)).fold(0.0, f64::max);
    for t in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let (mut re, mut im) = (0.0, 0.0);
                for l in 0..k {
                    let (ur, ui) = u[t * m * k + i * k + l];
                    let (vr, vi) = vh[t * k * n + l * n + j];
                    let sl = s[t * k + l];
                    re += sl * (ur * vr - ui * vi);
                    im += sl * (ur * vi + ui * vr);
                }
                let (ar, ai) = a[t * m * n + i * n + j];
                let error = (re - ar).hypot(im - ai);
                assert!(
                    error <= 1e-5 * scale.max(1.0),
                    "{what}[{t}]: U diag(s) Vᴴ differs from A at ({i}, {j}) by {error}"
                );
            }
        }
    }
}

fn assert_like_jax(got: &HostArray, name: &str, what: &str) {
    assert_matches_jax(got, &reference::host(want(name)), EXPANSION, what);
}

#[test]
fn portable_lu_pivots_as_lapack_does() {
    for name in [
        "square",
        "tall",
        "wide",
        "batch",
        "complex_square",
        "singular",
    ] {
        let x = input(name);
        let outs = portable(
            |x| {
                let (lu, pivots, _) = lax::linalg::lu(&x);
                vec![lu, pivots]
            },
            &x,
            "vhlo.while_v1",
        );
        assert_like_jax(&outs[0], &format!("lu_{name}"), &format!("lu of {name}"));
        assert_matches_jax(
            &outs[1],
            &reference::host(want(&format!("pivots_{name}"))),
            Tolerance::Ulps(0),
            &format!("pivots of {name}"),
        );
    }
}

#[test]
fn portable_qr_matches_lapack() {
    for name in ["tall", "wide", "square", "complex"] {
        for (mode, label) in [
            (la::QrMode::Reduced, "reduced"),
            (la::QrMode::Complete, "complete"),
        ] {
            let x = input(name);
            let outs = portable(
                move |x| {
                    let (q, r) = la::qr(&x, mode);
                    vec![q, r]
                },
                &x,
                "ProductOfElementaryHouseholderReflectors",
            );
            let what = format!("{label} QR of {name}");
            assert_like_jax(&outs[0], &format!("qr_{label}_q_{name}"), &what);
            assert_like_jax(&outs[1], &format!("qr_{label}_r_{name}"), &what);
        }
    }
}

#[test]
fn portable_eigh_matches_lapack_up_to_signs() {
    for name in ["symmetric", "symmetric_batch", "hermitian"] {
        let x = input(name);
        for upper in [false, true] {
            let outs = portable(
                move |x| {
                    let (w, v) = la::eigh(&x, upper, false);
                    vec![w, v]
                },
                &x,
                "\"Eigh\"",
            );
            let w_name = match upper {
                false => format!("eigh_w_{name}"),
                true => format!("eigh_upper_w_{name}"),
            };
            let what = format!("eigh of {name} (upper {upper})");
            assert_like_jax(&outs[0], &w_name, &what);
            let v = reference::host(want(&format!("eigh_v_{name}")));
            let n = *v.dims.last().unwrap() as usize;
            assert_same_columns(&outs[1], &v, n, &what);
        }
    }
}

#[test]
fn portable_svd_matches_lapack_up_to_signs() {
    for name in [
        "tall",
        "wide",
        "square",
        "batch",
        "complex",
        "rank_deficient",
    ] {
        let x = input(name);
        let outs = portable(
            |x| {
                let (u, s, vh) = la::svd(&x, false, false);
                vec![u, s, vh, lax::linalg::svd_values(&x)]
            },
            &x,
            "\"Eigh\"",
        );
        let what = format!("SVD of {name}");
        assert_like_jax(&outs[1], &format!("svd_s_{name}"), &what);
        assert_like_jax(
            &outs[3],
            &format!("svd_s_{name}"),
            &format!("{what}, values only"),
        );
        assert_reconstructs(&outs[0], &outs[1], &outs[2], &x, &what);
        // A zero singular value's vectors are any completion: only the
        // others are JAX's.
        let k = *outs[1].dims.last().unwrap() as usize;
        let distinct = if name == "rank_deficient" { 2 } else { k };
        let want_u = reference::host(want(&format!("svd_u_{name}")));
        assert_same_columns(&outs[0], &want_u, distinct, &format!("{what}: U"));
        let v = adjoint;
        let want_vh = reference::host(want(&format!("svd_vh_{name}")));
        assert_same_columns(&v(&outs[2]), &v(&want_vh), distinct, &format!("{what}: V"));
    }
    // Complete U: JAX's first columns, completed to an orthonormal basis.
    let x = input("tall");
    let outs = portable(
        |x| {
            let (u, s, vh) = la::svd(&x, true, false);
            vec![u, s, vh]
        },
        &x,
        "\"Eigh\"",
    );
    assert_eq!(outs[0].dims, vec![5, 5]);
    assert_eq!(outs[2].dims, vec![3, 3]);
    let want_u = reference::host(want("svd_u_tall"));
    assert_same_columns(&outs[0], &want_u, 3, "complete U of tall");
}

#[test]
fn solves_determinants_and_pseudo_inverses_run_on_the_portable_kernels() {
    let (a, rhs) = (input("square"), input("rhs"));
    let outs = portable(
        move |a| {
            let (sign, logdet) = la::slogdet(&a);
            vec![la::solve(&a, &rhs), la::inv(&a), la::det(&a), sign, logdet]
        },
        &a,
        "vhlo.while_v1",
    );
    for (got, name) in outs
        .iter()
        .zip(["solve", "inv", "det", "slogdet_sign", "slogdet_logdet"])
    {
        assert_like_jax(got, name, name);
    }
    // A 3×3 determinant is JAX's closed form, with no decomposition.
    for (name, label, target) in [
        ("batch", "det_batch", "vhlo.while_v1"),
        ("singular", "det_singular", "vhlo.func_v1"),
    ] {
        let outs = portable(|a| vec![la::det(&a)], &input(name), target);
        assert_like_jax(&outs[0], label, label);
    }
    let tall = input("tall");
    let outs = portable(
        |a| {
            let target = &lax::slice(&a, &[0, 0], &[5, 2], None) + 0.5;
            vec![
                la::pinv(&a, None),
                la::norm(&a, Some(la::Ord::P(2.0)), None, false),
                la::lstsq(&a, &target, None).0,
            ]
        },
        &tall,
        "\"Eigh\"",
    );
    assert_like_jax(&outs[0], "pinv_tall", "pinv");
    assert_like_jax(&outs[1], "norm_2", "2-norm");
    assert_like_jax(&outs[2], "lstsq", "lstsq");
    let outs = portable(
        |a| vec![la::norm(&a, Some(la::Ord::Nuc), None, false)],
        &input("wide"),
        "\"Eigh\"",
    );
    assert_like_jax(&outs[0], "norm_nuc", "nuclear norm");
    let outs = portable(
        |a| vec![la::matrix_rank(&a, None)],
        &input("rank_deficient"),
        "\"Eigh\"",
    );
    assert_matches_jax(
        &outs[0],
        &reference::host(want("matrix_rank")),
        Tolerance::Ulps(0),
        "matrix_rank",
    );
}
