//! How an SPMD executable splits each parameter and output over its
//! partitions, read from the partitioned program (`OpSharding` of XLA), and
//! which block of the global array each partition holds.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::proto::{self, op_sharding::Type as ShardingType};

/// The sharding of one array over the partitions of an executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HloSharding {
    /// Every partition holds the whole array.
    Replicated,
    /// One partition holds the whole array.
    Maximal {
        /// The partition that holds it.
        device: i64,
    },
    /// The array is cut into tiles; `tile_dims[i]` tiles along dimension
    /// `i` (plus trailing dims over which tiles are replicated or manual),
    /// `devices` lists the partition of each tile position, row-major.
    Tiled {
        /// Tiles per array dimension, then the extra (replication) dims.
        tile_dims: Vec<i64>,
        /// The partition at each position of the tile grid, row-major.
        devices: Vec<i64>,
        /// How many leading entries of `tile_dims` are array dimensions.
        array_rank: usize,
    },
    /// The program handles the split itself (manual sharding).
    Manual,
}

impl HloSharding {
    /// The shardings of a (possibly tuple) `OpSharding`, one per leaf.
    pub fn from_proto_leaves(p: &proto::OpSharding) -> Result<Vec<HloSharding>> {
        match p.r#type() {
            ShardingType::Tuple => p.tuple_shardings.iter().map(Self::from_proto).collect(),
            _ => Ok(vec![Self::from_proto(p)?]),
        }
    }

    /// The sharding of one array.
    pub fn from_proto(p: &proto::OpSharding) -> Result<HloSharding> {
        match p.r#type() {
            ShardingType::Replicated | ShardingType::Unknown => Ok(HloSharding::Replicated),
            ShardingType::Maximal => Ok(HloSharding::Maximal {
                device: p.tile_assignment_devices.first().copied().unwrap_or(0),
            }),
            ShardingType::Manual | ShardingType::Unreduced => Ok(HloSharding::Manual),
            ShardingType::Tuple => Err(Error::Protocol(
                "a tuple sharding where an array sharding was expected".into(),
            )),
            ShardingType::Other => {
                let tile_dims = p.tile_assignment_dimensions.clone();
                let count: i64 = tile_dims.iter().product();
                let devices = if !p.tile_assignment_devices.is_empty() {
                    p.tile_assignment_devices.clone()
                } else {
                    iota_devices(&p.iota_reshape_dims, &p.iota_transpose_perm)?
                };
                if devices.len() as i64 != count {
                    return Err(Error::Protocol(format!(
                        "sharding tiles {tile_dims:?} but lists {} devices",
                        devices.len()
                    )));
                }
                let extra = usize::from(p.replicate_on_last_tile_dim) + p.last_tile_dims.len();
                let array_rank = tile_dims.len().checked_sub(extra).ok_or_else(|| {
                    Error::Protocol(format!("sharding tiles {tile_dims:?} has too few dims"))
                })?;
                Ok(HloSharding::Tiled {
                    tile_dims,
                    devices,
                    array_rank,
                })
            }
        }
    }

    /// The shape of the block each partition holds of an array of `dims`
    /// (tiles are `ceil(dim / tiles)` long; the last one may be padded).
    pub fn shard_dims(&self, dims: &[i64]) -> Result<Vec<i64>> {
        match self {
            HloSharding::Replicated | HloSharding::Maximal { .. } => Ok(dims.to_vec()),
            HloSharding::Manual => Err(Error::InvalidArgument(
                "manually sharded arrays have no global shape".into(),
            )),
            HloSharding::Tiled {
                tile_dims,
                array_rank,
                ..
            } => {
                check_rank(*array_rank, dims)?;
                Ok(dims
                    .iter()
                    .zip(tile_dims)
                    .map(|(&d, &t)| (d + t - 1) / t)
                    .collect())
            }
        }
    }

    /// The block of an array of `dims` that `partition` holds: one range per
    /// dimension (ending at the array's edge), or `None` if it holds none.
    pub fn block(&self, partition: i64, dims: &[i64]) -> Result<Option<Vec<Range<i64>>>> {
        match self {
            HloSharding::Replicated => Ok(Some(dims.iter().map(|&d| 0..d).collect())),
            HloSharding::Maximal { device } => {
                Ok((*device == partition).then(|| dims.iter().map(|&d| 0..d).collect()))
            }
            HloSharding::Manual => Err(Error::InvalidArgument(
                "manually sharded arrays have no global shape".into(),
            )),
            HloSharding::Tiled {
                tile_dims,
                devices,
                array_rank,
            } => {
                check_rank(*array_rank, dims)?;
                let Some(position) = devices.iter().position(|&d| d == partition) else {
                    return Ok(None);
                };
                let mut index = vec![0i64; tile_dims.len()];
                let mut rest = position as i64;
                for axis in (0..tile_dims.len()).rev() {
                    index[axis] = rest % tile_dims[axis];
                    rest /= tile_dims[axis];
                }
                let shard = self.shard_dims(dims)?;
                Ok(Some(
                    (0..dims.len())
                        .map(|i| {
                            let start = (index[i] * shard[i]).min(dims[i]);
                            start..(start + shard[i]).min(dims[i])
                        })
                        .collect(),
                ))
            }
        }
    }
}

fn check_rank(array_rank: usize, dims: &[i64]) -> Result<()> {
    if array_rank != dims.len() {
        return Err(Error::InvalidArgument(format!(
            "a sharding over {array_rank} dimensions applied to an array of shape {dims:?}"
        )));
    }
    Ok(())
}

/// The devices of an iota tile assignment: `iota(prod(reshape))` reshaped to
/// `reshape`, transposed by `perm`, flattened row-major.
fn iota_devices(reshape: &[i64], perm: &[i32]) -> Result<Vec<i64>> {
    let rank = reshape.len();
    if perm.len() != rank || reshape.iter().any(|&d| d <= 0) {
        return Err(Error::Protocol(format!(
            "malformed iota tile assignment {reshape:?} / {perm:?}"
        )));
    }
    let perm: Vec<usize> = perm.iter().map(|&p| p as usize).collect();
    if perm.iter().any(|&p| p >= rank) {
        return Err(Error::Protocol(format!(
            "malformed iota permutation {perm:?}"
        )));
    }
    // Strides of the reshaped (untransposed) iota.
    let mut strides = vec![1i64; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * reshape[i + 1];
    }
    let out_dims: Vec<i64> = perm.iter().map(|&p| reshape[p]).collect();
    let total: i64 = reshape.iter().product();
    let mut index = vec![0i64; rank];
    let mut devices = Vec::with_capacity(total as usize);
    for _ in 0..total {
        devices.push(index.iter().zip(&perm).map(|(&i, &p)| i * strides[p]).sum());
        for axis in (0..rank).rev() {
            index[axis] += 1;
            if index[axis] < out_dims[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    Ok(devices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_split_rows_and_columns_over_a_2x2_grid() {
        let s = HloSharding::Tiled {
            tile_dims: vec![2, 2],
            devices: vec![0, 1, 2, 3],
            array_rank: 2,
        };
        assert_eq!(s.shard_dims(&[8, 4]).unwrap(), vec![4, 2]);
        assert_eq!(s.block(3, &[8, 4]).unwrap(), Some(vec![4..8, 2..4]));
        assert_eq!(s.block(1, &[8, 4]).unwrap(), Some(vec![0..4, 2..4]));
        assert_eq!(s.block(9, &[8, 4]).unwrap(), None);
    }

    #[test]
    fn replication_over_a_last_tile_dim_gives_each_pair_the_same_block() {
        // {devices=[2,1,2]<=[4] last_tile_dim_replicate}
        let p = proto::OpSharding {
            r#type: ShardingType::Other as i32,
            tile_assignment_dimensions: vec![2, 1, 2],
            iota_reshape_dims: vec![4],
            iota_transpose_perm: vec![0],
            replicate_on_last_tile_dim: true,
            ..Default::default()
        };
        let s = HloSharding::from_proto(&p).unwrap();
        assert_eq!(s.block(0, &[6, 3]).unwrap(), s.block(1, &[6, 3]).unwrap());
        assert_eq!(s.block(2, &[6, 3]).unwrap(), Some(vec![3..6, 0..3]));
    }

    #[test]
    fn iota_with_transpose_lists_devices_column_major() {
        // [2,2]<=[2,2]T(1,0) is devices 0,2,1,3.
        assert_eq!(iota_devices(&[2, 2], &[1, 0]).unwrap(), vec![0, 2, 1, 3]);
        assert_eq!(iota_devices(&[4], &[0]).unwrap(), vec![0, 1, 2, 3]);
        assert!(iota_devices(&[2], &[5]).is_err());
    }

    #[test]
    fn uneven_tiles_are_padded_at_the_end() {
        let s = HloSharding::Tiled {
            tile_dims: vec![2],
            devices: vec![0, 1],
            array_rank: 1,
        };
        assert_eq!(s.shard_dims(&[5]).unwrap(), vec![3]);
        let block = s.block(1, &[5]).unwrap().unwrap();
        assert_eq!((block.len(), block[0].clone()), (1, 3..5));
    }
}
