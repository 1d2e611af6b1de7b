//! Indexing with numpy's rules: `x.index(&s![1, .., 2..5;2])`, and
//! functional updates `x.at(&s![..]).set(v)` (`.add`, `.mul`, `.min`,
//! `.max`, `.apply`), with JAX's out-of-bounds rules (reads clamp, updates
//! drop, for static and array indices alike), concrete boolean masks and
//! numpy's advanced indexing with several integer arrays.

mod advanced;

use oxla_core::{
    DType, Dims, GatherDimensionNumbers, GatherMode, Scalar, ScatterDimensionNumbers, ScatterOp,
};

use crate::array::Array;
use crate::error::Error;
use crate::lax;

/// One entry of an index expression.
#[derive(Debug, Clone)]
pub enum IndexItem {
    /// A single position (negative counts from the end); the dim goes away.
    Int(i64),
    /// `start..stop` with a step (ends as in Python, negative from the end).
    Slice {
        /// First position (default: 0, or the end for negative steps).
        start: Option<i64>,
        /// One past the last (default: the end, or before 0 for negative steps).
        stop: Option<i64>,
        /// Step (not 0).
        step: i64,
    },
    /// A new dimension of size 1.
    NewAxis,
    /// An integer array of positions along this dim.
    Array(Array),
}

/// A Python slice `start:stop:step` (for ranges Rust cannot write, such as
/// `3:0:-2`: `slice(Some(3), Some(0), -2)`).
pub fn slice(start: Option<i64>, stop: Option<i64>, step: i64) -> IndexItem {
    IndexItem::Slice { start, stop, step }
}

/// `NewAxis` in `s![..]`.
pub const NEW_AXIS: IndexItem = IndexItem::NewAxis;

impl IndexItem {
    /// A range with a step (`s![0..6;2]`).
    pub fn stepped(range: impl Into<IndexItem>, step: i64) -> IndexItem {
        match range.into() {
            IndexItem::Slice { start, stop, .. } => IndexItem::Slice { start, stop, step },
            other => other,
        }
    }
}

impl From<i64> for IndexItem {
    fn from(i: i64) -> Self {
        IndexItem::Int(i)
    }
}

impl From<i32> for IndexItem {
    fn from(i: i32) -> Self {
        IndexItem::Int(i64::from(i))
    }
}

impl From<std::ops::RangeFull> for IndexItem {
    fn from(_: std::ops::RangeFull) -> Self {
        IndexItem::Slice {
            start: None,
            stop: None,
            step: 1,
        }
    }
}

impl From<std::ops::Range<i64>> for IndexItem {
    fn from(r: std::ops::Range<i64>) -> Self {
        IndexItem::Slice {
            start: Some(r.start),
            stop: Some(r.end),
            step: 1,
        }
    }
}

impl From<std::ops::Range<i32>> for IndexItem {
    fn from(r: std::ops::Range<i32>) -> Self {
        IndexItem::Slice {
            start: Some(i64::from(r.start)),
            stop: Some(i64::from(r.end)),
            step: 1,
        }
    }
}

impl From<std::ops::RangeFrom<i32>> for IndexItem {
    fn from(r: std::ops::RangeFrom<i32>) -> Self {
        IndexItem::Slice {
            start: Some(i64::from(r.start)),
            stop: None,
            step: 1,
        }
    }
}

impl From<std::ops::RangeTo<i32>> for IndexItem {
    fn from(r: std::ops::RangeTo<i32>) -> Self {
        IndexItem::Slice {
            start: None,
            stop: Some(i64::from(r.end)),
            step: 1,
        }
    }
}

impl From<Array> for IndexItem {
    fn from(a: Array) -> Self {
        IndexItem::Array(a)
    }
}

impl From<&Array> for IndexItem {
    fn from(a: &Array) -> Self {
        IndexItem::Array(a.clone())
    }
}

/// An index expression: `s![1, .., 2..5;2, NEW_AXIS, idx_array]`.
#[macro_export]
macro_rules! s {
    (@item $r:expr ; $step:expr) => { $crate::index::IndexItem::stepped($r, $step) };
    (@item $r:expr) => { $crate::index::IndexItem::from($r) };
    ($($r:expr $(; $step:expr)?),* $(,)?) => { [$( $crate::s!(@item $r $(; $step)?) ),*] };
}

/// A normalized basic index: per operand dim, (start, step, count) and
/// whether the dim is kept; plus where new axes go in the result.
struct Basic {
    boxes: Vec<(i64, i64, i64)>,
    kept: Vec<bool>,
    result_shape: Vec<i64>,
}

/// Resolves Python slice semantics for a dim of size `n`.
fn resolve(start: Option<i64>, stop: Option<i64>, step: i64, n: i64) -> (i64, i64) {
    let norm = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v + n } else { v };
        v.clamp(lo, hi)
    };
    let (start, stop) = if step > 0 {
        (
            start.map_or(0, |s| norm(s, 0, n)),
            stop.map_or(n, |s| norm(s, 0, n)),
        )
    } else {
        (
            start.map_or(n - 1, |s| norm(s, -1, n - 1)),
            stop.map_or(-1, |s| if s < -n { -1 } else { norm(s, -1, n - 1) }),
        )
    };
    let count = if step > 0 {
        ((stop - start + step - 1) / step).max(0)
    } else {
        ((start - stop + (-step) - 1) / (-step)).max(0)
    };
    (start, count)
}

/// What a static integer index past a dim's end means, as in JAX: reads
/// clamp it into the dim (`x[10]` of three elements is the last), updates
/// drop it (`x.at[10].set(v)` changes nothing).
#[derive(Debug, Clone, Copy, PartialEq)]
enum OutOfBounds {
    Clamp,
    Drop,
}

/// How many operand dims `items` index (every entry but `NewAxis`), if
/// the operand of `shape` has that many.
fn consumed_dims(shape: &[i64], items: &[IndexItem]) -> Result<usize, String> {
    let consumed = items
        .iter()
        .filter(|i| !matches!(i, IndexItem::NewAxis))
        .count();
    if consumed > shape.len() {
        return Err(format!(
            "too many indices ({consumed}) for an array of rank {}",
            shape.len()
        ));
    }
    Ok(consumed)
}

fn basic(shape: &[i64], items: &[IndexItem], out_of_bounds: OutOfBounds) -> Result<Basic, String> {
    consumed_dims(shape, items)?;
    let mut boxes = Vec::new();
    let mut kept = Vec::new();
    let mut result_shape = Vec::new();
    let mut dim = 0;
    for item in items {
        match item {
            IndexItem::NewAxis => result_shape.push(1),
            IndexItem::Int(i) => {
                let n = shape[dim];
                let j = if *i < 0 { i + n } else { *i };
                let j = match out_of_bounds {
                    OutOfBounds::Clamp if n == 0 => {
                        return Err(format!(
                            "index {i} into dimension {dim} of size 0: there is no element to read"
                        ));
                    }
                    OutOfBounds::Clamp => j.clamp(0, n - 1),
                    OutOfBounds::Drop => j,
                };
                boxes.push((j, 1, 1));
                kept.push(false);
                dim += 1;
            }
            IndexItem::Slice { start, stop, step } => {
                if *step == 0 {
                    return Err("slice step cannot be zero".into());
                }
                let (s, count) = resolve(*start, *stop, *step, shape[dim]);
                boxes.push((s, *step, count));
                kept.push(true);
                result_shape.push(count);
                dim += 1;
            }
            IndexItem::Array(_) => {
                return Err("integer-array indices are handled separately".into());
            }
        }
    }
    for &n in &shape[dim..] {
        boxes.push((0, 1, n));
        kept.push(true);
        result_shape.push(n);
    }
    Ok(Basic {
        boxes,
        kept,
        result_shape,
    })
}

/// The single array index of `items` and its dim, when the others are full slices.
fn array_index(items: &[IndexItem], rank: usize) -> Option<Result<(usize, Array), String>> {
    let position = items
        .iter()
        .position(|i| matches!(i, IndexItem::Array(_)))?;
    let others_full = items.iter().enumerate().all(|(k, i)| {
        k == position
            || matches!(
                i,
                IndexItem::Slice {
                    start: None,
                    stop: None,
                    step: 1
                }
            )
    });
    if !others_full || items.len() > rank {
        return Some(Err(
            "an integer-array index must be the only non-`..` entry of the index".into(),
        ));
    }
    match &items[position] {
        IndexItem::Array(a) => Some(Ok((position, a.clone()))),
        _ => None,
    }
}

/// Gather with an index vector of one component along `axis` (numpy's
/// `x[..., idx, ...]` / `take`): result dims x[:axis] + idx + x[axis+1:].
#[track_caller]
pub(crate) fn take_along(
    x: &Array,
    idx: &Array,
    axis: usize,
    mode: GatherMode,
    fill: Scalar,
) -> Array {
    let rank = x.ndim_or_zero();
    let index_rank = idx.ndim_or_zero();
    let indices = lax::expand_dims(idx, &[index_rank as i64]);
    let offset_dims: Dims = (0..axis as i64)
        .chain((axis + index_rank) as i64..(rank + index_rank - 1) as i64)
        .collect();
    let mut slice_sizes = x.shape_or_empty().to_vec();
    if let Some(s) = slice_sizes.get_mut(axis) {
        *s = 1;
    }
    lax::gather(
        x,
        &indices,
        GatherDimensionNumbers {
            offset_dims,
            collapsed_slice_dims: [axis as i64].into_iter().collect(),
            start_index_map: [axis as i64].into_iter().collect(),
        },
        &slice_sizes,
        mode,
        fill,
    )
}

/// What an out-of-bounds read gives with `GatherMode::Fill` when no fill
/// value is named, as JAX: NaN for floats, the lowest signed or highest
/// unsigned integer, true.
pub(crate) fn default_fill(dtype: DType) -> Scalar {
    match dtype {
        d if d.is_float() => Scalar::Float(f64::NAN),
        d if d == DType::Bool || d.is_unsigned_int() => Scalar::highest(d),
        d => Scalar::lowest(d),
    }
}

fn usage(function: &'static str, message: String, location: oxla_core::Location) -> Error {
    Error::Usage {
        function,
        message,
        location,
    }
}

/// An index whose boolean mask became integer positions: the array with
/// the mask's dims merged into one, and the index over it.
struct Masked {
    merged: Array,
    items: Vec<IndexItem>,
}

/// Replaces the boolean array among `items` (if any) by the positions where
/// it is true, over `x` with the mask's dims merged into one, as numpy's
/// `x[mask]` is `x[mask.nonzero()]`. The mask must match the dims it
/// covers and be concrete.
fn expand_mask(
    function: &'static str,
    x: &Array,
    items: &[IndexItem],
    location: oxla_core::Location,
) -> crate::error::Result<Option<Masked>> {
    let Some(position) = items
        .iter()
        .position(|i| matches!(i, IndexItem::Array(a) if a.dtype_or_bool() == DType::Bool))
    else {
        return Ok(None);
    };
    let IndexItem::Array(mask) = &items[position] else {
        return Ok(None);
    };
    let fail = |message: String| usage(function, message, location);
    let first = items[..position]
        .iter()
        .filter(|i| !matches!(i, IndexItem::NewAxis))
        .count();
    let (shape, covered) = (x.shape_or_empty(), mask.shape_or_empty());
    let end = first + covered.len();
    if covered.is_empty() || end > shape.len() || shape[first..end] != *covered {
        return Err(fail(format!(
            "the boolean index {} does not match dims {first}.. of {}",
            mask.aval()?,
            x.aval()?
        )));
    }
    if mask.is_traced() {
        return Err(fail(format!(
            "a boolean index needs concrete values, and this {} is traced (under jit, vmap or \
             grad); select with `where_`, or index with a fixed number of positions (JAX's \
             NonConcreteBooleanIndexError)",
            mask.aval()?
        )));
    }
    let positions: Vec<i32> = mask
        .to_vec::<bool>()?
        .iter()
        .enumerate()
        .filter(|(_, keep)| **keep)
        .map(|(i, _)| i as i32)
        .collect();
    let count = positions.len() as i64;
    let mut merged_shape = shape[..first].to_vec();
    merged_shape.push(covered.iter().product());
    merged_shape.extend_from_slice(&shape[end..]);
    let mut rest = items.to_vec();
    rest[position] = IndexItem::Array(Array::from_slice(&positions, &[count])?);
    Ok(Some(Masked {
        merged: lax::reshape(x, &merged_shape),
        items: rest,
    }))
}

impl Array {
    /// `x[index]` with numpy's rules: ints drop a dim, slices keep it,
    /// `NEW_AXIS` adds one; integer arrays gather, clamping out-of-bounds
    /// positions as JAX does. Several integer arrays (and ints beside them)
    /// broadcast together, their shape replacing their dims where the
    /// first stood if they are adjacent, else in front (numpy's advanced
    /// indexing: `x[rows, cols]` picks `x[rows[k], cols[k]]`).
    ///
    /// A static integer past a dim's end is clamped into it, as JAX's reads
    /// are (`x[10]` of three elements is the last). A boolean array selects
    /// the positions where it is true, as numpy's masks do; its values must
    /// be concrete (under `jit` it is an error: use `where_`, or a fixed
    /// number of positions).
    #[track_caller]
    pub fn index(&self, items: &[IndexItem]) -> Array {
        let location = oxla_core::Location::from_caller(std::panic::Location::caller());
        match expand_mask("index", self, items, location) {
            Ok(Some(masked)) => return masked.merged.index(&masked.items),
            Ok(None) => {}
            Err(e) => return Array::error(e),
        }
        if advanced::needs_grid(items) {
            return match advanced::grid(self.shape_or_empty(), items, false) {
                Ok(grid) => {
                    advanced::gather(self, &grid, GatherMode::PromiseInBounds, Scalar::Int(0))
                }
                Err(message) => Array::error(usage("index", message, location)),
            };
        }
        if let Some(found) = array_index(items, self.ndim_or_zero()) {
            return match found {
                Ok((axis, idx)) => {
                    let n = self.shape_or_empty().get(axis).copied().unwrap_or(0);
                    take_along(
                        self,
                        &lax::wrap_negative(&idx, n),
                        axis,
                        GatherMode::PromiseInBounds,
                        Scalar::Int(0),
                    )
                }
                Err(message) => Array::error(usage("index", message, location)),
            };
        }
        let b = match basic(self.shape_or_empty(), items, OutOfBounds::Clamp) {
            Ok(b) => b,
            Err(message) => return Array::error(usage("index", message, location)),
        };
        let start: Vec<i64> = b
            .boxes
            .iter()
            .map(|&(s, step, c)| if step < 0 { s + step * (c - 1) } else { s })
            .collect();
        let limit: Vec<i64> = b
            .boxes
            .iter()
            .zip(&start)
            .map(|(&(_, step, c), &s)| s + step.abs() * (c - 1).max(0) + i64::from(c > 0))
            .collect();
        let strides: Vec<i64> = b.boxes.iter().map(|&(_, step, _)| step.abs()).collect();
        let mut out = lax::slice(self, &start, &limit, Some(&strides));
        let reversed: Vec<i64> = b
            .boxes
            .iter()
            .enumerate()
            .filter(|(_, b)| b.1 < 0)
            .map(|(d, _)| d as i64)
            .collect();
        if !reversed.is_empty() {
            out = lax::rev(&out, &reversed);
        }
        if b.kept.iter().all(|k| *k) && b.result_shape.len() == b.kept.len() {
            return out;
        }
        lax::reshape(&out, &b.result_shape)
    }

    /// Functional updates at `index`: `x.at(&s![1..3]).set(v)`.
    pub fn at(&self, items: &[IndexItem]) -> At<'_> {
        At {
            array: self,
            items: items.to_vec(),
            mode: None,
            fill_value: None,
        }
    }
}

/// The target of a functional update; see [`Array::at`].
pub struct At<'a> {
    array: &'a Array,
    items: Vec<IndexItem>,
    mode: Option<GatherMode>,
    fill_value: Option<f64>,
}

impl At<'_> {
    /// How out-of-bounds indices are treated, as JAX's `mode=`: `Clip`
    /// clamps them (reads and updates); `Fill` makes reads give the fill
    /// value ([`At::fill_value`], else NaN, the lowest signed or highest
    /// unsigned integer, or true) and drops updates; `PromiseInBounds`
    /// leaves them to XLA. Without a mode, reads clamp and updates drop.
    pub fn mode(mut self, mode: GatherMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// The value of out-of-bounds reads in `GatherMode::Fill`.
    pub fn fill_value(mut self, value: f64) -> Self {
        self.fill_value = Some(value);
        self
    }

    /// The fill of an out-of-bounds read of this array.
    fn fill(&self) -> Scalar {
        let dtype = self.array.dtype_or_bool();
        match self.fill_value {
            Some(v) if dtype.is_float() => Scalar::Float(v),
            Some(v) if dtype == DType::Bool => Scalar::Bool(v != 0.0),
            Some(v) => Scalar::Int(v as i64),
            None => default_fill(dtype),
        }
    }

    /// A copy with the indexed elements replaced by `v` (broadcast).
    #[track_caller]
    pub fn set(&self, v: &Array) -> Array {
        self.scatter(v, ScatterOp::Set)
    }

    /// A copy with `v` added at the index (repeated indices add up).
    #[track_caller]
    pub fn add(&self, v: &Array) -> Array {
        self.scatter(v, ScatterOp::Add)
    }

    /// A copy with the indexed elements multiplied by `v`.
    #[track_caller]
    pub fn mul(&self, v: &Array) -> Array {
        self.scatter(v, ScatterOp::Mul)
    }

    /// A copy with the indexed elements replaced by min(x, v).
    #[track_caller]
    pub fn min(&self, v: &Array) -> Array {
        self.scatter(v, ScatterOp::Min)
    }

    /// A copy with the indexed elements replaced by max(x, v).
    #[track_caller]
    pub fn max(&self, v: &Array) -> Array {
        self.scatter(v, ScatterOp::Max)
    }

    /// A copy with the elementwise function `f` applied at the index, once
    /// per time the index names an element (JAX's `.at[...].apply`, where a
    /// position named twice gets `f(f(x))`); out-of-bounds positions are
    /// dropped (or clamped with `GatherMode::Clip`). Concrete indices
    /// unroll into one masked `f` per repetition; traced ones loop until
    /// the most repeated position is done. Unlike JAX's, it is
    /// differentiable when the indices are concrete.
    ///
    /// ```
    /// use oxla::{Array, numpy as jnp, s};
    /// # fn main() -> oxla::Result<()> {
    /// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4])?;
    /// let idx = Array::from_slice(&[0i32, 0, 2], &[3])?;
    /// let y = x.at(&s![idx]).apply(|v| v * 10.0);
    /// assert_eq!(y.to_vec::<f32>()?, vec![100.0, 2.0, 30.0, 4.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn apply(&self, f: impl Fn(&Array) -> Array) -> Array {
        let x = self.array;
        let zeros = crate::numpy::zeros(x.shape_or_empty(), DType::I32);
        let counts = At {
            array: &zeros,
            items: self.items.clone(),
            mode: self.mode,
            fill_value: None,
        }
        .scatter(&Array::weak_scalar(1i32), ScatterOp::Add);
        let all_dims: Vec<i64> = (0..x.ndim_or_zero() as i64).collect();
        let step = |j: &Array, y: &Array| {
            let due = lax::gt(&counts, j);
            lax::select_n(&due, &[y, &f(y)])
        };
        if !counts.is_traced() {
            let most = match lax::reduce_max(&counts, &all_dims).item::<i32>() {
                Ok(most) => most,
                Err(e) => return Array::error(e),
            };
            return (0..most).fold(x.clone(), |y, j| step(&Array::weak_scalar(j), &y));
        }
        let most = lax::reduce_max(&counts, &all_dims);
        let looped = crate::control::while_loop(
            |(j, _): &(Array, Array)| lax::lt(j, &most),
            |(j, y): (Array, Array)| (lax::add(&j, &Array::weak_scalar(1i32)), step(&j, &y)),
            (
                lax::convert_element_type(&Array::weak_scalar(0i32), DType::I32),
                x.clone(),
            ),
        );
        match looped {
            Ok((_, y)) => y,
            Err(e) => Array::error(e),
        }
    }

    /// `x[index]`: [`Array::index`], with out-of-bounds indices treated as
    /// [`At::mode`] says.
    #[track_caller]
    pub fn get(&self) -> Array {
        let x = self.array;
        let location = oxla_core::Location::from_caller(std::panic::Location::caller());
        let mode = match self.mode {
            None | Some(GatherMode::PromiseInBounds) => return x.index(&self.items),
            Some(mode) => mode,
        };
        match expand_mask("at", x, &self.items, location) {
            Ok(Some(masked)) => return masked.merged.index(&masked.items),
            Ok(None) => {}
            Err(e) => return Array::error(e),
        }
        if advanced::needs_grid(&self.items) {
            let clip = mode == GatherMode::Clip;
            return match advanced::grid(x.shape_or_empty(), &self.items, clip) {
                Ok(grid) => advanced::gather(x, &grid, mode, self.fill()),
                Err(message) => Array::error(usage("at", message, location)),
            };
        }
        if let Some(found) = array_index(&self.items, x.ndim_or_zero()) {
            return match found {
                Ok((axis, idx)) => {
                    let n = x.shape_or_empty().get(axis).copied().unwrap_or(0);
                    take_along(x, &lax::wrap_negative(&idx, n), axis, mode, self.fill())
                }
                Err(message) => Array::error(usage("at", message, location)),
            };
        }
        // Static ints past the end read the fill value.
        let shape = x.shape_or_empty();
        let b = match basic(shape, &self.items, OutOfBounds::Drop) {
            Ok(b) => b,
            Err(message) => return Array::error(usage("at", message, location)),
        };
        let outside = b
            .boxes
            .iter()
            .zip(shape)
            .any(|(&(start, _, count), &n)| count == 1 && !(0..n).contains(&start));
        if outside && mode == GatherMode::Fill {
            return crate::numpy::full(&b.result_shape, self.fill().as_f64(), x.dtype_or_bool());
        }
        x.index(&self.items)
    }

    #[track_caller]
    fn scatter(&self, v: &Array, op: ScatterOp) -> Array {
        let x = self.array;
        let location = oxla_core::Location::from_caller(std::panic::Location::caller());
        match expand_mask("at", x, &self.items, location) {
            Ok(Some(masked)) => {
                let updated = At {
                    array: &masked.merged,
                    items: masked.items,
                    mode: self.mode,
                    fill_value: self.fill_value,
                }
                .scatter(v, op);
                return lax::reshape(&updated, x.shape_or_empty());
            }
            Ok(None) => {}
            Err(e) => return Array::error(e),
        }
        let rank = x.ndim_or_zero();
        if advanced::needs_grid(&self.items) {
            let clip = self.mode == Some(GatherMode::Clip);
            return match advanced::grid(x.shape_or_empty(), &self.items, clip) {
                Ok(grid) => advanced::scatter(x, &grid, v, op),
                Err(message) => Array::error(usage("at", message, location)),
            };
        }
        if let Some(found) = array_index(&self.items, rank) {
            let (axis, idx) = match found {
                Ok(f) => f,
                Err(message) => return Array::error(usage("at", message, location)),
            };
            let n = x.shape_or_empty().get(axis).copied().unwrap_or(0);
            let idx = lax::wrap_negative(&lax::reshape(&idx, &[idx.size_or_one()]), n);
            let idx = if self.mode == Some(GatherMode::Clip) {
                let zero =
                    lax::convert_element_type(&Array::weak_scalar(0i32), idx.dtype_or_bool());
                let last = lax::convert_element_type(
                    &Array::weak_scalar((n - 1).max(0) as i32),
                    idx.dtype_or_bool(),
                );
                lax::clamp(&zero, &idx, &last)
            } else {
                idx
            };
            let mut update_shape = x.shape_or_empty().to_vec();
            update_shape[axis] = idx.size_or_one();
            let updates = crate::numpy::broadcast_to(
                &lax::convert_element_type(v, x.dtype_or_bool()),
                &update_shape,
            );
            let indices = lax::expand_dims(&idx, &[1]);
            let window: Dims = (0..rank as i64).filter(|&d| d != axis as i64).collect();
            return lax::scatter(
                x,
                &indices,
                &updates,
                op,
                ScatterDimensionNumbers {
                    update_window_dims: window,
                    inserted_window_dims: [axis as i64].into_iter().collect(),
                    scatter_dims_to_operand_dims: [axis as i64].into_iter().collect(),
                },
            );
        }
        let out_of_bounds = match self.mode {
            Some(GatherMode::Clip) => OutOfBounds::Clamp,
            _ => OutOfBounds::Drop,
        };
        let b = match basic(x.shape_or_empty(), &self.items, out_of_bounds) {
            Ok(b) => b,
            Err(message) => return Array::error(usage("at", message, location)),
        };
        // Every element of the (strided) box gets its own index vector.
        let box_shape: Vec<i64> = b.boxes.iter().map(|&(_, _, c)| c).collect();
        let mut grid_shape = box_shape.clone();
        grid_shape.push(1);
        let components: Vec<Array> = b
            .boxes
            .iter()
            .enumerate()
            .map(|(d, &(start, step, _))| {
                let i = lax::iota(DType::I32, &grid_shape, d);
                lax::add(
                    &lax::mul(&i, &Array::weak_scalar(step as i32)),
                    &Array::weak_scalar(start as i32),
                )
            })
            .collect();
        let refs: Vec<&Array> = components.iter().collect();
        let indices = lax::concatenate(&refs, rank);
        let kept_shape: Vec<i64> = b
            .boxes
            .iter()
            .zip(&b.kept)
            .filter(|(_, k)| **k)
            .map(|(&(_, _, c), _)| c)
            .collect();
        let v = lax::convert_element_type(v, x.dtype_or_bool());
        let v = crate::numpy::broadcast_to(
            &crate::numpy::squeeze_new_axes(&v, &b.result_shape, &kept_shape),
            &kept_shape,
        );
        let updates = lax::reshape(&v, &box_shape);
        lax::scatter(
            x,
            &indices,
            &updates,
            op,
            ScatterDimensionNumbers {
                update_window_dims: Dims::new(),
                inserted_window_dims: (0..rank as i64).collect(),
                scatter_dims_to_operand_dims: (0..rank as i64).collect(),
            },
        )
    }
}
