//! `lax.scatter_apply`: a unary function applied to the operand's
//! elements at scattered indices, once per index that reaches them.

use oxla_core::{DType, GatherMode, ScatterDimensionNumbers, ScatterOp};

use crate::array::Array;
use crate::lax;

/// `lax.scatter_apply(operand, scatter_indices, func, dimension_numbers,
/// update_shape, mode)`: `operand` with `func` applied to each element
/// that a scatter of updates of `update_shape` at `scatter_indices`
/// (with `dimension_numbers` and `mode`, as [`lax::scatter_with_mode`])
/// writes to. An element written by `n` updates (repeated indices) gets
/// `func` applied `n` times, as XLA's scatter applies its update
/// computation once per update. `func` is a function of one scalar of
/// `operand`'s dtype, returning one of the same dtype (it is mapped over
/// the elements, as JAX traces it on a scalar).
///
/// JAX builds this as a scatter whose update computation is `func`;
/// oxla counts the updates reaching each element with a `scatter_add`
/// and applies `func` that many times in a loop (one round for distinct
/// indices). Unlike JAX's, the result is differentiable (forward mode,
/// through the loop).
///
/// ```
/// use oxla::{Array, lax};
/// use oxla::lax::{GatherMode, ScatterDimensionNumbers};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 1.0, 1.0, 1.0], &[4])?;
/// let at = Array::from_slice(&[1i32, 3, 1], &[3, 1])?;  // element 1 twice
/// let numbers = ScatterDimensionNumbers {
///     update_window_dims: [].into_iter().collect(),
///     inserted_window_dims: [0].into_iter().collect(),
///     scatter_dims_to_operand_dims: [0].into_iter().collect(),
/// };
/// let doubled = lax::scatter_apply(&x, &at, |v| v * 2.0, numbers, &[3], GatherMode::Fill);
/// assert_eq!(doubled.to_vec::<f32>()?, vec![1.0, 4.0, 1.0, 2.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn scatter_apply(
    operand: &Array,
    scatter_indices: &Array,
    func: impl Fn(&Array) -> Array,
    dimension_numbers: ScatterDimensionNumbers,
    update_shape: &[i64],
    mode: GatherMode,
) -> Array {
    let location = crate::ops::current_location(std::panic::Location::caller());
    let aval = match operand.aval() {
        Ok(aval) => aval,
        Err(e) => return Array::error(e),
    };
    let zeros = lax::full(aval.shape.as_ref(), 0.0, DType::I32);
    let ones = lax::full(update_shape, 1.0, DType::I32);
    let counts = lax::scatter_with_mode(
        &zeros,
        scatter_indices,
        &ones,
        ScatterOp::Add,
        dimension_numbers,
        mode,
    );
    if let Err(e) = counts.aval() {
        return Array::error(e);
    }
    if aval.size() == 0 {
        return operand.clone();
    }
    // func on each element, as on a scalar.
    let elementwise = |x: &Array| -> crate::error::Result<Array> {
        let flat = lax::reshape(x, &[aval.size()]);
        let mapped = crate::vmap::vmap(|v: Array| func(&v)).call(flat)?;
        let mapped_aval = mapped.aval()?;
        if mapped_aval.dtype != aval.dtype || mapped_aval.rank() != 1 {
            return Err(crate::error::Error::InvalidArgument(format!(
                "{location}: lax.scatter_apply: func must return a scalar of the operand's \
                 dtype {}, got {} for each element",
                aval.dtype,
                mapped_aval.with_shape(&mapped_aval.shape[1..])
            )));
        }
        Ok(lax::reshape(&mapped, aval.shape.as_ref()))
    };
    let rounds = crate::numpy::max(&counts, None, false);
    let zero = Array::weak_scalar(0i32);
    lax::fori_loop_dynamic(
        &zero,
        &rounds,
        |round, x: Array| -> crate::error::Result<Array> {
            let due = lax::gt(&counts, &round);
            Ok(lax::select(&due, &elementwise(&x)?, &x))
        },
        operand.clone(),
    )
    .unwrap_or_else(Array::error)
}
