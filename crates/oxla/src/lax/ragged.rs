//! `lax.ragged_dot_general` and `lax.ragged_dot`: grouped matrix products
//! where one dimension of `lhs` is split into consecutive groups of
//! runtime sizes. Computed densely as JAX's lowering away from TPUs: each
//! ragged operand is expanded to one masked copy per group, then one
//! `dot_general` (so every transformation rule is the dense ops').

use oxla_core::{DType, Precision};

use super::DotDimensionNumbers;
use super::conveniences::lax_usage;
use crate::array::Array;
use crate::lax;

/// `lax.RaggedDotDimensionNumbers`: the dot's dimension numbers, the one
/// ragged dimension of `lhs`, and the group dimension of `rhs` (one when
/// the ragged dimension is a free dimension of `lhs`, none otherwise).
#[derive(Debug, Clone, Copy)]
pub struct RaggedDotDimensionNumbers<'a> {
    /// ((lhs contracting, rhs contracting), (lhs batch, rhs batch)).
    pub dot_dimension_numbers: DotDimensionNumbers<'a>,
    /// The ragged dimension of `lhs` (exactly one).
    pub lhs_ragged_dimensions: &'a [i64],
    /// The group dimension of `rhs` (one in the free-dimension mode).
    pub rhs_group_dimensions: &'a [i64],
}

/// Which kind of `lhs` dimension is ragged (JAX's `RaggedDotMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A free dimension: `[b,m,k] · [g,b,k,n] -> [b,m,n]`, each row by
    /// its group's matrix.
    NonContracting,
    /// A contracting dimension: `[b,m,k] · [b,k,n] -> [g,b,m,n]`, one
    /// product per group of `k`.
    Contracting,
    /// A batch dimension: `[b,m,k] · [b,k,n] -> [b,m,n]`, the plain
    /// batched product.
    Batch,
}

/// `lax.ragged_dot_general(lhs, rhs, group_sizes, dimension_numbers,
/// precision, preferred_element_type)`: a `dot_general` in which the
/// `lhs` dimension `lhs_ragged_dimensions[0]` falls in consecutive groups
/// of `group_sizes` (integers; the last dimension is the group count `g`).
/// In JAX's three modes:
///
/// 1. ragged free dimension `m`: `[b…,m…,k…] · [g,b…,k…,n…] -> [b…,m…,n…]`,
///    each slice of `m` multiplied by its group's slice of `rhs`'s group
///    dimension; slices past the groups are zero;
/// 2. ragged contracting dimension `k`: `[b…,m…,k…] · [b…,k…,n…] ->
///    [g,b…,m…,n…]`, one product per group over its part of `k`;
/// 3. ragged batch dimension: the plain `dot_general`.
///
/// `group_sizes` is `[g]`, or `[b…, x…, g]` with `x…` the dimensions of
/// the same kind before the ragged one (then each batch has its groups).
/// JAX's `group_offset` is not implemented by JAX outside TPUs either.
///
/// ```
/// use oxla::{Array, lax};
/// use oxla::lax::RaggedDotDimensionNumbers;
/// # fn main() -> oxla::Result<()> {
/// // Mode 2: the 4 columns of lhs and rows of rhs in groups of 1 and 3.
/// let lhs = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[1, 4])?;
/// let rhs = Array::from_slice(&[1.0f32, 1.0, 1.0, 1.0], &[4, 1])?;
/// let sizes = Array::from_slice(&[1i32, 3], &[2])?;
/// let dims = RaggedDotDimensionNumbers {
///     dot_dimension_numbers: ((&[1], &[0]), (&[], &[])),
///     lhs_ragged_dimensions: &[1],
///     rhs_group_dimensions: &[],
/// };
/// let out = lax::ragged_dot_general(&lhs, &rhs, &sizes, dims, None, None);
/// assert_eq!(out.shape(), &[2, 1, 1]);
/// assert_eq!(out.to_vec::<f32>()?, vec![1.0, 9.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn ragged_dot_general(
    lhs: &Array,
    rhs: &Array,
    group_sizes: &Array,
    dimension_numbers: RaggedDotDimensionNumbers<'_>,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
) -> Array {
    let options = (precision, preferred_element_type);
    match dense_ragged_dot(lhs, rhs, group_sizes, dimension_numbers, options) {
        Ok(out) => out,
        Err(Problem::Usage(message)) => lax_usage("ragged_dot_general", message),
        Err(Problem::Operand(error)) => Array::error(error),
    }
}

/// Why [`ragged_dot_general`] cannot compute: a usage error, or an
/// operand that is an error already.
enum Problem {
    Usage(String),
    Operand(crate::error::Error),
}

/// A usage problem.
fn problem(message: String) -> Problem {
    Problem::Usage(message)
}

/// [`ragged_dot_general`] after checking its arguments.
fn dense_ragged_dot(
    lhs: &Array,
    rhs: &Array,
    group_sizes: &Array,
    dimension_numbers: RaggedDotDimensionNumbers<'_>,
    (precision, preferred_element_type): (Option<Precision>, Option<DType>),
) -> Result<Array, Problem> {
    let l_shape = lhs.aval().map_err(Problem::Operand)?.shape.to_vec();
    let r_shape = rhs.aval().map_err(Problem::Operand)?.shape.to_vec();
    let sizes_aval = group_sizes.aval().map_err(Problem::Operand)?;
    let (l_rank, r_rank) = (l_shape.len() as i64, r_shape.len() as i64);
    let dot_dims = dimension_numbers.dot_dimension_numbers;
    let ((lc, rc), (lb, rb)) = dot_dims;
    dot_dimension_problem(&l_shape, &r_shape, dot_dims).map_or(Ok(()), |m| Err(problem(m)))?;
    let &[ragged] = dimension_numbers.lhs_ragged_dimensions else {
        return Err(problem(format!(
            "expects exactly one lhs ragged dimension, got {:?}",
            dimension_numbers.lhs_ragged_dimensions
        )));
    };
    if !(0..l_rank).contains(&ragged) {
        return Err(problem(format!(
            "the lhs ragged dimension {ragged} is out of range for lhs of shape {l_shape:?}"
        )));
    }
    let mode = if lc.contains(&ragged) {
        Mode::Contracting
    } else if lb.contains(&ragged) {
        Mode::Batch
    } else {
        Mode::NonContracting
    };
    let gs_shape = sizes_aval.shape.to_vec();
    let Some(&num_groups) = gs_shape.last() else {
        return Err(problem(
            "expected rank of group_sizes to be >= 1, got a scalar".into(),
        ));
    };
    if !sizes_aval.dtype.is_int() {
        return Err(problem(format!(
            "group_sizes must have an integer dtype, got {}",
            sizes_aval.dtype
        )));
    }
    let l_prefix = prefix_dims(mode, l_rank, ragged, lb, lc);
    let mut expected_gs: Vec<i64> = l_prefix.iter().map(|&d| l_shape[d as usize]).collect();
    expected_gs.push(num_groups);
    let group_sizes = match gs_shape.len() {
        1 => lax::broadcast(group_sizes, &expected_gs[..expected_gs.len() - 1]),
        _ if gs_shape == expected_gs => group_sizes.clone(),
        _ => {
            return Err(problem(format!(
                "expected group_sizes to have shape {expected_gs:?}, got {gs_shape:?}"
            )));
        }
    };
    let group_dims = dimension_numbers.rhs_group_dimensions;
    let dot = |x: &Array, y: &Array, dims: DotDimensionNumbers<'_>| {
        Ok(lax::dot_general_with_precision(
            x,
            y,
            dims,
            preferred_element_type,
            precision,
        ))
    };
    let incr = |dims: &[i64]| dims.iter().map(|d| d + 1).collect::<Vec<_>>();
    match mode {
        Mode::NonContracting => {
            let &[group] = group_dims else {
                return Err(problem(format!(
                    "needs exactly one rhs group dimension when the lhs ragged dimension is a \
                     free one, got {group_dims:?}"
                )));
            };
            if !(0..r_rank).contains(&group) || rb.contains(&group) || rc.contains(&group) {
                return Err(problem(format!(
                    "the rhs group dimension {group} must be a dimension of rhs (shape \
                     {r_shape:?}) that is neither contracting nor batch"
                )));
            }
            if r_shape[group as usize] != num_groups {
                return Err(problem(format!(
                    "expected rhs group dimension size to be {num_groups}, got {}",
                    r_shape[group as usize]
                )));
            }
            let mut l_contract = incr(lc);
            l_contract.push(0);
            let mut r_contract = rc.to_vec();
            r_contract.push(group);
            let l_batch = incr(lb);
            dot(
                &expand(lhs, ragged, &group_sizes, &l_prefix),
                rhs,
                ((&l_contract, &r_contract), (&l_batch, rb)),
            )
        }
        Mode::Contracting | Mode::Batch if !group_dims.is_empty() => Err(problem(format!(
            "takes no rhs group dimensions when the lhs ragged dimension is a contracting or \
             batch one, got {group_dims:?}"
        ))),
        Mode::Contracting => {
            // The contracting dimension of rhs paired with the ragged one.
            let r_ragged = lc
                .iter()
                .zip(rc)
                .find_map(|(&l, &r)| (l == ragged).then_some(r))
                .unwrap_or(ragged);
            let r_prefix = prefix_dims(mode, r_rank, r_ragged, rb, rc);
            let (l_contract, r_contract) = (incr(lc), incr(rc));
            let mut l_batch = vec![0];
            l_batch.extend(incr(lb));
            let mut r_batch = vec![0];
            r_batch.extend(incr(rb));
            dot(
                &expand(lhs, ragged, &group_sizes, &l_prefix),
                &expand(rhs, r_ragged, &group_sizes, &r_prefix),
                ((&l_contract, &r_contract), (&l_batch, &r_batch)),
            )
        }
        Mode::Batch => dot(lhs, rhs, dot_dims),
    }
}

/// What is wrong with `dot_general` dimension numbers for operands of
/// these shapes, as `dot_general`'s own shape rule finds it (pairs of
/// contracting and batch dimensions, in range, distinct, of equal sizes),
/// or `None`.
pub(super) fn dot_dimension_problem(
    l_shape: &[i64],
    r_shape: &[i64],
    dimension_numbers: DotDimensionNumbers<'_>,
) -> Option<String> {
    let ((lc, rc), (lb, rb)) = dimension_numbers;
    let dot = oxla_core::Primitive::Contract(oxla_core::primitive::contract::Op::DotGeneral {
        lhs_contracting: lc.iter().copied().collect(),
        rhs_contracting: rc.iter().copied().collect(),
        lhs_batch: lb.iter().copied().collect(),
        rhs_batch: rb.iter().copied().collect(),
        preferred_element_type: None,
        precision: None,
        out_sharding: None,
    });
    // Shapes only: both operands of one dtype.
    let (l, r) = (
        oxla_core::Aval::new(DType::F32, l_shape),
        oxla_core::Aval::new(DType::F32, r_shape),
    );
    oxla_core::shape_rules::abstract_eval(&dot, &[&l, &r])
        .err()
        .map(|e| {
            format!(
                "dimension numbers {dimension_numbers:?} do not fit lhs {l_shape:?} and rhs \
                 {r_shape:?}: {e}"
            )
        })
}

/// `lax.ragged_dot(lhs, rhs, group_sizes, precision,
/// preferred_element_type)`: the grouped matrix product of mixture-of-
/// experts layers: the rows of `lhs` (m×k) fall in consecutive groups of
/// `group_sizes` (integers, g of them) and group `i`'s rows are
/// multiplied by `rhs[i]` (g×k×n); rows past the groups are zero.
/// [`ragged_dot_general`]'s first mode.
#[track_caller]
pub fn ragged_dot(
    lhs: &Array,
    rhs: &Array,
    group_sizes: &Array,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
) -> Array {
    let (l, r, g) = (
        lhs.shape_or_empty(),
        rhs.shape_or_empty(),
        group_sizes.shape_or_empty(),
    );
    if l.len() != 2 || r.len() != 3 || g.len() != 1 || l[1] != r[1] || g[0] != r[0] {
        return lax_usage(
            "ragged_dot",
            format!(
                "takes lhs m×k, rhs g×k×n and g group sizes, got shapes {l:?}, {r:?} and {g:?}"
            ),
        );
    }
    let dims = RaggedDotDimensionNumbers {
        dot_dimension_numbers: ((&[1], &[1]), (&[], &[])),
        lhs_ragged_dimensions: &[0],
        rhs_group_dimensions: &[0],
    };
    ragged_dot_general(
        lhs,
        rhs,
        group_sizes,
        dims,
        precision,
        preferred_element_type,
    )
}

/// The dimensions of an operand that `group_sizes`' leading dimensions
/// stand for: the batch dimensions, then those of the ragged one's kind
/// before it (JAX's `_ragged_dot_prefix_dims`).
fn prefix_dims(mode: Mode, rank: i64, ragged: i64, batch: &[i64], contract: &[i64]) -> Vec<i64> {
    let before =
        |dims: &[i64]| -> Vec<i64> { dims.iter().copied().take_while(|&d| d != ragged).collect() };
    match mode {
        Mode::NonContracting => {
            let free: Vec<i64> = (0..rank)
                .filter(|d| !batch.contains(d) && !contract.contains(d))
                .collect();
            batch.iter().copied().chain(before(&free)).collect()
        }
        Mode::Contracting => batch.iter().copied().chain(before(contract)).collect(),
        Mode::Batch => before(batch),
    }
}

/// `x` with a new leading group dimension: copy `i` keeps the slices of
/// dimension `dim` in group `i` and zeroes the rest. `group_sizes` is
/// `[x.shape[axes]…, g]`.
#[track_caller]
fn expand(x: &Array, dim: i64, group_sizes: &Array, axes: &[i64]) -> Array {
    let x_shape = x.shape_or_empty();
    let num_groups = *group_sizes.shape_or_empty().last().unwrap_or(&0);
    let mut shape = vec![num_groups];
    shape.extend_from_slice(x_shape);
    let rank = x_shape.len() as i64;
    let copies = lax::broadcast_in_dim(x, &shape, &(1..=rank).collect::<Vec<_>>());
    let dtype = group_sizes.dtype_or_bool();
    let position = lax::broadcasted_iota(dtype, &shape, dim as usize + 1);
    let last = group_sizes.ndim_or_zero() - 1;
    let ends = lax::cumsum(group_sizes, last, false);
    let starts = lax::sub(&ends, group_sizes);
    // group_sizes' dimensions [axes…, g] land at [axes + 1…, 0]; sorted,
    // so broadcast_in_dim takes them in order.
    let mut targets: Vec<(i64, i64)> = axes
        .iter()
        .enumerate()
        .map(|(i, &a)| (a + 1, i as i64))
        .collect();
    targets.push((0, last as i64));
    targets.sort_unstable();
    let permutation: Vec<i64> = targets.iter().map(|&(_, source)| source).collect();
    let dimensions: Vec<i64> = targets.iter().map(|&(target, _)| target).collect();
    let spread =
        |v: &Array| lax::broadcast_in_dim(&lax::transpose(v, &permutation), &shape, &dimensions);
    let in_group = lax::and(
        &lax::le(&spread(&starts), &position),
        &lax::lt(&position, &spread(&ends)),
    );
    let zeros = lax::full_like(&copies, 0.0, None);
    lax::select(&in_group, &copies, &zeros)
}
