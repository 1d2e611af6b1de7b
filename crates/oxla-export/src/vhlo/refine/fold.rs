//! Folding the small integer computations a shape-polymorphic module does
//! on its dimension sizes (`get_dimension_size`, arithmetic, comparisons,
//! reshapes, broadcasts and concatenations of them), so the shapes they
//! feed become known, as StableHLO's shape refinement folds them.

use super::types::IntegerType;

/// The most elements a folded value may have: shape computations are
/// scalars and vectors of a rank's length.
pub(crate) const MAX_FOLDED_ELEMENTS: usize = 1024;

/// A known integer (or boolean) value: its dims and row-major elements.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Constant {
    pub(crate) dims: Vec<i64>,
    pub(crate) values: Vec<i64>,
}

impl Constant {
    /// A scalar.
    pub(crate) fn scalar(value: i64) -> Constant {
        Constant {
            dims: vec![],
            values: vec![value],
        }
    }
}

/// Row-major strides of `dims`.
fn strides(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// The multi-index of flat position `flat` in `dims`.
fn unflatten(mut flat: i64, dims: &[i64]) -> Vec<i64> {
    let mut index = vec![0; dims.len()];
    for i in (0..dims.len()).rev() {
        if dims[i] > 0 {
            index[i] = flat % dims[i];
            flat /= dims[i];
        }
    }
    index
}

fn element_count(dims: &[i64]) -> Option<usize> {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
        .filter(|&n| n <= MAX_FOLDED_ELEMENTS)
}

/// An elementwise unary op of StableHLO on integers, by its VHLO name
/// without version; `None` for one that is not folded.
pub(crate) fn unary(name: &str, x: &Constant, ty: IntegerType) -> Option<Constant> {
    let f: fn(i64) -> i64 = match name {
        "negate" => |v| v.wrapping_neg(),
        "abs" => |v| v.wrapping_abs(),
        "sign" => i64::signum,
        "not" => |v| !v,
        _ => return None,
    };
    let mut values: Vec<i64> = x.values.iter().map(|&v| ty.wrap(f(v))).collect();
    if name == "not" && ty.bits == 1 {
        values = x.values.iter().map(|&v| i64::from(v == 0)).collect();
    }
    Some(Constant {
        dims: x.dims.clone(),
        values,
    })
}

/// XLA's integer division: truncating, `x / 0 = -1`, `MIN / -1 = MIN`.
fn divide(a: i64, b: i64, ty: IntegerType) -> i64 {
    if b == 0 {
        return ty.wrap(-1);
    }
    if ty.unsigned {
        return ((a as u64) / (b as u64)) as i64;
    }
    a.wrapping_div(b)
}

/// XLA's integer remainder: the sign of the dividend, `x % 0 = x`.
fn remainder(a: i64, b: i64, ty: IntegerType) -> i64 {
    if b == 0 {
        return a;
    }
    if ty.unsigned {
        return ((a as u64) % (b as u64)) as i64;
    }
    a.wrapping_rem(b)
}

/// An elementwise binary op on integers (operands of one shape).
pub(crate) fn binary(name: &str, a: &Constant, b: &Constant, ty: IntegerType) -> Option<Constant> {
    if a.dims != b.dims {
        return None;
    }
    let f = |x: i64, y: i64| -> Option<i64> {
        Some(match name {
            "add" => x.wrapping_add(y),
            "subtract" => x.wrapping_sub(y),
            "multiply" => x.wrapping_mul(y),
            "divide" => divide(x, y, ty),
            "remainder" => remainder(x, y, ty),
            "maximum" if ty.unsigned => (x as u64).max(y as u64) as i64,
            "maximum" => x.max(y),
            "minimum" if ty.unsigned => (x as u64).min(y as u64) as i64,
            "minimum" => x.min(y),
            "and" => x & y,
            "or" => x | y,
            "xor" => x ^ y,
            _ => return None,
        })
    };
    let values = a
        .values
        .iter()
        .zip(&b.values)
        .map(|(&x, &y)| f(x, y).map(|v| ty.wrap(v)))
        .collect::<Option<Vec<_>>>()?;
    Some(Constant {
        dims: a.dims.clone(),
        values,
    })
}

/// `compare` with its direction (`EQ`, `NE`, `LT`, `LE`, `GT`, `GE`),
/// unsigned when `unsigned`; booleans as 0 and 1.
pub(crate) fn compare(
    direction: &str,
    a: &Constant,
    b: &Constant,
    unsigned: bool,
) -> Option<Constant> {
    if a.dims != b.dims {
        return None;
    }
    let values = a
        .values
        .iter()
        .zip(&b.values)
        .map(|(&x, &y)| {
            let ordering = if unsigned {
                (x as u64).cmp(&(y as u64))
            } else {
                x.cmp(&y)
            };
            let holds = match direction {
                "EQ" => ordering.is_eq(),
                "NE" => ordering.is_ne(),
                "LT" => ordering.is_lt(),
                "LE" => ordering.is_le(),
                "GT" => ordering.is_gt(),
                "GE" => ordering.is_ge(),
                _ => return None,
            };
            Some(i64::from(holds))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Constant {
        dims: a.dims.clone(),
        values,
    })
}

/// `select(pred, on_true, on_false)`, the predicate a scalar or of the
/// operands' shape.
pub(crate) fn select(pred: &Constant, t: &Constant, f: &Constant) -> Option<Constant> {
    if t.dims != f.dims || (!pred.dims.is_empty() && pred.dims != t.dims) {
        return None;
    }
    let values = (0..t.values.len())
        .map(|i| {
            let p = if pred.dims.is_empty() {
                pred.values[0]
            } else {
                pred.values[i]
            };
            if p != 0 { t.values[i] } else { f.values[i] }
        })
        .collect();
    Some(Constant {
        dims: t.dims.clone(),
        values,
    })
}

/// `clamp(min, x, max)`, the bounds scalars or of `x`'s shape.
pub(crate) fn clamp(lo: &Constant, x: &Constant, hi: &Constant) -> Option<Constant> {
    let at = |c: &Constant, i: usize| -> Option<i64> {
        if c.dims.is_empty() {
            Some(c.values[0])
        } else if c.dims == x.dims {
            Some(c.values[i])
        } else {
            None
        }
    };
    let values = (0..x.values.len())
        .map(|i| Some(x.values[i].max(at(lo, i)?).min(at(hi, i)?)))
        .collect::<Option<Vec<_>>>()?;
    Some(Constant {
        dims: x.dims.clone(),
        values,
    })
}

/// The same values with other dims (`reshape`), or a type conversion
/// wrapping them to `ty`.
pub(crate) fn reshape(x: &Constant, dims: &[i64], ty: IntegerType) -> Option<Constant> {
    (element_count(dims)? == x.values.len()).then(|| Constant {
        dims: dims.to_vec(),
        values: x.values.iter().map(|&v| ty.wrap(v)).collect(),
    })
}

/// `broadcast_in_dim`: operand dim `i` goes to result dim `mapping[i]`.
pub(crate) fn broadcast(x: &Constant, mapping: &[i64], dims: &[i64]) -> Option<Constant> {
    let count = element_count(dims)?;
    let fits = mapping.len() == x.dims.len()
        && mapping
            .iter()
            .all(|&to| usize::try_from(to).is_ok_and(|to| to < dims.len()));
    if !fits {
        return None;
    }
    let from = strides(&x.dims);
    let values = (0..count)
        .map(|flat| {
            let index = unflatten(flat as i64, dims);
            let source: i64 = mapping
                .iter()
                .enumerate()
                .map(|(i, &to)| {
                    let k = if x.dims[i] == 1 {
                        0
                    } else {
                        index[to as usize]
                    };
                    k * from[i]
                })
                .sum();
            x.values[source as usize]
        })
        .collect();
    Some(Constant {
        dims: dims.to_vec(),
        values,
    })
}

/// `concatenate` along `axis`.
pub(crate) fn concatenate(parts: &[&Constant], axis: usize, dims: &[i64]) -> Option<Constant> {
    let count = element_count(dims)?;
    if axis >= dims.len() || parts.iter().any(|p| p.dims.len() != dims.len()) {
        return None;
    }
    let values = (0..count)
        .map(|flat| {
            let mut index = unflatten(flat as i64, dims);
            for part in parts {
                let size = *part.dims.get(axis)?;
                if index[axis] < size {
                    let s = strides(&part.dims);
                    let at: i64 = index.iter().zip(&s).map(|(i, s)| i * s).sum();
                    return part.values.get(at as usize).copied();
                }
                index[axis] -= size;
            }
            None
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Constant {
        dims: dims.to_vec(),
        values,
    })
}

/// `slice` with static starts and strides into `dims`.
pub(crate) fn slice(x: &Constant, starts: &[i64], steps: &[i64], dims: &[i64]) -> Option<Constant> {
    let count = element_count(dims)?;
    let rank = x.dims.len();
    if dims.len() != rank || starts.len() != rank || steps.len() != rank {
        return None;
    }
    let s = strides(&x.dims);
    let values = (0..count)
        .map(|flat| {
            let index = unflatten(flat as i64, dims);
            let at = (0..index.len()).try_fold(0i64, |acc, d| {
                let position = starts[d].checked_add(index[d].checked_mul(steps[d])?)?;
                acc.checked_add(position.checked_mul(s[d])?)
            })?;
            x.values.get(usize::try_from(at).ok()?).copied()
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Constant {
        dims: dims.to_vec(),
        values,
    })
}

/// `iota` along `axis` of `dims`.
pub(crate) fn iota(dims: &[i64], axis: usize) -> Option<Constant> {
    let count = element_count(dims)?;
    if axis >= dims.len() {
        return None;
    }
    let values = (0..count)
        .map(|flat| unflatten(flat as i64, dims)[axis])
        .collect();
    Some(Constant {
        dims: dims.to_vec(),
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const I32: IntegerType = IntegerType {
        bits: 32,
        unsigned: false,
    };

    fn v(dims: &[i64], values: &[i64]) -> Constant {
        Constant {
            dims: dims.to_vec(),
            values: values.to_vec(),
        }
    }

    #[test]
    fn integer_arithmetic_follows_xla() {
        let a = v(&[3], &[7, -7, 5]);
        let b = v(&[3], &[2, 2, 0]);
        assert_eq!(
            binary("divide", &a, &b, I32).unwrap().values,
            vec![3, -3, -1]
        );
        assert_eq!(
            binary("remainder", &a, &b, I32).unwrap().values,
            vec![1, -1, 5]
        );
        assert_eq!(compare("GE", &a, &b, false).unwrap().values, vec![1, 0, 1]);
        assert_eq!(
            select(&Constant::scalar(0), &a, &b).unwrap().values,
            vec![2, 2, 0]
        );
        assert_eq!(unary("negate", &a, I32).unwrap().values, vec![-7, 7, -5]);
    }

    #[test]
    fn inconsistent_attributes_fold_to_nothing_rather_than_panic() {
        let x = v(&[2], &[4, 5]);
        assert!(broadcast(&x, &[3], &[2, 2]).is_none());
        assert!(broadcast(&x, &[0, 1], &[2, 2]).is_none());
        assert!(concatenate(&[&x], 1, &[2]).is_none());
        assert!(slice(&x, &[0, 0], &[1], &[1]).is_none());
        assert!(iota(&[2], 1).is_none());
    }

    #[test]
    fn shape_ops_move_values() {
        let x = v(&[2], &[4, 5]);
        let b = broadcast(&x, &[1], &[2, 2]).unwrap();
        assert_eq!(b.values, vec![4, 5, 4, 5]);
        let c = concatenate(&[&x, &v(&[1], &[6])], 0, &[3]).unwrap();
        assert_eq!(c.values, vec![4, 5, 6]);
        assert_eq!(slice(&c, &[1], &[1], &[2]).unwrap().values, vec![5, 6]);
        assert_eq!(reshape(&c, &[3, 1], I32).unwrap().dims, vec![3, 1]);
        assert_eq!(iota(&[2, 2], 1).unwrap().values, vec![0, 1, 0, 1]);
    }
}
