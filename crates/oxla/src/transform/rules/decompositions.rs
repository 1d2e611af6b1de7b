//! The jvp rules of the QR, symmetric eigen-, singular value and general
//! eigendecompositions, as JAX's `qr_jvp_rule`, `_eigh_jvp_rule`,
//! `_svd_jvp_rule` and `eig_jvp_rule` (`jax/_src/lax/linalg.py`).

use oxla_core::Primitive;
use oxla_core::primitive::linalg::Op;

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::lax::linalg::{TriangularSolveOptions, adjoint, matmul_highest, triangular_solve};
use crate::numpy::{eye, matmul, tril};
use crate::transform::support::{self, Tangent, refs, rule_error};

/// Primal outputs and their tangents.
type Jvp = (Vec<Array>, Vec<Tangent>);

/// The matrix dimensions of `x`.
fn dims(x: &Array) -> Result<(i64, i64)> {
    let aval = x.aval()?;
    let s = &aval.shape;
    Ok((s[s.len() - 2], s[s.len() - 1]))
}

/// `x[..., rows.0..rows.1, cols.0..cols.1]`.
fn block(x: &Array, rows: (i64, i64), cols: (i64, i64)) -> Array {
    let x = lax::slice_in_dim(x, rows.0, Some(rows.1), 1, -2);
    lax::slice_in_dim(&x, cols.0, Some(cols.1), 1, -1)
}

/// The main diagonal of the last two axes.
fn diagonal(x: &Array) -> Array {
    crate::numpy::diagonal(x, 0, -2, -1)
}

/// `x` converted to `like`'s dtype.
fn as_type_of(x: &Array, like: &Array) -> Array {
    lax::convert_element_type(x, like.dtype_or_bool())
}

/// JAX's `_thin_qr_jvp`: the tangents of `q` (m×n) and `r` (n×n) of a
/// thin QR (m ≥ n) for the operand's tangent `dx`.
fn thin_qr_jvp(q: &Array, r: &Array, dx: &Array) -> Result<(Array, Array)> {
    let (_, n) = dims(r)?;
    let dx_rinv = triangular_solve(r, dx, TriangularSolveOptions::default());
    let qt = matmul(&adjoint(q), &dx_rinv);
    let lo = tril(&qt, -1);
    let mut d_omega = lax::sub(&lo, &adjoint(&lo));
    let imaginary_diagonal = lax::sub(&qt, &as_type_of(&crate::numpy::real(&qt), &qt));
    d_omega = lax::add(
        &d_omega,
        &crate::numpy::multiply(&eye(n, qt.dtype_or_bool()), &imaginary_diagonal),
    );
    let dq = lax::add(&matmul(q, &lax::sub(&d_omega, &qt)), &dx_rinv);
    let dr = matmul(&lax::sub(&qt, &d_omega), r);
    Ok((dq, dr))
}

/// JAX's `qr_jvp_rule`.
pub(crate) fn qr_jvp(
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    full_matrices: bool,
) -> Result<Jvp> {
    let outs = support::bind_all(primitive.clone(), &refs(primals))?;
    let Some(dx) = tangents.first().cloned().flatten() else {
        return Ok((outs, vec![None, None]));
    };
    let (x, q, r) = (&primals[0], &outs[0], &outs[1]);
    let (m, n) = dims(x)?;
    let (dq, dr) = if m < n {
        let x2 = block(x, (0, m), (m, n));
        let dx1 = block(&dx, (0, m), (0, m));
        let dx2 = block(&dx, (0, m), (m, n));
        let r1 = block(r, (0, m), (0, m));
        let (dq, dr1) = thin_qr_jvp(q, &r1, &dx1)?;
        let dr2 = lax::add(&matmul(&adjoint(&dq), &x2), &matmul(&adjoint(q), &dx2));
        (dq, crate::numpy::concatenate(&[&dr1, &dr2], -1))
    } else {
        let q_mn = if full_matrices {
            block(q, (0, m), (0, n))
        } else {
            q.clone()
        };
        let r_nn = if full_matrices {
            block(r, (0, n), (0, n))
        } else {
            r.clone()
        };
        let (dq_mn, dr_nn) = thin_qr_jvp(&q_mn, &r_nn, &dx)?;
        if !full_matrices || m == n {
            (dq_mn, dr_nn)
        } else {
            // The complete Q's last m - n columns, from its orthogonality.
            let q_nn = block(&q_mn, (0, n), (0, n));
            let q_pn = block(&q_mn, (n, m), (0, n));
            let q_mp = block(q, (0, m), (n, m));
            let dq_nn = block(&dq_mn, (0, n), (0, n));
            let dq_pn = block(&dq_mn, (n, m), (0, n));
            let (lu, _, permutation) =
                crate::lax::linalg::lu(&crate::numpy::subtract(&q_nn, &eye(n, q.dtype_or_bool())));
            let z_pn_h = crate::lax::linalg::lu_solve(&lu, &permutation, &adjoint(&q_pn), 2);
            let z_pn = adjoint(&z_pn_h);
            let dq_mp = lax::sub(
                &matmul(&dq_mn, &z_pn_h),
                &matmul(
                    &lax::add(&q_mn, &matmul(&q_mp, &z_pn)),
                    &adjoint(&lax::sub(&dq_pn, &matmul(&z_pn, &dq_nn))),
                ),
            );
            let dq = crate::numpy::concatenate(&[&dq_mn, &dq_mp], -1);
            let mut shape = dr_nn.shape_or_empty().to_vec();
            let rank = shape.len();
            shape[rank - 2] = m - n;
            let zeros = crate::numpy::zeros(&shape, dr_nn.dtype_or_bool());
            (dq, crate::numpy::concatenate(&[&dr_nn, &zeros], -2))
        }
    };
    Ok((outs, vec![Some(dq), Some(dr)]))
}

/// `(x + xᴴ) / 2`.
fn symmetrize(x: &Array) -> Array {
    lax::div(
        &lax::add(x, &adjoint(x)),
        &crate::numpy::scalar_like(x, 2.0),
    )
}

/// `1 / (w_j - w_i)` off the diagonal and 0 on it, for eigenvalues `w`
/// (JAX's `Fmat`; infinite for repeated eigenvalues).
fn eigenvalue_gaps_inverse(w: &Array, n: i64) -> Array {
    let eye = eye(n, w.dtype_or_bool());
    let gaps = crate::numpy::subtract(
        &crate::numpy::add(&eye, &crate::numpy::expand_dims(w, -2)),
        &crate::numpy::expand_dims(w, -1),
    );
    crate::numpy::subtract(&lax::integer_pow(&gaps, -1), &eye)
}

/// JAX's `_eigh_jvp_rule`: the primal recomputed on the symmetrized
/// operand; `dv = V (F ∘ Vᴴ ȧ V)`, `dw = re diag(Vᴴ ȧ V)`.
pub(crate) fn eigh_jvp(
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let a = &primals[0];
    let outs = support::bind_all(primitive.clone(), &[&symmetrize(a)])?;
    let Some(a_dot) = tangents.first().cloned().flatten() else {
        return Ok((outs, vec![None, None]));
    };
    let (v, w_real) = (&outs[0], &outs[1]);
    let (n, _) = dims(a)?;
    let w = as_type_of(w_real, a);
    let f = eigenvalue_gaps_inverse(&w, n);
    let vdav = matmul_highest(&matmul_highest(&adjoint(v), &a_dot), v);
    let dv = matmul_highest(v, &lax::mul(&f, &vdav));
    let dw = diagonal(&crate::numpy::real(&vdav));
    Ok((outs, vec![Some(dv), Some(dw)]))
}

/// JAX's `_svd_jvp_rule`, from the reduced decomposition: `ds = re
/// diag(Uᴴ Ȧ V)`, and the vectors' tangents with the `1/(s_j² - s_i²)`
/// gaps and the corrections of a non-square operand.
pub(crate) fn svd_jvp(
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    full_matrices: bool,
    compute_uv: bool,
) -> Result<Jvp> {
    let a = &primals[0];
    let (m, n) = dims(a)?;
    if compute_uv && full_matrices && m != n {
        return Err(rule_error(
            "jvp",
            primitive,
            format!(
                "the derivative of an SVD with full_matrices=True of a non-square {m}×{n} \
                 matrix is not defined (as in JAX): use full_matrices=False"
            ),
        ));
    }
    let reduced = Primitive::Linalg(Op::Svd {
        full_matrices: false,
        compute_uv: true,
    });
    let outs = support::bind_all(reduced, &[a])?;
    let (s, u, vt) = (&outs[0], &outs[1], &outs[2]);
    let primal_outs = if compute_uv {
        outs.clone()
    } else {
        vec![s.clone()]
    };
    let Some(da) = tangents.first().cloned().flatten() else {
        let none = vec![None; primal_outs.len()];
        return Ok((primal_outs, none));
    };
    let dtype = a.dtype_or_bool();
    let (ut, v) = (adjoint(u), adjoint(vt));
    let s_dim = crate::numpy::expand_dims(s, -2);
    let s_dim_t = crate::numpy::matrix_transpose(&s_dim);
    let ds_full = matmul_highest(&matmul_highest(&ut, &da), &v);
    let ds = diagonal(&crate::numpy::real(&ds_full));
    if !compute_uv {
        return Ok((primal_outs, vec![Some(ds)]));
    }
    let k = m.min(n);
    let real = s.dtype_or_bool();
    let s_diffs = lax::mul(&lax::add(&s_dim, &s_dim_t), &lax::sub(&s_dim, &s_dim_t));
    let ik = eye(k, real);
    let f = crate::numpy::subtract(
        &crate::numpy::reciprocal(&crate::numpy::add(&s_diffs, &ik)),
        &ik,
    );
    let f = lax::convert_element_type(&f, dtype);
    let cast = |x: &Array| lax::convert_element_type(x, dtype);
    let dss = lax::mul(&cast(&s_dim), &ds_full);
    let sds = lax::mul(&cast(&s_dim_t), &ds_full);
    let s_zeros = lax::convert_element_type(&lax::eq(s, &crate::numpy::scalar_like(s, 0.0)), real);
    let s_inv = lax::sub(&crate::numpy::reciprocal(&lax::add(s, &s_zeros)), &s_zeros);
    let half = crate::numpy::scalar_like(&ds_full, 0.5);
    let du_dv_diagonal = lax::mul(
        &lax::mul(&half, &lax::sub(&ds_full, &adjoint(&ds_full))),
        &cast(&crate::numpy::multiply(
            &crate::numpy::expand_dims(&s_inv, -1),
            &ik,
        )),
    );
    let mut du = matmul_highest(
        u,
        &lax::add(
            &lax::mul(&f, &lax::add(&dss, &adjoint(&dss))),
            &du_dv_diagonal,
        ),
    );
    let mut dv = matmul_highest(&v, &lax::mul(&f, &lax::add(&sds, &adjoint(&sds))));
    if m > n {
        let dav = matmul_highest(&da, &v);
        let correction = lax::sub(&dav, &matmul_highest(u, &matmul_highest(&ut, &dav)));
        du = lax::add(&du, &lax::div(&correction, &cast(&s_dim)));
    }
    if n > m {
        let dahu = matmul_highest(&adjoint(&da), u);
        let correction = lax::sub(&dahu, &matmul_highest(&v, &matmul_highest(vt, &dahu)));
        dv = lax::add(&dv, &lax::div(&correction, &cast(&s_dim)));
    }
    Ok((primal_outs, vec![Some(ds), Some(du), Some(adjoint(&dv))]))
}

/// JAX's `eig_jvp_rule` for the eigenvalues: `dw = diag(V⁻¹ Ȧ V)`, with
/// the right eigenvectors recomputed. Eigenvector derivatives are an
/// error, as in JAX by default.
pub(crate) fn eig_jvp(
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
) -> Result<Jvp> {
    let a = &primals[0];
    if compute_left_eigenvectors || compute_right_eigenvectors {
        if tangents.iter().all(Option::is_none) {
            let outs = support::bind_all(primitive.clone(), &refs(primals))?;
            let none = vec![None; outs.len()];
            return Ok((outs, none));
        }
        return Err(rule_error(
            "jvp",
            primitive,
            "the derivatives of eigenvectors of a general matrix are not computed (as in JAX \
             without enable_eigvec_derivs); differentiate the eigenvalues (jnp.linalg.eigvals)",
        ));
    }
    let with_vectors = Primitive::Linalg(Op::Eig {
        compute_left_eigenvectors: false,
        compute_right_eigenvectors: true,
    });
    let outs = support::bind_all(with_vectors, &[a])?;
    let (w, vr) = (&outs[0], &outs[1]);
    let Some(da) = tangents.first().cloned().flatten() else {
        return Ok((vec![w.clone()], vec![None]));
    };
    let complex = w.dtype_or_bool();
    let da = lax::convert_element_type(&da, complex);
    let solved = crate::numpy::linalg::solve(vr, &da);
    let dw = crate::numpy::sum(
        &lax::mul(&solved, &crate::numpy::matrix_transpose(vr)),
        Some(&[-1]),
        false,
    );
    Ok((vec![w.clone()], vec![Some(dw)]))
}
