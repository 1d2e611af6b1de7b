//! Linear-algebra primitives (JAX's `jax/_src/lax/linalg.py`): the
//! Cholesky factor, triangular solves, and the LU, QR, symmetric and
//! general eigen- and singular value decompositions, batched over leading
//! dimensions.

use crate::aval::Aval;
use crate::primitive::TypeClass;
use crate::shape_rules::{RuleResult, ShapeError, expect_arity, expect_class};

/// How a triangular solve reads its matrix `a` (JAX's keyword arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TriangularSolveOptions {
    /// Solve `op(a) x = b` (true) or `x op(a) = b` (false).
    pub left_side: bool,
    /// `a` is lower (true) or upper (false) triangular; the other half is
    /// not read.
    pub lower: bool,
    /// `op(a)` transposes `a`.
    pub transpose_a: bool,
    /// `op(a)` conjugates `a` (complex types only).
    pub conjugate_a: bool,
    /// The diagonal of `a` is taken to be ones, and not read.
    pub unit_diagonal: bool,
}

/// A linear-algebra primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// The lower Cholesky factor `L` of a Hermitian positive-definite
    /// matrix, `x = L Lᴴ` (NaNs where `x` is not positive definite).
    Cholesky,
    /// `x` with `op(a) x = b` (or `x op(a) = b`) for a triangular `a`.
    TriangularSolve(TriangularSolveOptions),
    /// LU with partial pivoting, `P x = L U`: the factors packed in one
    /// matrix (`L` below the diagonal, its unit diagonal implied; `U` on
    /// and above) and the row swaps LAPACK made (`pivots`, 0-based). JAX's
    /// `lu` primitive also returns the permutation, which oxla computes
    /// from the pivots (`lax::linalg::lu_pivots_to_permutation`).
    Lu,
    /// `x = Q R` with `Q` unitary and `R` upper triangular: `Q` is m×m
    /// and `R` m×n with `full_matrices`, else m×k and k×n (k = min(m, n)).
    Qr {
        /// Complete (true) or reduced (false) factors.
        full_matrices: bool,
    },
    /// The eigenvectors (columns) and real eigenvalues of a Hermitian
    /// matrix, reading one triangle.
    Eigh {
        /// Read the lower (true) or upper (false) triangle.
        lower: bool,
        /// Eigenvalues ascending (LAPACK's order).
        sort_eigenvalues: bool,
    },
    /// Singular values (descending), and with `compute_uv` the singular
    /// vectors: `x = U diag(s) Vᴴ`.
    Svd {
        /// U m×m and Vᴴ n×n (true) or m×k and k×n (false).
        full_matrices: bool,
        /// Return U and Vᴴ after s.
        compute_uv: bool,
    },
    /// The eigenvalues (complex) of a general square matrix, and its left
    /// and right eigenvectors (complex columns) when asked for.
    Eig {
        /// Return the left eigenvectors.
        compute_left_eigenvectors: bool,
        /// Return the right eigenvectors.
        compute_right_eigenvectors: bool,
    },
}

impl Op {
    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Cholesky => "cholesky",
            Op::TriangularSolve(_) => "triangular_solve",
            Op::Lu => "lu",
            Op::Qr { .. } => "qr",
            Op::Eigh { .. } => "eigh",
            Op::Svd { .. } => "svd",
            Op::Eig { .. } => "eig",
        }
    }

    /// The parameters as jaxprs print them.
    pub fn params(
        &self,
        _pad: usize,
        _nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        use super::print::py_bool;
        match self {
            Op::Cholesky => vec![],
            Op::TriangularSolve(o) => vec![
                format!("conjugate_a={}", py_bool(o.conjugate_a)),
                format!("left_side={}", py_bool(o.left_side)),
                format!("lower={}", py_bool(o.lower)),
                format!("transpose_a={}", py_bool(o.transpose_a)),
                format!("unit_diagonal={}", py_bool(o.unit_diagonal)),
            ],
            Op::Lu => vec![],
            Op::Qr { full_matrices } => vec![
                format!("full_matrices={}", py_bool(*full_matrices)),
                "pivoting=False".to_string(),
                "use_magma=None".to_string(),
            ],
            Op::Eigh {
                lower,
                sort_eigenvalues,
            } => vec![
                format!("lower={}", py_bool(*lower)),
                format!("sort_eigenvalues={}", py_bool(*sort_eigenvalues)),
                "subset_by_index=None".to_string(),
            ],
            Op::Svd {
                full_matrices,
                compute_uv,
            } => vec![
                "algorithm=None".to_string(),
                format!("compute_uv={}", py_bool(*compute_uv)),
                format!("full_matrices={}", py_bool(*full_matrices)),
                "subset_by_index=None".to_string(),
            ],
            Op::Eig {
                compute_left_eigenvectors,
                compute_right_eigenvectors,
            } => vec![
                format!(
                    "compute_left_eigenvectors={}",
                    py_bool(*compute_left_eigenvectors)
                ),
                format!(
                    "compute_right_eigenvectors={}",
                    py_bool(*compute_right_eigenvectors)
                ),
                "use_magma=None".to_string(),
            ],
        }
    }
}

/// An error unless `aval` is a batch of square matrices.
fn expect_square(aval: &Aval, what: &str) -> RuleResult<()> {
    let s = &aval.shape;
    if s.len() < 2 || s[s.len() - 1] != s[s.len() - 2] {
        return Err(ShapeError::Invalid(format!(
            "{what} must be a (batch of) square matrices, got {aval}"
        )));
    }
    Ok(())
}

/// An error unless `aval` is a batch of matrices of a type LAPACK
/// factors (float32, float64, complex64, complex128), as JAX's
/// decompositions require.
fn expect_factorable(aval: &Aval) -> RuleResult<(i64, i64)> {
    use crate::dtype::DType;
    if !matches!(
        aval.dtype,
        DType::F32 | DType::F64 | DType::C64 | DType::C128
    ) {
        return Err(ShapeError::Invalid(format!(
            "the operand must be float32, float64, complex64 or complex128, got {aval}"
        )));
    }
    let s = &aval.shape;
    if s.len() < 2 {
        return Err(ShapeError::Invalid(format!(
            "the operand must be a (batch of) matrices, of rank 2 or more, got {aval}"
        )));
    }
    Ok((s[s.len() - 2], s[s.len() - 1]))
}

/// `aval`'s batch dimensions followed by `tail`.
fn batched(aval: &Aval, tail: &[i64], dtype: crate::dtype::DType) -> Aval {
    let s = &aval.shape;
    let mut shape = s[..s.len() - 2].to_vec();
    shape.extend_from_slice(tail);
    Aval::new(dtype, &shape)
}

/// The shape rule: as JAX's `_cholesky_shape_rule`,
/// `_triangular_solve_shape_rule`, `_lu_shape_rule`, `_qr_shape_rule`,
/// `_eigh_shape_rule`, `_svd_shape_rule` and `_eig_shape_rule`, with equal
/// batch dimensions.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::Lu => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let (m, n) = expect_factorable(x)?;
            Ok(vec![
                x.with_dtype(x.dtype),
                batched(x, &[m.min(n)], crate::dtype::DType::I32),
            ])
        }
        Op::Qr { full_matrices } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let (m, n) = expect_factorable(x)?;
            let k = if *full_matrices { m } else { m.min(n) };
            Ok(vec![
                batched(x, &[m, k], x.dtype),
                batched(x, &[k, n], x.dtype),
            ])
        }
        Op::Eigh { .. } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            expect_factorable(x)?;
            expect_square(x, "the operand")?;
            let n = x.shape[x.shape.len() - 1];
            Ok(vec![
                x.with_dtype(x.dtype),
                batched(x, &[n], x.dtype.real_part()),
            ])
        }
        Op::Svd {
            full_matrices,
            compute_uv,
        } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let (m, n) = expect_factorable(x)?;
            let k = m.min(n);
            let mut out = vec![batched(x, &[k], x.dtype.real_part())];
            if *compute_uv {
                let (u_cols, vt_rows) = if *full_matrices { (m, n) } else { (k, k) };
                out.push(batched(x, &[m, u_cols], x.dtype));
                out.push(batched(x, &[vt_rows, n], x.dtype));
            }
            Ok(out)
        }
        Op::Eig {
            compute_left_eigenvectors,
            compute_right_eigenvectors,
        } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            expect_factorable(x)?;
            expect_square(x, "the operand")?;
            let n = x.shape[x.shape.len() - 1];
            let complex = x.dtype.complex_of().unwrap_or(x.dtype);
            let mut out = vec![batched(x, &[n], complex)];
            for wanted in [compute_left_eigenvectors, compute_right_eigenvectors] {
                if *wanted {
                    out.push(batched(x, &[n, n], complex));
                }
            }
            Ok(out)
        }
        Op::Cholesky => {
            expect_arity(inputs, 1)?;
            expect_class(TypeClass::Inexact, inputs[0])?;
            expect_square(inputs[0], "the operand")?;
            Ok(vec![inputs[0].with_dtype(inputs[0].dtype)])
        }
        Op::TriangularSolve(o) => {
            expect_arity(inputs, 2)?;
            let (a, b) = (inputs[0], inputs[1]);
            expect_class(TypeClass::Inexact, a)?;
            expect_square(a, "a")?;
            if a.dtype != b.dtype {
                return Err(ShapeError::Invalid(format!(
                    "a and b must have the same dtype, got {a} and {b}"
                )));
            }
            let (ra, rb) = (a.shape.len(), b.shape.len());
            let common = if o.left_side {
                rb.wrapping_sub(2)
            } else {
                rb.wrapping_sub(1)
            };
            if rb != ra
                || a.shape[..ra - 2] != b.shape[..rb - 2]
                || b.shape[common] != a.shape[ra - 1]
            {
                return Err(ShapeError::Invalid(format!(
                    "incompatible shapes {a} and {b} (left_side={}): b must have a's batch \
                     dimensions and a's size along its {} dimension",
                    o.left_side,
                    if o.left_side {
                        "second-to-last"
                    } else {
                        "last"
                    }
                )));
            }
            Ok(vec![b.with_dtype(b.dtype)])
        }
    }
}

/// The sharding rule (see [`crate::sharding_rules`]): the matrix
/// dimensions are whole (a factorization or solve reads all of them);
/// batch dimensions keep their split.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    for x in inputs {
        let rank = x.shape.len();
        for dim in rank.saturating_sub(2)..rank {
            crate::sharding_rules::require_unsplit(
                x,
                dim,
                "a factorization or solve reads the whole matrix",
            )?;
        }
    }
    let x = inputs[0];
    // Each output: the operand's batch dimensions (and their split), then
    // `tail` whole dimensions.
    let batch_then = |tail: usize| -> Vec<crate::sharding_rules::Spec> {
        let axes = x.dim_axes();
        let mut spec = axes[..axes.len().saturating_sub(2)].to_vec();
        spec.extend(std::iter::repeat_n(Default::default(), tail));
        vec![spec]
    };
    Ok(match op {
        Op::Cholesky => vec![x.dim_axes()],
        Op::TriangularSolve(_) => vec![inputs[1].dim_axes()],
        Op::Lu => [x.dim_axes()].into_iter().chain(batch_then(1)).collect(),
        Op::Qr { .. } => [batch_then(2), batch_then(2)].concat(),
        Op::Eigh { .. } => [batch_then(2), batch_then(1)].concat(),
        Op::Svd { compute_uv, .. } => {
            let mut out = batch_then(1);
            if *compute_uv {
                out.extend(batch_then(2));
                out.extend(batch_then(2));
            }
            out
        }
        Op::Eig {
            compute_left_eigenvectors,
            compute_right_eigenvectors,
        } => {
            let mut out = batch_then(1);
            for wanted in [compute_left_eigenvectors, compute_right_eigenvectors] {
                if *wanted {
                    out.extend(batch_then(2));
                }
            }
            out
        }
    })
}
