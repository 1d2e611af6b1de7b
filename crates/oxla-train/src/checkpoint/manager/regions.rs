//! Assembling a block of an array on the host from the saved blocks that
//! overlap it: how a checkpoint saved on one mesh restores onto another.

use std::ops::Range;

/// A saved block: which elements of the whole array it holds (a range per
/// dimension) and their row-major bytes.
pub(super) struct Block<'a> {
    pub index: &'a [Range<i64>],
    pub bytes: &'a [u8],
}

/// The bytes of the region `target` (a range per dimension) of an array,
/// copied from the `blocks` that overlap it; `element_size` bytes per
/// element. `None` when the blocks leave some element of the region
/// uncovered (the blocks of one array never overlap: they are a sharding's
/// distinct tiles).
pub(super) fn assemble(
    target: &[Range<i64>],
    blocks: &[Block<'_>],
    element_size: usize,
) -> Option<Vec<u8>> {
    let target_dims: Vec<i64> = target.iter().map(|r| r.end - r.start).collect();
    let elements: i64 = target_dims.iter().product();
    let mut out = vec![0u8; elements as usize * element_size];
    let mut covered = 0i64;
    for block in blocks {
        let Some(overlap) = intersect(target, block.index) else {
            continue;
        };
        covered += overlap.iter().map(|r| r.end - r.start).product::<i64>();
        let block_dims: Vec<i64> = block.index.iter().map(|r| r.end - r.start).collect();
        copy_overlap(
            &overlap,
            (block.bytes, block.index, &block_dims),
            (&mut out, target, &target_dims),
            element_size,
        );
    }
    (covered == elements).then_some(out)
}

/// The elements both regions hold; `None` when they share none.
fn intersect(a: &[Range<i64>], b: &[Range<i64>]) -> Option<Vec<Range<i64>>> {
    let overlap: Vec<Range<i64>> = a
        .iter()
        .zip(b)
        .map(|(a, b)| a.start.max(b.start)..a.end.min(b.end))
        .collect();
    // For a rank-0 array both regions are the one element.
    overlap.iter().all(|r| r.start < r.end).then_some(overlap)
}

/// The row-major offset, in elements, of global position `at` within a
/// region that starts at `origin` and has `dims`.
fn offset(at: &[i64], origin: &[Range<i64>], dims: &[i64]) -> i64 {
    at.iter()
        .zip(origin)
        .zip(dims)
        .fold(0, |acc, ((&i, r), &d)| acc * d + (i - r.start))
}

/// Copies `overlap` from a source region to a destination region, one
/// contiguous run of the last dimension at a time.
fn copy_overlap(
    overlap: &[Range<i64>],
    (src, src_index, src_dims): (&[u8], &[Range<i64>], &[i64]),
    (dst, dst_index, dst_dims): (&mut [u8], &[Range<i64>], &[i64]),
    element_size: usize,
) {
    let rank = overlap.len();
    if rank == 0 {
        dst[..element_size].copy_from_slice(&src[..element_size]);
        return;
    }
    let run = (overlap[rank - 1].end - overlap[rank - 1].start) as usize * element_size;
    let mut at: Vec<i64> = overlap.iter().map(|r| r.start).collect();
    loop {
        let s = offset(&at, src_index, src_dims) as usize * element_size;
        let d = offset(&at, dst_index, dst_dims) as usize * element_size;
        dst[d..d + run].copy_from_slice(&src[s..s + run]);
        // The next position of the leading dimensions (odometer order).
        let mut dim = rank - 1;
        loop {
            if dim == 0 {
                return;
            }
            dim -= 1;
            at[dim] += 1;
            if at[dim] < overlap[dim].end {
                break;
            }
            at[dim] = overlap[dim].start;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4×6 array of bytes 0..24 cut into four 2×3 tiles, then any region
    /// assembled from the tiles equals the same region cut from the whole.
    #[test]
    fn regions_assemble_from_tiles_as_from_the_whole() {
        let whole: Vec<u8> = (0..24).collect();
        let cut = |r: &[Range<i64>]| -> Vec<u8> {
            let mut v = Vec::new();
            for i in r[0].clone() {
                for j in r[1].clone() {
                    v.push(whole[(i * 6 + j) as usize]);
                }
            }
            v
        };
        let tiles: Vec<Vec<Range<i64>>> = vec![
            vec![0..2, 0..3],
            vec![0..2, 3..6],
            vec![2..4, 0..3],
            vec![2..4, 3..6],
        ];
        let data: Vec<Vec<u8>> = tiles.iter().map(|t| cut(t)).collect();
        let blocks: Vec<Block> = tiles
            .iter()
            .zip(&data)
            .map(|(index, bytes)| Block { index, bytes })
            .collect();
        for target in [
            vec![0..4, 0..6],
            vec![1..3, 2..5],
            vec![0..1, 0..6],
            vec![3..4, 5..6],
            vec![0..4, 4..6],
        ] {
            assert_eq!(
                assemble(&target, &blocks, 1),
                Some(cut(&target)),
                "{target:?}"
            );
        }
        // Three tiles leave a hole.
        assert_eq!(assemble(&[0..4, 0..6], &blocks[..3], 1), None);
    }

    #[test]
    fn scalars_and_multibyte_elements() {
        let bytes = [1u8, 2, 3, 4];
        let blocks = [Block {
            index: &[],
            bytes: &bytes,
        }];
        assert_eq!(assemble(&[], &blocks, 4), Some(bytes.to_vec()));
        let bytes: Vec<u8> = (0..12).collect(); // three u32 elements
        let (whole, tail) = (0..3, 1..3);
        let blocks = [Block {
            index: std::slice::from_ref(&whole),
            bytes: &bytes,
        }];
        let target = std::slice::from_ref(&tail);
        assert_eq!(assemble(target, &blocks, 4), Some((4..12).collect()));
    }
}
