//! Histograms as TensorFlow's `tf.summary.histogram` (v1, the C++
//! `Histogram` class) writes them: TensorFlow's default bucket edges, and
//! runs of empty buckets collapsed into one.

use std::sync::OnceLock;

use oxla::{Array, DType};

use super::Error;
use super::proto::HistogramProto;

/// Values a histogram is made of: an oxla array (any real dtype, read to
/// the host) or a slice of floats.
pub trait HistogramValues {
    /// The values as f64, or the error the array carries.
    fn histogram_values(&self) -> Result<Vec<f64>, Error>;
}

impl HistogramValues for Array {
    fn histogram_values(&self) -> Result<Vec<f64>, Error> {
        let aval = self.aval()?;
        if aval.dtype.is_complex() {
            return Err(Error::InvalidInput(format!(
                "a histogram of a complex array ({aval}); pass its real part or its magnitude"
            )));
        }
        Ok(match aval.dtype {
            DType::F64 => self.to_vec::<f64>()?,
            _ => self
                .astype(DType::F32)
                .to_vec::<f32>()?
                .into_iter()
                .map(f64::from)
                .collect(),
        })
    }
}

impl HistogramValues for [f32] {
    fn histogram_values(&self) -> Result<Vec<f64>, Error> {
        Ok(self.iter().map(|&v| f64::from(v)).collect())
    }
}

impl HistogramValues for [f64] {
    fn histogram_values(&self) -> Result<Vec<f64>, Error> {
        Ok(self.to_vec())
    }
}

impl HistogramValues for Vec<f32> {
    fn histogram_values(&self) -> Result<Vec<f64>, Error> {
        self.as_slice().histogram_values()
    }
}

impl HistogramValues for Vec<f64> {
    fn histogram_values(&self) -> Result<Vec<f64>, Error> {
        self.as_slice().histogram_values()
    }
}

/// TensorFlow's default bucket edges: `±1e-12 · 1.1^k` up to 1e20, `±f64::MAX`
/// at the ends and 0 in the middle (1551 edges).
pub fn default_bucket_limits() -> &'static [f64] {
    static LIMITS: OnceLock<Vec<f64>> = OnceLock::new();
    LIMITS.get_or_init(|| {
        let mut positive = Vec::new();
        let mut v = 1.0e-12;
        while v < 1.0e20 {
            positive.push(v);
            v *= 1.1;
        }
        positive.push(f64::MAX);
        let mut limits: Vec<f64> = positive.iter().rev().map(|v| -v).collect();
        limits.push(0.0);
        limits.extend(positive);
        limits
    })
}

/// The histogram of `values` over `limits` (sorted right edges, the last
/// `f64::MAX`), as TensorFlow encodes it: min, max, count, sum and sum of
/// squares of the values, and the buckets with each run of empty buckets
/// collapsed into one (whose edge is the run's last). `tag` names the
/// histogram in the error for a NaN or infinite value.
pub(crate) fn histogram(
    tag: &str,
    values: &[f64],
    limits: &[f64],
) -> Result<HistogramProto, Error> {
    if let Some(bad) = values.iter().find(|v| !v.is_finite()) {
        return Err(Error::InvalidInput(format!(
            "histogram {tag:?}: a value is {bad}; a histogram's values must be finite"
        )));
    }
    let mut counts = vec![0.0f64; limits.len()];
    let (mut min, mut max) = (f64::MAX, -f64::MAX);
    let (mut sum, mut sum_squares) = (0.0, 0.0);
    for &v in values {
        // The first edge above v, as TensorFlow's std::upper_bound.
        let bucket = limits
            .partition_point(|&edge| edge <= v)
            .min(limits.len() - 1);
        counts[bucket] += 1.0;
        min = min.min(v);
        max = max.max(v);
        sum += v;
        sum_squares += v * v;
    }
    let mut proto = HistogramProto {
        min,
        max,
        num: values.len() as f64,
        sum,
        sum_squares,
        bucket_limit: Vec::new(),
        bucket: Vec::new(),
    };
    let mut i = 0;
    while i < counts.len() {
        let (mut end, mut count) = (limits[i], counts[i]);
        i += 1;
        if count <= 0.0 {
            while i < counts.len() && counts[i] <= 0.0 {
                (end, count) = (limits[i], counts[i]);
                i += 1;
            }
        }
        proto.bucket_limit.push(end);
        proto.bucket.push(count);
    }
    Ok(proto)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_count_each_value_once_and_collapse_empty_runs() {
        let limits = default_bucket_limits();
        assert_eq!(limits.len(), 1551);
        assert_eq!(
            (limits[0], limits[775], limits[1550]),
            (-f64::MAX, 0.0, f64::MAX)
        );
        let h = histogram("h", &[-1.0, 0.0, 0.5, 0.5, 3.0], limits).unwrap();
        assert_eq!(h.bucket.iter().sum::<f64>(), 5.0);
        assert_eq!(
            (h.min, h.max, h.num, h.sum, h.sum_squares),
            (-1.0, 3.0, 5.0, 3.0, 10.5)
        );
        // No two empty buckets in a row, and the last edge is f64::MAX.
        assert!(h.bucket.windows(2).all(|w| w[0] > 0.0 || w[1] > 0.0));
        assert_eq!(*h.bucket_limit.last().unwrap(), f64::MAX);
        assert!(histogram("h", &[f64::NAN], limits).is_err());
    }
}
