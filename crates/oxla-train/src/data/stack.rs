//! Stacking records into a batch of host arrays (Grain's `Batch`, which
//! `np.stack`s each leaf), and moving a batch to the device.

use oxla::{Array, DType, Element};
use oxla_npy::HostArray;

/// A record that stacks with others of its kind into a batch: scalars
/// become `[batch]` arrays, `Vec`s of one length `[batch, len]`, host
/// arrays of one shape `[batch, ...]`, and tuples stack field by field.
pub trait Stack: Sized {
    /// A batch of these records.
    type Batch;

    /// Stacks `records` (at least one); an error says what differs.
    fn stack(records: Vec<Self>) -> Result<Self::Batch, String>;
}

/// A `dtype` array of `dims` over `bytes`.
fn host(dtype: DType, dims: Vec<i64>, bytes: Vec<u8>) -> HostArray {
    HostArray::new(dtype.into(), dims, bytes)
}

/// The little-endian bytes of `values`.
fn bytes_of<T: Element>(values: &[T]) -> Vec<u8> {
    T::as_bytes(values).to_vec()
}

macro_rules! stack_scalars {
    ($($t:ty),*) => {$(
        impl Stack for $t {
            type Batch = HostArray;

            fn stack(records: Vec<$t>) -> Result<HostArray, String> {
                let dims = vec![records.len() as i64];
                Ok(host(<$t as Element>::DTYPE, dims, bytes_of(&records)))
            }
        }
    )*};
}

stack_scalars!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl<T: Element> Stack for Vec<T> {
    type Batch = HostArray;

    fn stack(records: Vec<Vec<T>>) -> Result<HostArray, String> {
        let len = records.first().map_or(0, Vec::len);
        if let Some((i, r)) = records.iter().enumerate().find(|(_, r)| r.len() != len) {
            return Err(format!(
                "record 0 of the batch has {len} elements, record {i} has {}",
                r.len()
            ));
        }
        let flat: Vec<T> = records.concat();
        let dims = vec![records.len() as i64, len as i64];
        Ok(host(T::DTYPE, dims, bytes_of(&flat)))
    }
}

impl Stack for HostArray {
    type Batch = HostArray;

    fn stack(records: Vec<HostArray>) -> Result<HostArray, String> {
        let first = records
            .first()
            .ok_or_else(|| "no records to stack".to_string())?;
        let (kind, dims) = (first.npy_type, first.dims.clone());
        if let Some((i, r)) = records
            .iter()
            .enumerate()
            .find(|(_, r)| r.npy_type != kind || r.dims != dims)
        {
            return Err(format!(
                "record 0 of the batch is {:?}{dims:?}, record {i} is {:?}{:?}",
                kind, r.npy_type, r.dims
            ));
        }
        let mut all = vec![records.len() as i64];
        all.extend(&dims);
        let bytes = records
            .iter()
            .flat_map(|r| r.bytes.iter().copied())
            .collect();
        Ok(HostArray {
            npy_type: kind,
            dims: all,
            bytes,
        })
    }
}

macro_rules! stack_tuples {
    ($(($($name:ident $v:ident $i:tt),+))*) => {$(
        impl<$($name: Stack),+> Stack for ($($name,)+) {
            type Batch = ($($name::Batch,)+);

            fn stack(records: Vec<Self>) -> Result<Self::Batch, String> {
                $(let mut $v = Vec::with_capacity(records.len());)+
                for record in records {
                    $($v.push(record.$i);)+
                }
                Ok(($($name::stack($v).map_err(|e| format!("field {}: {e}", $i))?,)+))
            }
        }
    )*};
}

stack_tuples! {
    (A a 0)
    (A a 0, B b 1)
    (A a 0, B b 1, C c 2)
    (A a 0, B b 1, C c 2, D d 3)
}

/// A batch of host arrays that can move to the device: host arrays
/// become [`Array`]s (through `Array::from_bytes`, as `Array::from_npy`
/// does), tuples field by field.
pub trait ToDevice {
    /// The batch on the device.
    type Device;

    /// Copies the batch to the default device.
    fn to_device(self) -> oxla::Result<Self::Device>;
}

impl ToDevice for HostArray {
    type Device = Array;

    fn to_device(self) -> oxla::Result<Array> {
        Array::from_bytes(DType::from(self.element_type()), &self.dims, &self.bytes)
    }
}

macro_rules! device_tuples {
    ($(($($name:ident $i:tt),+))*) => {$(
        impl<$($name: ToDevice),+> ToDevice for ($($name,)+) {
            type Device = ($($name::Device,)+);

            fn to_device(self) -> oxla::Result<Self::Device> {
                Ok(($(self.$i.to_device()?,)+))
            }
        }
    )*};
}

device_tuples! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
}
