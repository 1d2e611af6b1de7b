//! The lowering rules of the linear-algebra family
//! (`oxla_core::primitive::linalg`) to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use melior::ir::{Location, Value};
use oxla_core::primitive::linalg::Op;
use oxla_core::{Aval, DType, Scalar};

use super::{LowerArgs, Values, first_result};
use crate::emit::{Emitter, LowerError};

mod ops;
mod portable;

/// Which kernels the decompositions StableHLO lacks are lowered to.
#[derive(Debug, Clone, Copy)]
enum Kernels {
    /// LAPACK's, through `lapack_*_ffi` custom calls (the CPU).
    Lapack,
    /// XLA's own expansions and StableHLO loops ([`portable`]).
    Expanded,
}

/// The StableHLO of a primitive of this family. `cholesky` and
/// `triangular_solve` are StableHLO's ops, as JAX lowers them on GPUs and
/// TPUs (its CPU lowering calls LAPACK, and so does oxla's there). The
/// decompositions StableHLO has no op for (LU, QR, eigh, SVD, eig) are
/// JAX's CPU lowering on the CPU: `lapack_*_ffi` custom calls, which
/// oxla-pjrt handles with the system's LAPACK (`Client::enable_lapack`).
/// Elsewhere (accelerators, and programs for several platforms) they are
/// the [`portable`] forms XLA expands itself; eig has none, as in JAX.
pub(crate) fn lower<'c, 'a>(
    op: &Op,
    e: &mut Emitter<'c, 'a>,
    input: &LowerArgs<'_, 'c, 'a>,
) -> Result<Values<'c, 'a>, LowerError> {
    let LowerArgs {
        inputs,
        in_avals,
        out_avals,
        loc,
        ..
    } = *input;
    let out = &*first_result(out_avals);
    let lapack_type = matches!(
        in_avals[0].dtype,
        DType::F32 | DType::F64 | DType::C64 | DType::C128
    );
    let on_cpu = e.platform() == crate::Platform::Cpu && lapack_type;
    let kernels = match e.platform() {
        crate::Platform::Cpu => Kernels::Lapack,
        crate::Platform::Accelerator | crate::Platform::Any => Kernels::Expanded,
    };
    if e.platform() == crate::Platform::Accelerator && matches!(op, Op::Eig { .. }) {
        return Err(LowerError::Mlir(format!(
            "{} runs on the CPU only: oxla lowers it to LAPACK's geev and has no kernel for it \
             elsewhere",
            op.name()
        )));
    }
    match op {
        Op::Cholesky if on_cpu => cholesky_cpu(e, inputs[0], in_avals[0], out, loc),
        Op::TriangularSolve(o) if on_cpu => {
            triangular_solve_cpu(e, inputs[0], inputs[1], in_avals, *o, out, loc)
        }
        Op::Cholesky => e.op(
            "stablehlo.cholesky",
            inputs,
            &[out],
            &[("lower", "true".to_string())],
            loc,
        ),
        Op::Lu => match kernels {
            Kernels::Lapack => lu(e, inputs[0], in_avals[0], out_avals, loc),
            Kernels::Expanded => portable::lu(e, inputs[0], in_avals[0], out_avals[1], loc),
        },
        Op::Qr { full_matrices } => qr(
            e,
            inputs[0],
            in_avals[0],
            *full_matrices,
            out_avals,
            kernels,
            loc,
        ),
        Op::Eigh {
            lower,
            sort_eigenvalues,
        } => match kernels {
            Kernels::Lapack => eigh(e, inputs[0], in_avals[0], *lower, out_avals, loc),
            Kernels::Expanded => {
                let (v, w) =
                    portable::eigh(e, inputs[0], in_avals[0], *lower, *sort_eigenvalues, loc)?;
                Ok(vec![v, w])
            }
        },
        Op::Svd {
            full_matrices,
            compute_uv,
        } => match kernels {
            Kernels::Lapack => svd(
                e,
                inputs[0],
                in_avals[0],
                *full_matrices,
                *compute_uv,
                out_avals,
                loc,
            ),
            Kernels::Expanded => {
                portable::svd(e, inputs[0], in_avals[0], *full_matrices, *compute_uv, loc)
            }
        },
        Op::Eig {
            compute_left_eigenvectors,
            compute_right_eigenvectors,
        } => eig(
            e,
            inputs[0],
            in_avals[0],
            *compute_left_eigenvectors,
            *compute_right_eigenvectors,
            out_avals,
            loc,
        ),
        Op::TriangularSolve(o) => {
            let mut a = inputs[0];
            let mut conjugate_a = o.conjugate_a;
            // As JAX's `_triangular_solve_lowering`: a conjugate without a
            // transpose is applied to `a` first.
            if conjugate_a && !o.transpose_a {
                a = super::elementwise::conj(e, a, in_avals[0], loc)?;
                conjugate_a = false;
            }
            let transpose = match (o.transpose_a, conjugate_a) {
                (false, _) => "NO_TRANSPOSE",
                (true, true) => "ADJOINT",
                (true, false) => "TRANSPOSE",
            };
            e.op(
                "stablehlo.triangular_solve",
                &[a, inputs[1]],
                &[out],
                &[
                    ("left_side", o.left_side.to_string()),
                    ("lower", o.lower.to_string()),
                    ("unit_diagonal", o.unit_diagonal.to_string()),
                    ("transpose_a", format!("#stablehlo<transpose {transpose}>")),
                ],
                loc,
            )
        }
    }
}

/// The layout of a custom call's operand or result: column-major matrices
/// (the last two dimensions minor, the row fastest), other ranks
/// row-major, as JAX's `_linalg_ffi_lowering` and LAPACK want them.
fn layout(aval: &Aval, matrix: bool) -> String {
    let rank = aval.shape.len();
    let order: Vec<String> = if matrix && rank >= 2 {
        [rank - 2, rank - 1]
            .into_iter()
            .chain((0..rank - 2).rev())
            .map(|d| d.to_string())
            .collect()
    } else {
        (0..rank).rev().map(|d| d.to_string()).collect()
    };
    if order.is_empty() {
        "dense<> : tensor<0xindex>".to_string()
    } else {
        format!("dense<[{}]> : tensor<{rank}xindex>", order.join(", "))
    }
}

/// `stablehlo.custom_call @lapack_<p><routine>_ffi` (typed FFI) on
/// `operands`, with `results` and the one-character attributes `config`
/// (`uplo = 76 : ui8`); each operand and result says whether it is a
/// (column-major) matrix. Unlike JAX's, the call declares no
/// `output_operand_aliases` (oxla's VHLO writer has no form for them):
/// the handler copies the operand into the result.
#[allow(clippy::too_many_arguments)]
fn lapack_call<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    routine: &str,
    dtype: DType,
    operands: &[(Value<'c, 'a>, &Aval, bool)],
    results: &[(&Aval, bool)],
    config: &[(&str, u8)],
    loc: Location<'c>,
) -> Result<Vec<Value<'c, 'a>>, LowerError> {
    let (letter, complex_names) = match dtype {
        DType::F32 => ('s', false),
        DType::F64 => ('d', false),
        DType::C64 => ('c', true),
        DType::C128 => ('z', true),
        other @ (DType::Bool
        | DType::I8
        | DType::I16
        | DType::I32
        | DType::I64
        | DType::U8
        | DType::U16
        | DType::U32
        | DType::U64
        | DType::F16
        | DType::BF16) => {
            return Err(LowerError::Mlir(format!(
                "LAPACK has no {routine} for {other}"
            )));
        }
    };
    let name = match (routine, complex_names) {
        ("orgqr", true) => "ungqr",
        ("syevd", true) => "heevd",
        (name, _) => name,
    };
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    let operand_layouts = list(operands.iter().map(|(_, a, m)| layout(a, *m)).collect());
    let result_layouts = list(results.iter().map(|(a, m)| layout(a, *m)).collect());
    let config = config
        .iter()
        .map(|(k, v)| format!("{k} = {v} : ui8"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut attrs = vec![
        ("call_target_name", format!("\"lapack_{letter}{name}_ffi\"")),
        ("api_version", "4 : i32".to_string()),
        ("backend_config", format!("{{{config}}}")),
        ("operand_layouts", operand_layouts),
        ("result_layouts", result_layouts),
    ];
    if let Some(operand) = overwritten_operand(routine) {
        // The first result is written where the operand was, as in JAX's
        // lowering: XLA then reuses a dead operand's buffer (or copies a
        // live one itself) instead of the kernel copying every call.
        let output = if results.len() == 1 { "[]" } else { "[0]" };
        attrs.push((
            "output_operand_aliases",
            format!(
                "[#stablehlo.output_operand_alias<output_tuple_indices = {output}, \
                 operand_index = {operand}, operand_tuple_indices = []>]"
            ),
        ));
    }
    let values: Vec<Value> = operands.iter().map(|(v, _, _)| *v).collect();
    let avals: Vec<&Aval> = results.iter().map(|(a, _)| *a).collect();
    e.op("stablehlo.custom_call", &values, &avals, &attrs, loc)
}

/// The operand whose buffer a LAPACK routine's first result overwrites,
/// as JAX's CPU lowering declares it: the matrix for the factorizations
/// and decompositions, the right-hand sides for `trsm`; none for `geev`,
/// whose results all differ from its operand in type or shape.
fn overwritten_operand(routine: &str) -> Option<usize> {
    match routine {
        "getrf" | "geqrf" | "orgqr" | "potrf" | "syevd" | "gesdd" => Some(0),
        "trsm" => Some(1),
        _ => None,
    }
}

/// `aval`'s batch dimensions (all but the last `matrix_rank`) as a shape
/// with `tail` after them.
fn batch_shape(aval: &Aval, matrix_rank: usize, tail: &[i64]) -> Vec<i64> {
    let s = &aval.shape;
    let mut shape = s[..s.len() - matrix_rank].to_vec();
    shape.extend_from_slice(tail);
    shape
}

/// `value` (of `aval`) where the per-matrix `ok` (of the batch shape) is
/// true, NaN elsewhere: JAX's `_replace_not_ok_with_nan`.
fn nan_unless<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    ok: Value<'c, 'a>,
    value: Value<'c, 'a>,
    aval: &Aval,
    batch_rank: usize,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let dims: Vec<i64> = (0..batch_rank as i64).collect();
    let ok = ops::broadcast(e, ok, &aval.with_dtype(DType::Bool), &dims, loc)?;
    let nan = if aval.dtype.is_complex() {
        Scalar::Complex(f64::NAN, f64::NAN)
    } else {
        Scalar::Float(f64::NAN)
    };
    let nan = e.constant(aval, nan, loc)?;
    Ok(e.op("stablehlo.select", &[ok, value, nan], &[aval], &[], loc)?[0])
}

/// Whether each matrix's LAPACK `info` (i32, of the batch shape) compares
/// `direction` (`EQ`, `GE`) with 0.
fn info_is<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    info: Value<'c, 'a>,
    info_aval: &Aval,
    direction: &str,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let zero = e.constant(info_aval, Scalar::Int(0), loc)?;
    ops::compare(e, info, zero, info_aval, direction, loc)
}

/// LU as JAX's `_lu_cpu_gpu_lowering`: `getrf`, its 1-based pivots made
/// 0-based, and NaN factors where LAPACK rejected its arguments
/// (`info < 0`).
fn lu<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    x_aval: &Aval,
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let batch_rank = x_aval.shape.len() - 2;
    let info_aval = Aval::new(DType::I32, &batch_shape(x_aval, 2, &[]));
    let outs = lapack_call(
        e,
        "getrf",
        x_aval.dtype,
        &[(x, x_aval, true)],
        &[
            (out_avals[0], true),
            (out_avals[1], false),
            (&info_aval, false),
        ],
        &[],
        loc,
    )?;
    let one = e.constant(out_avals[1], Scalar::Int(1), loc)?;
    let pivots = e.op(
        "stablehlo.subtract",
        &[outs[1], one],
        &[out_avals[1]],
        &[],
        loc,
    )?[0];
    let ok = info_is(e, outs[2], &info_aval, "GE", loc)?;
    let lu = nan_unless(e, ok, outs[0], out_avals[0], batch_rank, loc)?;
    Ok(vec![lu, pivots])
}

/// `stablehlo.slice` of `x` (of `aval`) to `[..., :rows, :cols]`.
fn leading_block<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    rows: i64,
    cols: i64,
    loc: Location<'c>,
) -> Result<(Value<'c, 'a>, Aval), LowerError> {
    let rank = aval.shape.len();
    let mut limits = aval.shape.to_vec();
    limits[rank - 2] = rows;
    limits[rank - 1] = cols;
    ops::slice(e, x, aval, &vec![0; rank], &limits, loc)
}

/// `x` (of `aval`) with zero columns appended up to `columns`, and its type.
fn pad_columns<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    columns: i64,
    loc: Location<'c>,
) -> Result<(Value<'c, 'a>, Aval), LowerError> {
    let rank = aval.shape.len();
    let mut shape = aval.shape.to_vec();
    let mut high = vec![0i64; rank];
    high[rank - 1] = columns - shape[rank - 1];
    shape[rank - 1] = columns;
    let padded = aval.with_shape(&shape);
    let zero = e.constant(&Aval::new(aval.dtype, &[]), zero_of(aval.dtype), loc)?;
    let value = e.op(
        "stablehlo.pad",
        &[x, zero],
        &[&padded],
        &[
            ("edge_padding_low", crate::attrs::i64_array(&vec![0; rank])),
            ("edge_padding_high", crate::attrs::i64_array(&high)),
            ("interior_padding", crate::attrs::i64_array(&vec![0; rank])),
        ],
        loc,
    )?[0];
    Ok((value, padded))
}

/// `x`'s upper triangle (zeros below the diagonal), as JAX's `_triu`.
fn upper_triangle<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let rank = aval.shape.len();
    let rows = ops::iota(e, &aval.shape, rank - 2, loc)?;
    let cols = ops::iota(e, &aval.shape, rank - 1, loc)?;
    let below = ops::compare(e, rows, cols, &aval.with_dtype(DType::I32), "GT", loc)?;
    let zero = e.constant(aval, zero_of(aval.dtype), loc)?;
    Ok(e.op("stablehlo.select", &[below, zero, x], &[aval], &[], loc)?[0])
}

/// QR as JAX's `_qr_lowering`: `geqrf` (LAPACK's or XLA's `Qr`), then Q from the reflectors
/// (`orgqr`/`ungqr`) of the leading square block (m < n), of the
/// reflectors padded to m columns (complete, m ≥ n) or of the reflectors
/// themselves (reduced, with R's leading n×n block); R is the upper
/// triangle.
fn qr<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    x_aval: &Aval,
    full_matrices: bool,
    out_avals: &[&Aval],
    kernels: Kernels,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let rank = x_aval.shape.len();
    let (m, n) = (x_aval.shape[rank - 2], x_aval.shape[rank - 1]);
    let taus_aval = Aval::new(x_aval.dtype, &batch_shape(x_aval, 2, &[m.min(n)]));
    let outs = match kernels {
        Kernels::Lapack => lapack_call(
            e,
            "geqrf",
            x_aval.dtype,
            &[(x, x_aval, true)],
            &[(x_aval, true), (&taus_aval, false)],
            &[],
            loc,
        )?,
        Kernels::Expanded => portable::geqrf(e, x, x_aval, &taus_aval, loc)?,
    };
    let (mut r, taus) = (outs[0], outs[1]);
    let mut r_aval = x_aval.clone();
    let reflectors = if m < n {
        leading_block(e, r, x_aval, m, m, loc)?
    } else if full_matrices {
        pad_columns(e, r, x_aval, m, loc)?
    } else {
        (r, x_aval.clone())
    };
    let q = match kernels {
        Kernels::Lapack => lapack_call(
            e,
            "orgqr",
            x_aval.dtype,
            &[
                (reflectors.0, &reflectors.1, true),
                (taus, &taus_aval, false),
            ],
            &[(out_avals[0], true)],
            &[],
            loc,
        )?[0],
        Kernels::Expanded => {
            portable::householder_product(e, (reflectors.0, taus), &taus_aval, out_avals[0], loc)?
        }
    };
    if m >= n && !full_matrices {
        (r, r_aval) = leading_block(e, r, x_aval, n, n, loc)?;
    }
    let r = upper_triangle(e, r, &r_aval, loc)?;
    Ok(vec![q, r])
}

/// Zero of `dtype` (a float or complex type).
fn zero_of(dtype: DType) -> Scalar {
    if dtype.is_complex() {
        Scalar::Complex(0.0, 0.0)
    } else {
        Scalar::Float(0.0)
    }
}

/// One of `dtype` (a float or complex type).
fn one_of(dtype: DType) -> Scalar {
    if dtype.is_complex() {
        Scalar::Complex(1.0, 0.0)
    } else {
        Scalar::Float(1.0)
    }
}

/// The symmetric (Hermitian) eigendecomposition as JAX's
/// `_eigh_cpu_gpu_lowering`: `syevd`/`heevd` with vectors, reading the
/// `lower` or upper triangle; eigenvalues ascending as LAPACK gives them;
/// NaNs where LAPACK did not converge (`info != 0`).
fn eigh<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    x_aval: &Aval,
    lower: bool,
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    // LAPACK's eigenvalues are ascending: sorting is already done.
    let batch_rank = x_aval.shape.len() - 2;
    let info_aval = Aval::new(DType::I32, &batch_shape(x_aval, 2, &[]));
    let outs = lapack_call(
        e,
        "syevd",
        x_aval.dtype,
        &[(x, x_aval, true)],
        &[
            (out_avals[0], true),
            (out_avals[1], false),
            (&info_aval, false),
        ],
        &[("mode", b'V'), ("uplo", if lower { b'L' } else { b'U' })],
        loc,
    )?;
    let ok = info_is(e, outs[2], &info_aval, "EQ", loc)?;
    let v = nan_unless(e, ok, outs[0], out_avals[0], batch_rank, loc)?;
    let w = nan_unless(e, ok, outs[1], out_avals[1], batch_rank, loc)?;
    Ok(vec![v, w])
}

/// The SVD as JAX's `_svd_cpu_gpu_lowering`: `gesdd` in mode `A`
/// (complete vectors), `S` (reduced) or `N` (values only); NaNs where it
/// did not converge.
#[allow(clippy::too_many_arguments)]
fn svd<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    x_aval: &Aval,
    full_matrices: bool,
    compute_uv: bool,
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let batch_rank = x_aval.shape.len() - 2;
    let info_aval = Aval::new(DType::I32, &batch_shape(x_aval, 2, &[]));
    // Without vectors LAPACK reads neither U nor Vᴴ: 1×1 stand-ins.
    let unused = Aval::new(x_aval.dtype, &batch_shape(x_aval, 2, &[1, 1]));
    let (u_aval, vt_aval, mode) = match (compute_uv, full_matrices) {
        (true, true) => (out_avals[1], out_avals[2], b'A'),
        (true, false) => (out_avals[1], out_avals[2], b'S'),
        (false, _) => (&unused, &unused, b'N'),
    };
    let outs = lapack_call(
        e,
        "gesdd",
        x_aval.dtype,
        &[(x, x_aval, true)],
        &[
            (x_aval, true),
            (out_avals[0], false),
            (u_aval, true),
            (vt_aval, true),
            (&info_aval, false),
        ],
        &[("mode", mode)],
        loc,
    )?;
    let ok = info_is(e, outs[4], &info_aval, "EQ", loc)?;
    let mut results = vec![nan_unless(e, ok, outs[1], out_avals[0], batch_rank, loc)?];
    if compute_uv {
        results.push(nan_unless(e, ok, outs[2], out_avals[1], batch_rank, loc)?);
        results.push(nan_unless(e, ok, outs[3], out_avals[2], batch_rank, loc)?);
    }
    Ok(results)
}

/// The general eigendecomposition as JAX's `_eig_cpu_lowering`: `geev`,
/// complex eigenvalues (from real and imaginary parts for a real matrix)
/// and the eigenvectors asked for; NaNs where it did not converge or the
/// matrix has a non-finite entry.
fn eig<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    x_aval: &Aval,
    left: bool,
    right: bool,
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let batch_rank = x_aval.shape.len() - 2;
    let n = x_aval.shape[batch_rank];
    let info_aval = Aval::new(DType::I32, &batch_shape(x_aval, 2, &[]));
    let w_aval = out_avals[0];
    let vectors = Aval::new(w_aval.dtype, &batch_shape(x_aval, 2, &[n, n]));
    let flag = |wanted: bool| if wanted { b'V' } else { b'N' };
    let config = [("compute_left", flag(left)), ("compute_right", flag(right))];
    let (w, vl, vr, info) = if x_aval.dtype.is_complex() {
        let outs = lapack_call(
            e,
            "geev",
            x_aval.dtype,
            &[(x, x_aval, true)],
            &[
                (w_aval, false),
                (&vectors, true),
                (&vectors, true),
                (&info_aval, false),
            ],
            &config,
            loc,
        )?;
        (outs[0], outs[1], outs[2], outs[3])
    } else {
        let part = Aval::new(x_aval.dtype, &batch_shape(x_aval, 2, &[n]));
        let outs = lapack_call(
            e,
            "geev",
            x_aval.dtype,
            &[(x, x_aval, true)],
            &[
                (&part, false),
                (&part, false),
                (&vectors, true),
                (&vectors, true),
                (&info_aval, false),
            ],
            &config,
            loc,
        )?;
        let w = e.op(
            "stablehlo.complex",
            &[outs[0], outs[1]],
            &[w_aval],
            &[],
            loc,
        )?[0];
        (w, outs[2], outs[3], outs[4])
    };
    let ok = info_is(e, info, &info_aval, "EQ", loc)?;
    let mut results = vec![nan_unless(e, ok, w, w_aval, batch_rank, loc)?];
    for (wanted, value) in [(left, vl), (right, vr)] {
        if wanted {
            results.push(nan_unless(e, ok, value, &vectors, batch_rank, loc)?);
        }
    }
    Ok(results)
}

/// Cholesky as JAX's `_cholesky_cpu_lowering`: `potrf` of the lower
/// triangle, NaNs where the matrix is not positive definite (`info != 0`).
fn cholesky_cpu<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    x_aval: &Aval,
    out: &Aval,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let batch_rank = x_aval.shape.len() - 2;
    let info_aval = Aval::new(DType::I32, &batch_shape(x_aval, 2, &[]));
    let outs = lapack_call(
        e,
        "potrf",
        x_aval.dtype,
        &[(x, x_aval, true)],
        &[(out, true), (&info_aval, false)],
        &[("uplo", b'L')],
        loc,
    )?;
    let ok = info_is(e, outs[1], &info_aval, "EQ", loc)?;
    Ok(vec![nan_unless(e, ok, outs[0], out, batch_rank, loc)?])
}

/// A triangular solve as JAX's `_triangular_solve_cpu_lower`: BLAS's
/// `trsm` (a conjugate without a transpose applied to `a` first).
fn triangular_solve_cpu<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    a: Value<'c, 'a>,
    b: Value<'c, 'a>,
    in_avals: &[&Aval],
    o: oxla_core::primitive::linalg::TriangularSolveOptions,
    out: &Aval,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let (mut a, mut conjugate_a) = (a, o.conjugate_a);
    if conjugate_a && !o.transpose_a {
        a = super::elementwise::conj(e, a, in_avals[0], loc)?;
        conjugate_a = false;
    }
    let trans = match (o.transpose_a, conjugate_a) {
        (false, _) => b'N',
        (true, false) => b'T',
        (true, true) => b'C',
    };
    lapack_call(
        e,
        "trsm",
        in_avals[0].dtype,
        &[(a, in_avals[0], true), (b, in_avals[1], true)],
        &[(out, true)],
        &[
            ("side", if o.left_side { b'L' } else { b'R' }),
            ("uplo", if o.lower { b'L' } else { b'U' }),
            ("trans_x", trans),
            ("diag", if o.unit_diagonal { b'U' } else { b'N' }),
        ],
        loc,
    )
}
