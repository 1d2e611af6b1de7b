//! Comparing oxla's arrays with JAX's: integers and bools bit for bit, one
//! float primitive within units in the last place (ulps) of its dtype, and a
//! chain of float ops within a multiple of the dtype's machine epsilon whose
//! reason the caller states next to the number.

use oxla_npy::HostArray;
use oxla_pjrt::ElementType;

/// How closely oxla's result must match JAX's. Integers and bools always
/// match bit for bit; the variants say how floats may differ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// One float primitive: within this many units in the last place of the
    /// dtype (0 is bit for bit). Ordered by their bit patterns, so `+0` and
    /// `-0` are equal and the largest finite value is one ulp from infinity.
    Ulps(u32),
    /// A chain of float ops that XLA builds may round in another order
    /// (reassociated sums, fused intermediates kept wider):
    /// `|oxla - jax| <= eps * (relative * |jax| + absolute * max|jax|)` per
    /// element, with `eps` the dtype's machine epsilon and `max|jax|` the
    /// largest finite magnitude of JAX's array (1 if it has none). `reason`
    /// says why the chain needs that much.
    Chain {
        /// Multiple of epsilon relative to each expected element.
        relative: f64,
        /// Multiple of epsilon relative to the array's largest magnitude
        /// (cancellation in a sum loses digits of its largest terms).
        absolute: f64,
        /// Why this chain may differ this much.
        reason: &'static str,
    },
}

impl Tolerance {
    /// What one primitive must meet: within one ulp of JAX's (libm-style
    /// functions may round their last bit differently between XLA builds).
    pub const SINGLE_OP: Tolerance = Tolerance::Ulps(1);

    /// One whole program (a jax.export, a lowered JAX function) compiled by
    /// the plugin's XLA and by jaxlib's: the same StableHLO, fused and
    /// ordered by two XLA builds.
    pub const OTHER_XLA_BUILD: Tolerance = Tolerance::chain(
        84.0,
        16.0,
        "one program compiled by two XLA builds, which fuse and order its dots and reductions differently",
    );

    /// f32 contractions (dots, convolutions) at the default precision on
    /// a GPU, compared across programs: 2 ulps of TensorFloat-32's 10-bit
    /// mantissa, in f32 epsilons. See [`contraction_tolerance`].
    pub const TENSOR_FLOAT_32: Tolerance = Tolerance::chain(
        16384.0,
        16384.0,
        "f32 dots and convolutions at the default precision run in TensorFloat-32 on GPUs, and \
         two programs (oxla's and JAX's, or the same dot in another program) may get kernels that \
         round differently (seen on an H200: JAX's jvp of matmul differs from its plain matmul by \
         8e-4)",
    );

    /// A [`Tolerance::Chain`].
    pub const fn chain(relative: f64, absolute: f64, reason: &'static str) -> Tolerance {
        Tolerance::Chain {
            relative,
            absolute,
            reason,
        }
    }
}

/// The machine epsilon of a float dtype (complex: of its parts); `None` for
/// integers and bools.
pub fn epsilon(element_type: ElementType) -> Option<f64> {
    match element_type {
        ElementType::F16 => Some(f64::from(half::f16::EPSILON)),
        ElementType::Bf16 => Some(f64::from(half::bf16::EPSILON)),
        ElementType::F32 | ElementType::C64 => Some(f64::from(f32::EPSILON)),
        ElementType::F64 | ElementType::C128 => Some(f64::EPSILON),
        ElementType::Pred
        | ElementType::S8
        | ElementType::S16
        | ElementType::S32
        | ElementType::S64
        | ElementType::U8
        | ElementType::U16
        | ElementType::U32
        | ElementType::U64 => None,
    }
}

/// How the elements of one dtype are read for comparison.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// A signed integer of this many bytes.
    Signed(usize),
    /// An unsigned integer (or bool) of this many bytes.
    Unsigned(usize),
    /// A float of this many bytes (complex numbers: their parts).
    Float(usize),
}

fn layout(element_type: ElementType) -> Layout {
    match element_type {
        ElementType::S8 => Layout::Signed(1),
        ElementType::S16 => Layout::Signed(2),
        ElementType::S32 => Layout::Signed(4),
        ElementType::S64 => Layout::Signed(8),
        ElementType::Pred | ElementType::U8 => Layout::Unsigned(1),
        ElementType::U16 => Layout::Unsigned(2),
        ElementType::U32 => Layout::Unsigned(4),
        ElementType::U64 => Layout::Unsigned(8),
        ElementType::F16 | ElementType::Bf16 => Layout::Float(2),
        ElementType::F32 | ElementType::C64 => Layout::Float(4),
        ElementType::F64 | ElementType::C128 => Layout::Float(8),
    }
}

fn little_endian(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

fn signed(bytes: &[u8]) -> i64 {
    let shift = 64 - 8 * bytes.len() as u32;
    ((little_endian(bytes) << shift) as i64) >> shift
}

/// A float's bits as a key ordered like its value (`+0 == -0`).
fn ordered_key(bits: u64, width: usize) -> i128 {
    let sign = 1u64 << (8 * width - 1);
    let magnitude = i128::from(bits & !sign);
    if bits & sign != 0 {
        -magnitude
    } else {
        magnitude
    }
}

fn float_value(bytes: &[u8], element_type: ElementType) -> f64 {
    let bits = little_endian(bytes);
    match bytes.len() {
        2 if element_type == ElementType::Bf16 => half::bf16::from_bits(bits as u16).to_f64(),
        2 => half::f16::from_bits(bits as u16).to_f64(),
        4 => f64::from(f32::from_bits(bits as u32)),
        _ => f64::from_bits(bits),
    }
}

/// One element that differs more than allowed.
struct Mismatch {
    index: usize,
    got: String,
    want: String,
    ulps: Option<i128>,
}

/// How far apart oxla's and JAX's arrays are, for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Distance {
    /// The largest distance in ulps between float elements.
    pub max_ulps: u128,
    /// The largest `|oxla - jax|` in units of `eps * max(|jax|, max|jax| * 1e-3)`.
    pub max_epsilons: f64,
}

/// Whether `got` (oxla's) matches `want` (JAX's) within `tolerance`: the
/// same dtype and shape, then every element; `Err` says how it does not.
pub fn compare(
    got: &HostArray,
    want: &HostArray,
    tolerance: Tolerance,
) -> Result<Distance, String> {
    let element_type = want.element_type();
    if got.element_type() != element_type {
        return Err(format!(
            "dtype {:?}, JAX's is {element_type:?}",
            got.element_type()
        ));
    }
    if got.dims != want.dims {
        return Err(format!("shape {:?}, JAX's is {:?}", got.dims, want.dims));
    }
    if got.bytes.len() != want.bytes.len() {
        return Err(format!(
            "{} bytes, JAX's array has {}",
            got.bytes.len(),
            want.bytes.len()
        ));
    }
    let layout = layout(element_type);
    let width = match layout {
        Layout::Signed(w) | Layout::Unsigned(w) | Layout::Float(w) => w,
    };
    let pairs = got
        .bytes
        .chunks_exact(width)
        .zip(want.bytes.chunks_exact(width));
    let mut mismatches = Vec::new();
    let mut distance = Distance::default();
    match layout {
        Layout::Signed(_) | Layout::Unsigned(_) => {
            for (index, (g, w)) in pairs.enumerate() {
                if g != w {
                    let show = |b: &[u8]| match layout {
                        Layout::Signed(_) => signed(b).to_string(),
                        _ => little_endian(b).to_string(),
                    };
                    mismatches.push(Mismatch {
                        index,
                        got: show(g),
                        want: show(w),
                        ulps: None,
                    });
                }
            }
        }
        Layout::Float(_) => {
            let eps = epsilon(element_type).expect("a float dtype has an epsilon");
            let wants: Vec<f64> = want
                .bytes
                .chunks_exact(width)
                .map(|w| float_value(w, element_type))
                .collect();
            let largest = wants
                .iter()
                .filter(|w| w.is_finite())
                .fold(0.0f64, |m, w| m.max(w.abs()));
            let scale = if largest > 0.0 { largest } else { 1.0 };
            for (index, (g, w)) in pairs.enumerate() {
                let (gv, wv) = (float_value(g, element_type), wants[index]);
                if gv.is_nan() || wv.is_nan() {
                    if gv.is_nan() != wv.is_nan() {
                        mismatches.push(Mismatch {
                            index,
                            got: gv.to_string(),
                            want: wv.to_string(),
                            ulps: None,
                        });
                    }
                    continue;
                }
                let ulps = (ordered_key(little_endian(g), width)
                    - ordered_key(little_endian(w), width))
                .abs();
                distance.max_ulps = distance.max_ulps.max(ulps as u128);
                let error = (gv - wv).abs();
                if error.is_finite() {
                    let unit = eps * wv.abs().max(scale * 1e-3);
                    distance.max_epsilons = distance.max_epsilons.max(error / unit);
                }
                let ok = match tolerance {
                    Tolerance::Ulps(max) => ulps <= i128::from(max),
                    Tolerance::Chain {
                        relative, absolute, ..
                    } => ulps <= 1 || error <= eps * (relative * wv.abs() + absolute * scale),
                };
                if !ok {
                    mismatches.push(Mismatch {
                        index,
                        got: gv.to_string(),
                        want: wv.to_string(),
                        ulps: Some(ulps),
                    });
                }
            }
        }
    }
    if mismatches.is_empty() {
        return Ok(distance);
    }
    let shown: Vec<String> = mismatches
        .iter()
        .take(5)
        .map(|m| match m.ulps {
            Some(u) => format!(
                "element {}: oxla {}, jax {} ({u} ulps)",
                m.index, m.got, m.want
            ),
            None => format!("element {}: oxla {}, jax {}", m.index, m.got, m.want),
        })
        .collect();
    let allowed = match tolerance {
        Tolerance::Ulps(u) if layout_is_float(layout) => format!("{u} ulps"),
        Tolerance::Chain {
            relative,
            absolute,
            reason,
        } if layout_is_float(layout) => {
            format!("{relative} eps relative + {absolute} eps of the largest ({reason})")
        }
        Tolerance::Ulps(_) | Tolerance::Chain { .. } => "bit for bit".to_string(),
    };
    Err(format!(
        "{} of {} elements differ more than {allowed}: {}",
        mismatches.len(),
        want.len(),
        shown.join("; ")
    ))
}

fn layout_is_float(layout: Layout) -> bool {
    matches!(layout, Layout::Float(_))
}

/// Asserts [`compare`]`(got, want, tolerance)`, naming `what`. With
/// `OXLA_TEST_REPORT_DISTANCE` set, prints the distance found (to choose a
/// chain's numbers from measurements).
pub fn assert_matches_jax(got: &HostArray, want: &HostArray, tolerance: Tolerance, what: &str) {
    match compare(got, want, tolerance) {
        Ok(distance) => {
            if std::env::var_os("OXLA_TEST_REPORT_DISTANCE").is_some() {
                eprintln!(
                    "distance {what} ({:?}): {} ulps, {:.1} eps",
                    want.element_type(),
                    distance.max_ulps,
                    distance.max_epsilons
                );
            }
        }
        Err(why) => panic!("{what}: {why}"),
    }
}

/// How closely f32 contractions (dots, convolutions) of two programs
/// agree on oxla's test platform: `cpu` on the CPU, where they run in
/// f32; [`Tolerance::TENSOR_FLOAT_32`] elsewhere.
pub fn contraction_tolerance(cpu: Tolerance) -> Tolerance {
    match crate::platform() {
        oxla_pjrt::Platform::Cpu => cpu,
        oxla_pjrt::Platform::Cuda | oxla_pjrt::Platform::Rocm | oxla_pjrt::Platform::Tpu => {
            Tolerance::TENSOR_FLOAT_32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> HostArray {
        HostArray::new(ElementType::F32, vec![v.len() as i64], f32_bytes(v))
    }

    fn f32_bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn i64s(v: &[i64]) -> HostArray {
        HostArray::new(
            ElementType::S64,
            vec![v.len() as i64],
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        )
    }

    fn f16s(v: &[f32]) -> HostArray {
        HostArray::new(
            ElementType::F16,
            vec![v.len() as i64],
            v.iter()
                .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
                .collect(),
        )
    }

    #[test]
    fn one_ulp_passes_and_two_fail() {
        let one = 1.0f32;
        let up1 = f32::from_bits(one.to_bits() + 1);
        let up2 = f32::from_bits(one.to_bits() + 2);
        assert!(compare(&f32s(&[up1]), &f32s(&[one]), Tolerance::SINGLE_OP).is_ok());
        let err = compare(&f32s(&[up2]), &f32s(&[one]), Tolerance::SINGLE_OP).unwrap_err();
        assert!(err.contains("2 ulps") && err.contains("element 0"), "{err}");
        assert!(compare(&f32s(&[up1]), &f32s(&[one]), Tolerance::Ulps(0)).is_err());
    }

    #[test]
    fn signed_zeros_are_equal_and_nans_match_only_nans() {
        assert!(compare(&f32s(&[-0.0]), &f32s(&[0.0]), Tolerance::Ulps(0)).is_ok());
        assert!(compare(&f32s(&[f32::NAN]), &f32s(&[f32::NAN]), Tolerance::Ulps(0)).is_ok());
        assert!(compare(&f32s(&[f32::NAN]), &f32s(&[1.0]), Tolerance::SINGLE_OP).is_err());
        let tiny = f32::from_bits(1);
        assert!(compare(&f32s(&[tiny]), &f32s(&[-tiny]), Tolerance::SINGLE_OP).is_err());
    }

    #[test]
    fn a_16_bit_conversion_off_by_a_fraction_fails() {
        // The old rule (1/32 of the largest magnitude) let 20 + 0.625 pass.
        let err = compare(&f16s(&[20.625]), &f16s(&[20.0]), Tolerance::SINGLE_OP).unwrap_err();
        assert!(err.contains("ulps"), "{err}");
    }

    #[test]
    fn large_integers_compare_exactly() {
        // Equal through f64, different as i64.
        let a = (1i64 << 60) + 1;
        let b = 1i64 << 60;
        assert_eq!(a as f64, b as f64);
        let err = compare(&i64s(&[a]), &i64s(&[b]), Tolerance::SINGLE_OP).unwrap_err();
        assert!(
            err.contains(&a.to_string()) && err.contains("bit for bit"),
            "{err}"
        );
        assert!(compare(&i64s(&[-5, a]), &i64s(&[-5, a]), Tolerance::SINGLE_OP).is_ok());
    }

    #[test]
    fn a_chain_allows_its_epsilons_and_says_why_when_it_fails() {
        let want = f32s(&[1.0, 100.0]);
        let near = f32s(&[1.0 + 4.0 * f32::EPSILON, 100.0]);
        let chain = Tolerance::chain(8.0, 0.0, "a test's reason");
        assert!(compare(&near, &want, chain).is_ok());
        let far = f32s(&[1.0 + 64.0 * f32::EPSILON, 100.0]);
        let err = compare(&far, &want, chain).unwrap_err();
        assert!(err.contains("a test's reason"), "{err}");
        // The absolute part scales with the largest magnitude.
        let loose = Tolerance::chain(0.0, 1.0, "cancellation");
        assert!(compare(&far, &want, loose).is_ok());
    }

    #[test]
    fn dtype_and_shape_must_agree() {
        assert!(
            compare(&f32s(&[1.0]), &f16s(&[1.0]), Tolerance::SINGLE_OP)
                .unwrap_err()
                .contains("dtype")
        );
        assert!(
            compare(&f32s(&[1.0, 2.0]), &f32s(&[1.0]), Tolerance::SINGLE_OP)
                .unwrap_err()
                .contains("shape")
        );
    }
}
