//! XLA's own random number generators (JAX's `lax.rng_bit_generator` and
//! `lax.rng_uniform`): `rng_bit_generator` is stateless, a function of its
//! key, and backs JAX's `rbg` and `unsafe_rbg` PRNG implementations;
//! `rng_uniform` draws from the backend's hidden generator state.

use super::print;
use crate::aval::{Aval, Dims};
use crate::dtype::DType;
use crate::shape_rules::{RuleResult, ShapeError, expect_arity};

/// The algorithm of `rng_bit_generator`, as JAX's `RandomAlgorithm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RngAlgorithm {
    /// The platform's default algorithm (what JAX's `rbg` keys use).
    #[default]
    Default,
    /// Threefry-2x32.
    ThreeFry,
    /// Philox-4x32.
    Philox,
}

impl RngAlgorithm {
    /// JAX's name (`RNG_DEFAULT`), as jaxprs print it.
    pub fn jax_name(self) -> &'static str {
        match self {
            RngAlgorithm::Default => "RNG_DEFAULT",
            RngAlgorithm::ThreeFry => "RNG_THREE_FRY",
            RngAlgorithm::Philox => "RNG_PHILOX",
        }
    }

    /// StableHLO's name (`#stablehlo<rng_algorithm DEFAULT>`).
    pub fn stablehlo_name(self) -> &'static str {
        match self {
            RngAlgorithm::Default => "DEFAULT",
            RngAlgorithm::ThreeFry => "THREE_FRY",
            RngAlgorithm::Philox => "PHILOX",
        }
    }
}

/// A random-number primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// `(new_key, bits) = rng_bit_generator(key)`: the key is `u32[4]` (or
    /// `u64[2]`), the bits unsigned integers of `dtype` and `shape`.
    RngBitGenerator {
        /// The bits' shape.
        shape: Dims,
        /// The bits' type: u8, u16, u32 or u64.
        dtype: DType,
        /// The generator.
        algorithm: RngAlgorithm,
    },
    /// Uniform numbers in `[a, b)` of `shape` from the backend's generator
    /// state (operands: the scalars `a` and `b`).
    RngUniform {
        /// The result's shape.
        shape: Dims,
    },
}

impl Op {
    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::RngBitGenerator { .. } => "rng_bit_generator",
            Op::RngUniform { .. } => "rng_uniform",
        }
    }

    /// The parameters as jaxprs print them.
    pub fn params(
        &self,
        _pad: usize,
        _nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        match self {
            Op::RngBitGenerator {
                shape,
                dtype,
                algorithm,
            } => vec![
                format!("algorithm={}", algorithm.jax_name()),
                format!("dtype={}", dtype.numpy_name()),
                "out_sharding=None".into(),
                format!("shape={}", print::tuple(shape)),
            ],
            Op::RngUniform { shape } => vec![format!("shape={}", print::tuple(shape))],
        }
    }
}

/// The shape rule: output types of a primitive of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::RngBitGenerator { shape, dtype, .. } => {
            expect_arity(inputs, 1)?;
            let key = inputs[0];
            let valid_key = matches!(
                (key.dtype, key.shape.as_slice()),
                (DType::U32, [4]) | (DType::U64, [2])
            );
            if !valid_key {
                return Err(ShapeError::Invalid(format!(
                    "the key must be u32[4] or u64[2], got {key}"
                )));
            }
            if !matches!(dtype, DType::U8 | DType::U16 | DType::U32 | DType::U64) {
                return Err(ShapeError::Invalid(format!(
                    "generates unsigned integers (u8, u16, u32, u64), not {dtype}"
                )));
            }
            check_shape(shape)?;
            Ok(vec![
                Aval::new(key.dtype, &key.shape),
                Aval::new(*dtype, shape),
            ])
        }
        Op::RngUniform { shape } => {
            expect_arity(inputs, 2)?;
            let (a, b) = (inputs[0], inputs[1]);
            if a.dtype != b.dtype || a.rank() != 0 || b.rank() != 0 {
                return Err(ShapeError::Invalid(format!(
                    "takes two scalar bounds of one type, got {a} and {b}"
                )));
            }
            if !(a.dtype.is_float() || a.dtype.is_int()) || a.dtype.is_complex() {
                return Err(ShapeError::Invalid(format!(
                    "draws integers or real floats, not {}",
                    a.dtype
                )));
            }
            check_shape(shape)?;
            Ok(vec![Aval::new(a.dtype, shape)])
        }
    }
}

fn check_shape(shape: &[i64]) -> RuleResult<()> {
    match shape.iter().find(|d| **d < 0) {
        Some(d) => Err(ShapeError::Invalid(format!(
            "the shape {shape:?} has a negative dimension {d}"
        ))),
        None => Ok(()),
    }
}

/// The sharding rule (see [`crate::sharding_rules`]): the new key keeps the
/// key's spec; generated values are unsplit.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    match op {
        Op::RngBitGenerator { shape, .. } => Ok(vec![
            inputs[0].dim_axes(),
            crate::sharding_rules::unsplit(shape.len()),
        ]),
        Op::RngUniform { shape } => Ok(vec![crate::sharding_rules::unsplit(shape.len())]),
    }
}
