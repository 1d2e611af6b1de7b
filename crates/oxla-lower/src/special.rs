//! Special functions StableHLO has no op for, expanded as JAX expands
//! them (`jax/_src/lax/special.py`), op for op, so that the plugin computes
//! the same bits: `bessel_i0e` from Cephes' Chebyshev series.

// The coefficients are written as Cephes publishes them (more digits than
// an f64 holds; each rounds to the same f64 JAX's do).
#![allow(clippy::excessive_precision)]

use melior::ir::{Location, Value};
use oxla_core::{Aval, DType, Scalar};

use crate::emit::{Emitter, LowerError};

/// The f64 set of the series on [0, 8].
const I0E_A_F64: [f64; 30] = [
    -4.41534164647933937950E-18,
    3.33079451882223809783E-17,
    -2.43127984654795469359E-16,
    1.71539128555513303061E-15,
    -1.16853328779934516808E-14,
    7.67618549860493561688E-14,
    -4.85644678311192946090E-13,
    2.95505266312963983461E-12,
    -1.72682629144155570723E-11,
    9.67580903537323691224E-11,
    -5.18979560163526290666E-10,
    2.65982372468238665035E-9,
    -1.30002500998624804212E-8,
    6.04699502254191894932E-8,
    -2.67079385394061173391E-7,
    1.11738753912010371815E-6,
    -4.41673835845875056359E-6,
    1.64484480707288970893E-5,
    -5.75419501008210370398E-5,
    1.88502885095841655729E-4,
    -5.76375574538582365885E-4,
    1.63947561694133579842E-3,
    -4.32430999505057594430E-3,
    1.05464603945949983183E-2,
    -2.37374148058994688156E-2,
    4.93052842396707084878E-2,
    -9.49010970480476444210E-2,
    1.71620901522208775349E-1,
    -3.04682672343198398683E-1,
    6.76795274409476084995E-1,
];

/// The f64 set of the series on (8, ∞).
const I0E_B_F64: [f64; 25] = [
    -7.23318048787475395456E-18,
    -4.83050448594418207126E-18,
    4.46562142029675999901E-17,
    3.46122286769746109310E-17,
    -2.82762398051658348494E-16,
    -3.42548561967721913462E-16,
    1.77256013305652638360E-15,
    3.81168066935262242075E-15,
    -9.55484669882830764870E-15,
    -4.15056934728722208663E-14,
    1.54008621752140982691E-14,
    3.85277838274214270114E-13,
    7.18012445138366623367E-13,
    -1.79417853150680611778E-12,
    -1.32158118404477131188E-11,
    -3.14991652796324136454E-11,
    1.18891471078464383424E-11,
    4.94060238822496958910E-10,
    3.39623202570838634515E-9,
    2.26666899049817806459E-8,
    2.04891858946906374183E-7,
    2.89137052083475648297E-6,
    6.88975834691682398426E-5,
    3.36911647825569408990E-3,
    8.04490411014108831608E-1,
];

/// The f32 series are the f64 ones' last terms (Cephes' f32 sets).
const I0E_A_F32: &[f64] = I0E_A_F64.split_at(12).1;
const I0E_B_F32: &[f64] = I0E_B_F64.split_at(18).1;

/// Elementwise arithmetic on values of one type.
struct Arith<'e, 'c, 'a> {
    e: &'e mut Emitter<'c, 'a>,
    aval: Aval,
    loc: Location<'c>,
}

impl<'c, 'a> Arith<'_, 'c, 'a> {
    fn splat(&mut self, v: f64) -> Result<Value<'c, 'a>, LowerError> {
        self.e.constant(&self.aval, Scalar::Float(v), self.loc)
    }

    fn op(&mut self, name: &str, args: &[Value<'c, 'a>]) -> Result<Value<'c, 'a>, LowerError> {
        Ok(self.e.op(name, args, &[&self.aval], &[], self.loc)?[0])
    }
}

/// `bessel_i0e(x)`: e^-|x| I₀(x); f16 and bf16 computed in f32.
pub(crate) fn bessel_i0e<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    in_aval: &Aval,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let wide = match in_aval.dtype {
        DType::F64 | DType::F32 => in_aval.clone(),
        _ => in_aval.with_dtype(DType::F32),
    };
    let x = if wide.dtype == in_aval.dtype {
        x
    } else {
        e.op("stablehlo.convert", &[x], &[&wide], &[], loc)?[0]
    };
    let (a, b): (&[f64], &[f64]) = match wide.dtype {
        DType::F64 => (&I0E_A_F64, &I0E_B_F64),
        _ => (I0E_A_F32, I0E_B_F32),
    };
    let mut m = Arith {
        e,
        aval: wide.clone(),
        loc,
    };
    let x = m.op("stablehlo.abs", &[x])?;
    let (half, two, thirty_two, eight) =
        (m.splat(0.5)?, m.splat(2.0)?, m.splat(32.0)?, m.splat(8.0)?);
    let near_arg = {
        let halved = m.op("stablehlo.multiply", &[half, x])?;
        m.op("stablehlo.subtract", &[halved, two])?
    };
    let near = series(&mut m, near_arg, a)?;
    let far_arg = {
        let q = m.op("stablehlo.divide", &[thirty_two, x])?;
        m.op("stablehlo.subtract", &[q, two])?
    };
    let far_series = series(&mut m, far_arg, b)?;
    let root = m.op("stablehlo.sqrt", &[x])?;
    let far = m.op("stablehlo.divide", &[far_series, root])?;
    let predicate = wide.with_dtype(DType::Bool);
    let is_near = m.e.op(
        "stablehlo.compare",
        &[x, eight],
        &[&predicate],
        &[
            (
                "comparison_direction",
                "#stablehlo<comparison_direction LE>".into(),
            ),
            ("compare_type", "#stablehlo<comparison_type FLOAT>".into()),
        ],
        loc,
    )?[0];
    let out = m.op("stablehlo.select", &[is_near, near, far])?;
    if wide.dtype == in_aval.dtype {
        Ok(out)
    } else {
        Ok(e.op("stablehlo.convert", &[out], &[in_aval], &[], loc)?[0])
    }
}

/// Cephes' `chbevl`: ½ (b₀ - b₂) of Clenshaw's recurrence.
fn series<'c, 'a>(
    m: &mut Arith<'_, 'c, 'a>,
    x: Value<'c, 'a>,
    coefficients: &[f64],
) -> Result<Value<'c, 'a>, LowerError> {
    let mut b0 = m.splat(0.0)?;
    let mut b1 = m.splat(0.0)?;
    let mut b2 = m.splat(0.0)?;
    for &c in coefficients {
        b2 = b1;
        b1 = b0;
        let xb1 = m.op("stablehlo.multiply", &[x, b1])?;
        let d = m.op("stablehlo.subtract", &[xb1, b2])?;
        let c = m.splat(c)?;
        b0 = m.op("stablehlo.add", &[d, c])?;
    }
    let half = m.splat(0.5)?;
    let diff = m.op("stablehlo.subtract", &[b0, b2])?;
    m.op("stablehlo.multiply", &[half, diff])
}
