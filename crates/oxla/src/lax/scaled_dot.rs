//! `lax.scaled_dot`: a matrix product of block-scaled operands, each
//! operand multiplied by its scale repeated over blocks ("subchannels") of
//! its contracting dimensions, in bfloat16, as JAX's portable
//! implementation computes it (the one XLA runs where it has no native
//! block-scaled dot).

use oxla_core::DType;

use super::DotDimensionNumbers;
use super::conveniences::lax_usage;
use crate::array::Array;
use crate::lax;

/// `lax.scaled_dot(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers,
/// preferred_element_type)`: `(lhs * lhs_scale) · (rhs * rhs_scale)`
/// with JAX's `dot_general` `dimension_numbers`. A scale has its
/// operand's rank and sizes, except along contracting dimensions, where
/// the operand's size is a multiple (at least 2) of the scale's and each
/// scale entry covers one block of that many consecutive elements. A
/// missing scale is 1. Operands and scales are rounded to bfloat16 before
/// the product, which accumulates in `preferred_element_type` (bfloat16
/// by default, as JAX's), the result's dtype.
///
/// Without `dimension_numbers` the operands are batched matrices (rank
/// ≥ 2): the last dimension of `lhs` contracts with the second-to-last of
/// `rhs`, and the leading ones are batch dimensions.
///
/// ```
/// use oxla::{Array, DType, lax};
/// # fn main() -> oxla::Result<()> {
/// let lhs = Array::from_slice(&[1.0f32, 1.0, 1.0, 1.0], &[1, 4])?;
/// let rhs = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4, 1])?;
/// // One scale per block of 2 along k: 10 for the first, 1 for the second.
/// let lhs_scale = Array::from_slice(&[10.0f32, 1.0], &[1, 2])?;
/// let out = lax::scaled_dot(&lhs, &rhs, Some(&lhs_scale), None, None, Some(DType::F32));
/// assert_eq!(out.to_vec::<f32>()?, vec![10.0 * (1.0 + 2.0) + (3.0 + 4.0)]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn scaled_dot(
    lhs: &Array,
    rhs: &Array,
    lhs_scale: Option<&Array>,
    rhs_scale: Option<&Array>,
    dimension_numbers: Option<DotDimensionNumbers<'_>>,
    preferred_element_type: Option<DType>,
) -> Array {
    let scales = (lhs_scale, rhs_scale);
    match block_scaled_dot(lhs, rhs, scales, dimension_numbers, preferred_element_type) {
        Ok(out) => out,
        Err(message) => lax_usage("scaled_dot", message),
    }
}

/// [`scaled_dot`] after checking its arguments.
fn block_scaled_dot(
    lhs: &Array,
    rhs: &Array,
    (lhs_scale, rhs_scale): (Option<&Array>, Option<&Array>),
    dimension_numbers: Option<DotDimensionNumbers<'_>>,
    preferred_element_type: Option<DType>,
) -> Result<Array, String> {
    let (l_shape, r_shape) = (lhs.shape_or_empty(), rhs.shape_or_empty());
    let rank = l_shape.len();
    let leading: Vec<i64> = (0..rank.saturating_sub(2) as i64).collect();
    let (l_last, r_second_last) = ([rank as i64 - 1], [rank as i64 - 2]);
    let dimension_numbers = match dimension_numbers {
        Some(dims) => dims,
        None if rank < 2 => {
            return Err(format!(
                "does not support rank-0 and rank-1 operands without dimension numbers, got lhs \
                 of shape {l_shape:?}"
            ));
        }
        None => (
            (&l_last[..], &r_second_last[..]),
            (&leading[..], &leading[..]),
        ),
    };
    let ((lc, rc), _) = dimension_numbers;
    let scale_shapes = [lhs_scale, rhs_scale].map(|s| s.map(Array::shape_or_empty));
    let ranks = [
        Some(l_shape),
        Some(r_shape),
        scale_shapes[0],
        scale_shapes[1],
    ];
    if ranks.iter().flatten().any(|s| s.len() != rank) {
        return Err(format!(
            "all input tensors must have the same rank, got lhs {l_shape:?}, rhs {r_shape:?}, \
             lhs_scale {:?} and rhs_scale {:?}",
            scale_shapes[0], scale_shapes[1]
        ));
    }
    if let Some(message) = super::ragged::dot_dimension_problem(l_shape, r_shape, dimension_numbers)
    {
        return Err(message);
    }
    for (side, operand, scale, contracting) in
        [("lhs", lhs, lhs_scale, lc), ("rhs", rhs, rhs_scale, rc)]
    {
        if let Some(scale) = scale {
            scale_problem(
                side,
                scale.shape_or_empty(),
                operand.shape_or_empty(),
                contracting,
            )?;
        }
    }
    // One program, as JAX's composite `xla.scaled_dot`: eagerly too, the
    // bf16 products are rounded as the compiled whole rounds them.
    let ((lc, rc), (lb, rb)) = dimension_numbers;
    let (lc, rc, lb, rb) = (lc.to_vec(), rc.to_vec(), lb.to_vec(), rb.to_vec());
    let product = move |(l, r, ls, rs): (Array, Array, Option<Array>, Option<Array>)| {
        let scaled = |operand: &Array, scale: Option<&Array>, contracting: &[i64]| {
            let operand = lax::convert_element_type(operand, DType::BF16);
            match scale {
                None => operand,
                Some(scale) => {
                    let scale = blocks_of(scale, operand.shape_or_empty(), contracting);
                    lax::mul(&operand, &lax::convert_element_type(&scale, DType::BF16))
                }
            }
        };
        lax::dot_general(
            &scaled(&l, ls.as_ref(), &lc),
            &scaled(&r, rs.as_ref(), &rc),
            ((&lc, &rc), (&lb, &rb)),
            Some(preferred_element_type.unwrap_or(DType::BF16)),
        )
    };
    let operands = (
        lhs.clone(),
        rhs.clone(),
        lhs_scale.cloned(),
        rhs_scale.cloned(),
    );
    Ok(lax::composite(product, "xla.scaled_dot", 0)
        .call(operands)
        .unwrap_or_else(Array::error))
}

/// What is wrong with a scale of `scale_shape` for an operand of
/// `operand_shape` contracting over `contracting`, if anything.
fn scale_problem(
    side: &str,
    scale_shape: &[i64],
    operand_shape: &[i64],
    contracting: &[i64],
) -> Result<(), String> {
    for (i, (&size, &scale_size)) in operand_shape.iter().zip(scale_shape).enumerate() {
        let i = i as i64;
        if !contracting.contains(&i) {
            if scale_size != size {
                return Err(format!(
                    "{side} dimension {i} of size {size} does not match its scale's size \
                     {scale_size}"
                ));
            }
        } else if scale_size == 0 || size % scale_size != 0 || size / scale_size < 2 {
            return Err(format!(
                "{side} contracting dimension {i} of size {size} must be a multiple, at least \
                 twice, of its scale's size {scale_size}"
            ));
        }
    }
    Ok(())
}

/// `scale` repeated over the blocks of `operand_shape`'s `contracting`
/// dimensions (JAX's `_scale_broadcast`: each entry `block` times in a
/// row); [`scale_problem`] has checked that it fits.
fn blocks_of(scale: &Array, operand_shape: &[i64], contracting: &[i64]) -> Array {
    contracting.iter().fold(scale.clone(), |scale, &d| {
        let block = operand_shape[d as usize] / scale.shape_or_empty()[d as usize];
        crate::numpy::repeat(&scale, block, Some(d))
    })
}
