//! JAX's type promotion: the lattice of `jax._src.dtypes`, with weak types.
//!
//! Python scalars are *weakly typed*: `x_f16 * 2.0` stays `f16`. In the
//! lattice, weak integer (`i*`) and weak float (`f*`) nodes sit below the
//! concrete types they may become; the result of promoting two types is the
//! least upper bound of their nodes. A weak result becomes the default type
//! of its kind (`i32`/`f32`, or `i64`/`f64` with x64 enabled) and stays weak.

use crate::dtype::DType;

/// A node of the promotion lattice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Concrete(DType),
    WeakInt,
    WeakFloat,
    WeakComplex,
}

/// The nodes directly above `n` (JAX's `_type_promotion_lattice`).
fn parents(n: Node) -> &'static [Node] {
    use DType::*;
    use Node::{Concrete as C, WeakComplex, WeakFloat, WeakInt};
    match n {
        C(Bool) => &[WeakInt],
        WeakInt => &[C(U8), C(I8)],
        C(U8) => &[C(I16), C(U16)],
        C(U16) => &[C(I32), C(U32)],
        C(U32) => &[C(I64), C(U64)],
        C(U64) => &[WeakFloat],
        C(I8) => &[C(I16)],
        C(I16) => &[C(I32)],
        C(I32) => &[C(I64)],
        C(I64) => &[WeakFloat],
        WeakFloat => &[C(F16), C(BF16), WeakComplex],
        C(F16) | C(BF16) => &[C(F32)],
        C(F32) => &[C(F64), C(C64)],
        C(F64) => &[C(C128)],
        WeakComplex => &[C(C64)],
        C(C64) => &[C(C128)],
        C(C128) => &[],
    }
}

const NODES: [Node; 18] = [
    Node::Concrete(DType::Bool),
    Node::WeakInt,
    Node::Concrete(DType::U8),
    Node::Concrete(DType::U16),
    Node::Concrete(DType::U32),
    Node::Concrete(DType::U64),
    Node::Concrete(DType::I8),
    Node::Concrete(DType::I16),
    Node::Concrete(DType::I32),
    Node::Concrete(DType::I64),
    Node::WeakFloat,
    Node::Concrete(DType::F16),
    Node::Concrete(DType::BF16),
    Node::Concrete(DType::F32),
    Node::Concrete(DType::F64),
    Node::WeakComplex,
    Node::Concrete(DType::C64),
    Node::Concrete(DType::C128),
];

/// Every node at or above `n`.
fn upper_set(n: Node) -> Vec<Node> {
    let mut seen = vec![n];
    let mut i = 0;
    while i < seen.len() {
        for &p in parents(seen[i]) {
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
        i += 1;
    }
    seen
}

fn node(dtype: DType, weak: bool) -> Node {
    match (weak, dtype) {
        (true, d) if d.is_int() => Node::WeakInt,
        (true, d) if d.is_float() => Node::WeakFloat,
        (true, d) if d.is_complex() => Node::WeakComplex,
        (_, d) => Node::Concrete(d),
    }
}

/// The default integer and float types: `i32`/`f32`, or `i64`/`f64` with x64.
pub fn default_int(x64: bool) -> DType {
    if x64 { DType::I64 } else { DType::I32 }
}

/// See [`default_int`].
pub fn default_float(x64: bool) -> DType {
    if x64 { DType::F64 } else { DType::F32 }
}

/// The default complex type: `c64`, or `c128` with x64.
pub fn default_complex(x64: bool) -> DType {
    if x64 { DType::C128 } else { DType::C64 }
}

/// The result of promoting `(a, a_weak)` with `(b, b_weak)`: its dtype and
/// whether it is weak, as `jnp.result_type` gives it.
pub fn promote(a: DType, a_weak: bool, b: DType, b_weak: bool, x64: bool) -> (DType, bool) {
    // JAX's `_lattice_result_type`: equal dtypes promote trivially (weak only
    // if both are); two weak inputs promote as their strong types and stay
    // weak; otherwise the least upper bound of the nodes, weak if it is a
    // weak node.
    if a == b {
        return (canonicalize(a, x64), a_weak && b_weak && a != DType::Bool);
    }
    if a_weak && b_weak {
        let (d, _) = least_upper_bound(Node::Concrete(a), Node::Concrete(b), x64);
        return (d, d != DType::Bool);
    }
    least_upper_bound(node(a, a_weak), node(b, b_weak), x64)
}

fn least_upper_bound(a: Node, b: Node, x64: bool) -> (DType, bool) {
    let (ua, ub) = (upper_set(a), upper_set(b));
    let common: Vec<Node> = ua.into_iter().filter(|n| ub.contains(n)).collect();
    // The least upper bound: the common node every other common node is above.
    let lub = NODES
        .into_iter()
        .filter(|n| common.contains(n))
        .find(|&n| common.iter().all(|&m| upper_set(n).contains(&m)))
        .unwrap_or(Node::Concrete(DType::F64));
    match lub {
        Node::Concrete(d) => (canonicalize(d, x64), false),
        Node::WeakInt => (default_int(x64), true),
        Node::WeakFloat => (default_float(x64), true),
        Node::WeakComplex => (default_complex(x64), true),
    }
}

/// Without x64, 64-bit types are canonicalized to 32 bits, as in JAX.
pub fn canonicalize(d: DType, x64: bool) -> DType {
    match (x64, d) {
        (false, DType::I64) => DType::I32,
        (false, DType::U64) => DType::U32,
        (false, DType::F64) => DType::F32,
        (false, DType::C128) => DType::C64,
        (_, d) => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn weak_scalars_keep_the_array_type() {
        assert_eq!(promote(F16, false, F32, true, false), (F16, false));
        assert_eq!(promote(I8, false, I32, true, false), (I8, false));
        assert_eq!(promote(U8, false, I32, true, false), (U8, false));
        assert_eq!(promote(I32, false, F32, true, false), (F32, true));
        assert_eq!(promote(I32, true, F32, true, false), (F32, true));
        assert_eq!(promote(Bool, false, I32, true, false), (I32, true));
    }

    #[test]
    fn mixed_concrete_types_follow_the_lattice() {
        assert_eq!(promote(U8, false, I8, false, false), (I16, false));
        assert_eq!(promote(U32, false, I32, false, true), (I64, false));
        assert_eq!(promote(BF16, false, F16, false, false), (F32, false));
        assert_eq!(promote(I64, false, F16, false, true), (F16, false));
        assert_eq!(promote(U64, false, I64, false, true), (F64, true));
        assert_eq!(promote(F32, false, F64, false, false), (F32, false));
    }
}
