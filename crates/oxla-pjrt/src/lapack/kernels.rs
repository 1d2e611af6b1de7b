//! The kernels behind JAX's `lapack_*_ffi` custom calls: for each matrix
//! of the batch (the leading dimensions), the LAPACK routine JAX's CPU
//! lowering names, on the operands and into the results as jaxlib's
//! kernels (`jaxlib/cpu/lapack_kernels.cc`) take and give them. Matrices
//! are column-major (the custom calls' layouts say so), so LAPACK reads
//! them in place; the routine's output operand aliases its input, or
//! starts as a copy of it.

use std::ffi::{c_char, c_void};

use super::library::*;
use crate::element_type::ElementType;
use crate::xla_ffi::BufferView;
use crate::xla_ffi::abi::{Attributes, CallFrame, U8_TYPE};

/// LAPACK's four precisions: `s`, `d`, `c`, `z`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Precision {
    /// f32.
    S,
    /// f64.
    D,
    /// complex64.
    C,
    /// complex128.
    Z,
}

impl Precision {
    /// The precision of `element_type`, or why there is none.
    fn of(element_type: ElementType) -> Result<Self, String> {
        match element_type {
            ElementType::F32 => Ok(Self::S),
            ElementType::F64 => Ok(Self::D),
            ElementType::C64 => Ok(Self::C),
            ElementType::C128 => Ok(Self::Z),
            other => Err(format!("LAPACK has no routines for {other:?} matrices")),
        }
    }

    /// The routines' first letter.
    pub(super) fn letter(self) -> char {
        match self {
            Self::S => 's',
            Self::D => 'd',
            Self::C => 'c',
            Self::Z => 'z',
        }
    }

    /// Every precision.
    pub(super) const ALL: [Precision; 4] = [Self::S, Self::D, Self::C, Self::Z];

    /// Whether its matrices are complex.
    pub(super) fn is_complex(self) -> bool {
        matches!(self, Self::C | Self::Z)
    }

    /// Bytes of one element.
    fn size(self) -> usize {
        match self {
            Self::S => 4,
            Self::D | Self::C => 8,
            Self::Z => 16,
        }
    }

    /// Bytes of one real part.
    fn real_size(self) -> usize {
        match self {
            Self::S | Self::C => 4,
            Self::D | Self::Z => 8,
        }
    }

    /// One, as this precision's bytes.
    fn one(self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        match self {
            Self::S | Self::C => bytes[..4].copy_from_slice(&1f32.to_ne_bytes()),
            Self::D | Self::Z => bytes[..8].copy_from_slice(&1f64.to_ne_bytes()),
        }
        bytes
    }

    /// The real part at `ptr`, which holds one element.
    ///
    /// # Safety
    /// `ptr` points at an element of this precision.
    unsafe fn real_at(self, ptr: *const c_void) -> f64 {
        // SAFETY: per the contract; the workspace is 8-byte aligned.
        unsafe {
            match self {
                Self::S | Self::C => f64::from(ptr.cast::<f32>().read_unaligned()),
                Self::D | Self::Z => ptr.cast::<f64>().read_unaligned(),
            }
        }
    }

    /// The routine `name` of this precision (`getrf` → `sgetrf_`), with
    /// its complex name where LAPACK's differs (`orgqr` → `cungqr_`).
    ///
    /// # Safety
    /// `F` is that routine's function type.
    unsafe fn routine<F: Copy>(
        self,
        lapack: &Lapack,
        real: &str,
        complex: &str,
    ) -> Result<F, String> {
        let name = if self.is_complex() { complex } else { real };
        // SAFETY: per the contract.
        unsafe { lapack.routine(&format!("{}{name}_", self.letter())) }
    }
}

/// A zeroed, 8-byte aligned scratch buffer of at least `bytes` bytes.
struct Scratch(Vec<u64>);

impl Scratch {
    fn new(bytes: usize) -> Self {
        Scratch(vec![0; bytes.div_ceil(8).max(2)])
    }

    fn ptr(&mut self) -> *mut c_void {
        self.0.as_mut_ptr().cast()
    }
}

/// One thread's LAPACK workspaces: `work` (of the routine's precision),
/// `rwork` (real), `iwork`, an `info` for routines whose status is not a
/// result, and matrices of scratch (copies LAPACK overwrites).
struct Workspace {
    work: Scratch,
    rwork: Scratch,
    iwork: Vec<Int>,
    status: Int,
    matrices: Vec<Scratch>,
}

impl Workspace {
    fn new(work_bytes: usize, rwork_bytes: usize, iwork_len: usize, matrices: &[usize]) -> Self {
        Workspace {
            work: Scratch::new(work_bytes),
            rwork: Scratch::new(rwork_bytes),
            iwork: vec![0; iwork_len.max(1)],
            status: 0,
            matrices: matrices.iter().map(|&bytes| Scratch::new(bytes)).collect(),
        }
    }
}

/// Work (in flops) below which a batch runs on the calling thread: a
/// thread's start costs tens of microseconds.
const PARALLEL_WORK: usize = 4_000_000;

/// The cores this process may use, asked once: the standard library reads
/// the cgroup's quota files on every call, which cost a batch of small
/// matrices more than their factorizations.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Work (in flops) of one matrix above which OpenBLAS runs it on all the
/// cores (see `library::ThreadControl`): above the 256×256 problems, where
/// its threads cost more than they gain on two cores, below the 1024×1024
/// ones, where they gain.
const THREADED_WORK: usize = 200_000_000;

/// Runs `body(i, workspace)` for each matrix `i` of a batch of `count`,
/// each with `cost` flops: on the calling thread for a small batch, else
/// in contiguous chunks on up to the machine's cores (each with its own
/// workspace from `workspace`), as jaxlib's `ParallelBatchMap` does with
/// XLA's thread pool. LAPACK runs each matrix single-threaded, so a batch
/// of small matrices uses the cores and does not oversubscribe them,
/// except one matrix of more than `THREADED_WORK`, which gets OpenBLAS's
/// threads.
fn for_each_matrix<W>(
    lapack: &Lapack,
    count: usize,
    cost: usize,
    workspace: impl Fn() -> W + Sync,
    body: impl Fn(usize, &mut W) -> Result<(), String> + Sync,
) -> Result<(), String> {
    let threads = cores().min(count);
    if threads <= 1 || cost.saturating_mul(count) < PARALLEL_WORK {
        let big = count == 1 && cost > THREADED_WORK;
        lapack.use_threads(if big { cores() } else { 1 });
        let mut w = workspace();
        return (0..count).try_for_each(|i| body(i, &mut w));
    }
    lapack.use_threads(1);
    let chunk = count.div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..count)
            .step_by(chunk)
            .map(|start| {
                let (workspace, body) = (&workspace, &body);
                scope.spawn(move || {
                    let mut w = workspace();
                    (start..(start + chunk).min(count)).try_for_each(|i| body(i, &mut w))
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .map_err(|_| "a LAPACK batch thread panicked".to_string())?
        })
    })
}

/// A call's operands, results and attributes.
pub(super) struct Call<'f> {
    pub(super) args: Vec<BufferView<'f>>,
    pub(super) rets: Vec<BufferView<'f>>,
    pub(super) attrs: &'f Attributes,
}

impl<'f> Call<'f> {
    /// Reads the call from XLA's frame.
    ///
    /// # Safety
    /// `frame` is a call frame XLA passed for execution.
    pub(super) unsafe fn of(frame: &'f CallFrame) -> Result<Self, String> {
        // SAFETY: per the contract.
        unsafe {
            Ok(Call {
                args: crate::xla_ffi::buffers(&frame.args)?,
                rets: crate::xla_ffi::buffers(&frame.rets)?,
                attrs: &frame.attrs,
            })
        }
    }

    fn arg(&self, i: usize) -> Result<&BufferView<'f>, String> {
        self.args
            .get(i)
            .ok_or_else(|| format!("operand {i} is missing ({} given)", self.args.len()))
    }

    fn ret(&self, i: usize) -> Result<&BufferView<'f>, String> {
        self.rets
            .get(i)
            .ok_or_else(|| format!("result {i} is missing ({} given)", self.rets.len()))
    }

    /// The one-character attribute `name` (JAX's enums: `uplo`, `mode`...).
    fn char_attribute(&self, name: &str) -> Result<c_char, String> {
        // SAFETY: `attrs` is the frame's table.
        match unsafe { crate::xla_ffi::scalar_attribute(self.attrs, name) } {
            // SAFETY: a u8 scalar's value is one byte.
            Some((U8_TYPE, value)) => Ok(unsafe { *value.cast::<u8>() } as c_char),
            Some((other, _)) => Err(format!("attribute `{name}` has XLA type {other}, not u8")),
            None => Err(format!("attribute `{name}` is missing")),
        }
    }

    /// The precision of operand 0.
    fn precision(&self) -> Result<Precision, String> {
        Precision::of(self.arg(0)?.element_type)
    }
}

/// The batch of a `[..., rows, cols]` buffer: (matrices, rows, cols).
fn batch(view: &BufferView<'_>) -> Result<(usize, usize, usize), String> {
    let dims = view.dims;
    if dims.len() < 2 {
        return Err(format!(
            "a matrix operand of rank {} (at least 2 needed)",
            dims.len()
        ));
    }
    let size = |d: &i64| usize::try_from(*d).map_err(|_| "a negative dimension".to_string());
    let count = dims[..dims.len() - 2]
        .iter()
        .map(size)
        .product::<Result<usize, String>>()?;
    Ok((
        count,
        size(&dims[dims.len() - 2])?,
        size(&dims[dims.len() - 1])?,
    ))
}

/// A dimension as LAPACK's integer.
fn int(value: usize) -> Result<Int, String> {
    Int::try_from(value).map_err(|_| format!("dimension {value} exceeds LAPACK's 32-bit integers"))
}

/// Makes `to` hold `from`'s bytes unless XLA aliased them.
fn copy_if_different(from: &BufferView<'_>, to: &BufferView<'_>) {
    if from.data != to.data {
        // SAFETY: both are buffers of this call of `len` bytes (same shape
        // and type), and distinct buffers do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                from.data.cast::<u8>(),
                to.data.cast::<u8>(),
                from.len.min(to.len),
            )
        };
    }
}

/// The `i`th element of `view` at `step` elements of `size` bytes each.
fn at(view: &BufferView<'_>, i: usize, step: usize, size: usize) -> *mut c_void {
    // SAFETY (for callers): `i * step` elements lie inside the buffer.
    view.data.cast::<u8>().wrapping_add(i * step * size).cast()
}

/// The size LAPACK's workspace query left in `work`, at least 1.
///
/// # Safety
/// `work` holds the query's answer in precision `p`.
unsafe fn queried(p: Precision, work: *const c_void) -> usize {
    // SAFETY: per the contract.
    (unsafe { p.real_at(work) }.max(1.0)) as usize
}

/// `?trsm` as `lapack_?trsm_ffi`: operands (a, b), result b solved in
/// place; attributes side, uplo, trans_x, diag; alpha 1.
pub(super) fn trsm(call: &Call<'_>, lapack: &Lapack) -> Result<(), String> {
    let p = call.precision()?;
    let (a, b, out) = (call.arg(0)?, call.arg(1)?, call.ret(0)?);
    copy_if_different(b, out);
    let (count, m, n) = batch(b)?;
    let side = call.char_attribute("side")?;
    let uplo = call.char_attribute("uplo")?;
    let trans = call.char_attribute("trans_x")?;
    let diag = call.char_attribute("diag")?;
    let k = if side == b'L' as c_char { m } else { n };
    let (mi, ni, lda, ldb) = (int(m)?, int(n)?, int(k.max(1))?, int(m.max(1))?);
    // SAFETY: the type is BLAS's `?trsm`.
    let f: Trsm = unsafe { p.routine(lapack, "trsm", "trsm") }?;
    let alpha = p.one();
    for_each_matrix(
        lapack,
        count,
        m * n * k,
        || (),
        |i, _| {
            // SAFETY: matrix `i` of each buffer, of the sizes given.
            unsafe {
                f(
                    &side,
                    &uplo,
                    &trans,
                    &diag,
                    &mi,
                    &ni,
                    alpha.as_ptr().cast(),
                    at(a, i, k * k, p.size()),
                    &lda,
                    at(out, i, m * n, p.size()),
                    &ldb,
                    1,
                    1,
                    1,
                    1,
                )
            };
            Ok(())
        },
    )?;
    Ok(())
}

/// `?getrf` as `lapack_?getrf_ffi`: operand x; results (lu, ipiv, info).
pub(super) fn getrf(call: &Call<'_>, lapack: &Lapack) -> Result<(), String> {
    let p = call.precision()?;
    let (x, out, ipiv, info) = (call.arg(0)?, call.ret(0)?, call.ret(1)?, call.ret(2)?);
    copy_if_different(x, out);
    let (count, m, n) = batch(x)?;
    let (mi, ni, lda) = (int(m)?, int(n)?, int(m.max(1))?);
    // SAFETY: the type is LAPACK's `?getrf`.
    let f: Getrf = unsafe { p.routine(lapack, "getrf", "getrf") }?;
    for_each_matrix(
        lapack,
        count,
        m * n * m.min(n),
        || (),
        |i, _| {
            // SAFETY: matrix `i` of each buffer, of the sizes given.
            unsafe {
                f(
                    &mi,
                    &ni,
                    at(out, i, m * n, p.size()),
                    &lda,
                    at(ipiv, i, m.min(n), 4).cast(),
                    at(info, i, 1, 4).cast(),
                )
            };
            Ok(())
        },
    )?;
    Ok(())
}

/// `?geqrf` as `lapack_?geqrf_ffi`: operand x; results (reflectors, tau).
pub(super) fn geqrf(call: &Call<'_>, lapack: &Lapack) -> Result<(), String> {
    let p = call.precision()?;
    let (x, out, tau) = (call.arg(0)?, call.ret(0)?, call.ret(1)?);
    copy_if_different(x, out);
    let (count, m, n) = batch(x)?;
    let (mi, ni, lda) = (int(m)?, int(n)?, int(m.max(1))?);
    // SAFETY: the type is LAPACK's `?geqrf`.
    let f: Geqrf = unsafe { p.routine(lapack, "geqrf", "geqrf") }?;
    let mut status = 0;
    let mut answer = Scratch::new(16);
    // SAFETY: a workspace query (lwork -1) writes only the size.
    unsafe {
        f(
            &mi,
            &ni,
            out.data,
            &lda,
            tau.data,
            answer.ptr(),
            &-1,
            &mut status,
        );
    }
    // SAFETY: the query answered in `answer`.
    let lwork = unsafe { queried(p, answer.ptr()) };
    let work_bytes = lwork * p.size();
    let lwork = int(lwork)?;
    let workspace = || Workspace::new(work_bytes, 0, 0, &[]);
    for_each_matrix(
        lapack,
        count,
        2 * m * n * m.min(n),
        workspace,
        |i, scratch| {
            // SAFETY: matrix `i` of each buffer, of the sizes given.
            unsafe {
                f(
                    &mi,
                    &ni,
                    at(out, i, m * n, p.size()),
                    &lda,
                    at(tau, i, m.min(n), p.size()),
                    scratch.work.ptr(),
                    &lwork,
                    &mut scratch.status,
                )
            };
            Ok(())
        },
    )?;
    Ok(())
}

/// `?orgqr` / `?ungqr` as `lapack_?orgqr_ffi` / `lapack_?ungqr_ffi`:
/// operands (reflectors, tau); result Q's first columns.
pub(super) fn orgqr(call: &Call<'_>, lapack: &Lapack) -> Result<(), String> {
    let p = call.precision()?;
    let (x, tau, out) = (call.arg(0)?, call.arg(1)?, call.ret(0)?);
    copy_if_different(x, out);
    let (count, m, n) = batch(x)?;
    let k = usize::try_from(*tau.dims.last().unwrap_or(&0)).unwrap_or(0);
    let (mi, ni, ki, lda) = (int(m)?, int(n)?, int(k)?, int(m.max(1))?);
    // SAFETY: the type is LAPACK's `?orgqr` / `?ungqr`.
    let f: Orgqr = unsafe { p.routine(lapack, "orgqr", "ungqr") }?;
    let mut status = 0;
    let mut answer = Scratch::new(16);
    // SAFETY: a workspace query writes only the size.
    unsafe {
        f(
            &mi,
            &ni,
            &ki,
            out.data,
            &lda,
            tau.data,
            answer.ptr(),
            &-1,
            &mut status,
        );
    }
    // SAFETY: the query answered in `answer`.
    let lwork = unsafe { queried(p, answer.ptr()) };
    let work_bytes = lwork * p.size();
    let lwork = int(lwork)?;
    let workspace = || Workspace::new(work_bytes, 0, 0, &[]);
    for_each_matrix(
        lapack,
        count,
        4 * m * n * k.max(1),
        workspace,
        |i, scratch| {
            // SAFETY: matrix `i` of each buffer, of the sizes given.
            unsafe {
                f(
                    &mi,
                    &ni,
                    &ki,
                    at(out, i, m * n, p.size()),
                    &lda,
                    at(tau, i, k, p.size()),
                    scratch.work.ptr(),
                    &lwork,
                    &mut scratch.status,
                )
            };
            Ok(())
        },
    )?;
    Ok(())
}

/// `?potrf` as `lapack_?potrf_ffi`: operand x, attribute uplo; results
/// (factor, info).
pub(super) fn potrf(call: &Call<'_>, lapack: &Lapack) -> Result<(), String> {
    let p = call.precision()?;
    let (x, out, info) = (call.arg(0)?, call.ret(0)?, call.ret(1)?);
    copy_if_different(x, out);
    let (count, n, _) = batch(x)?;
    let uplo = call.char_attribute("uplo")?;
    let (ni, lda) = (int(n)?, int(n.max(1))?);
    // SAFETY: the type is LAPACK's `?potrf`.
    let f: Potrf = unsafe { p.routine(lapack, "potrf", "potrf") }?;
    for_each_matrix(
        lapack,
        count,
        n * n * n / 3,
        || (),
        |i, _| {
            // SAFETY: matrix `i` of each buffer, of the sizes given.
            unsafe {
                f(
                    &uplo,
                    &ni,
                    at(out, i, n * n, p.size()),
                    &lda,
                    at(info, i, 1, 4).cast(),
                    1,
                )
            };
            Ok(())
        },
    )?;
    Ok(())
}

/// `?gesdd` as `lapack_?gesdd_ffi`: operand x, attribute mode (`A` full,
/// `S` thin, `N` values only); results (x overwritten, s, u, vt, info).
pub(super) fn gesdd(call: &Call<'_>, lapack: &Lapack) -> Result<(), String> {
    let p = call.precision()?;
    let (x, out, s, u, vt, info) = (
        call.arg(0)?,
        call.ret(0)?,
        call.ret(1)?,
        call.ret(2)?,
        call.ret(3)?,
        call.ret(4)?,
    );
    copy_if_different(x, out);
    let (count, m, n) = batch(x)?;
    let mode = call.char_attribute("mode")?;
    if mode == b'O' as c_char {
        return Err("gesdd's mode O (overwrite x) is not supported, as in jaxlib".into());
    }
    let last2 = |v: &BufferView<'_>| -> (usize, usize) {
        let d = v.dims;
        let get = |k: usize| usize::try_from(d[d.len() - k]).unwrap_or(0);
        if d.len() >= 2 {
            (get(2), get(1))
        } else {
            (0, 0)
        }
    };
    let (u_rows, u_cols) = last2(u);
    let (vt_rows, vt_cols) = last2(vt);
    let min = m.min(n);
    let (mi, ni, lda) = (int(m)?, int(n)?, int(m.max(1))?);
    let (ldu, ldvt) = (int(m.max(1))?, int(vt_rows.max(1))?);
    let mut iwork = vec![0 as Int; (8 * min).max(1)];
    let rwork_len = if !p.is_complex() {
        0
    } else if mode == b'N' as c_char {
        7 * min
    } else {
        let max = m.max(n);
        (5 * min * min + 5 * min).max(2 * max * min + 2 * min * min + min)
    };
    let mut rwork = Scratch::new(rwork_len.max(1) * p.real_size());
    let mut status = 0;
    let mut answer = Scratch::new(16);
    // SAFETY: the types are LAPACK's `?gesdd`; a workspace query (lwork -1)
    // writes only the size.
    let run = |a: *mut c_void,
               s: *mut c_void,
               u: *mut c_void,
               vt: *mut c_void,
               work: *mut c_void,
               lwork: Int,
               rwork: *mut c_void,
               iwork: *mut Int,
               info: *mut Int|
     -> Result<(), String> {
        unsafe {
            if p.is_complex() {
                let f: GesddComplex = p.routine(lapack, "gesdd", "gesdd")?;
                f(
                    &mode, &mi, &ni, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork,
                    info, 1,
                );
            } else {
                let f: GesddReal = p.routine(lapack, "gesdd", "gesdd")?;
                f(
                    &mode, &mi, &ni, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1,
                );
            }
        }
        Ok(())
    };
    run(
        out.data,
        s.data,
        u.data,
        vt.data,
        answer.ptr(),
        -1,
        rwork.ptr(),
        iwork.as_mut_ptr(),
        &mut status,
    )?;
    // SAFETY: the query answered in `answer`.
    let lwork = unsafe { queried(p, answer.ptr()) };
    let (work_bytes, rwork_bytes) = (lwork * p.size(), rwork_len.max(1) * p.real_size());
    let lwork = int(lwork)?;
    let workspace = || Workspace::new(work_bytes, rwork_bytes, (8 * min).max(1), &[]);
    for_each_matrix(
        lapack,
        count,
        10 * m * n * min.max(1),
        workspace,
        |i, scratch| {
            run(
                at(out, i, m * n, p.size()),
                at(s, i, min, p.real_size()),
                at(u, i, u_rows * u_cols, p.size()),
                at(vt, i, vt_rows * vt_cols, p.size()),
                scratch.work.ptr(),
                lwork,
                scratch.rwork.ptr(),
                scratch.iwork.as_mut_ptr(),
                at(info, i, 1, 4).cast(),
            )?;
            Ok(())
        },
    )?;
    Ok(())
}

/// `?syevd` / `?heevd` as `lapack_?syevd_ffi` / `lapack_?heevd_ffi`:
/// operand x, attributes uplo and mode (`V` with vectors, `N` without);
/// results (vectors over x, eigenvalues ascending, info).
pub(super) fn syevd(call: &Call<'_>, lapack: &Lapack) -> Result<(), String> {
    let p = call.precision()?;
    let (x, out, w, info) = (call.arg(0)?, call.ret(0)?, call.ret(1)?, call.ret(2)?);
    copy_if_different(x, out);
    let (count, n, _) = batch(x)?;
    let uplo = call.char_attribute("uplo")?;
    let mode = call.char_attribute("mode")?;
    let (ni, lda) = (int(n)?, int(n.max(1))?);
    let run = |a: *mut c_void,
               w: *mut c_void,
               work: *mut c_void,
               lwork: Int,
               rwork: *mut c_void,
               lrwork: Int,
               iwork: *mut Int,
               liwork: Int,
               info: *mut Int|
     -> Result<(), String> {
        // SAFETY: the types are LAPACK's `?syevd` / `?heevd`, called on
        // buffers of the sizes given (or as a workspace query).
        unsafe {
            if p.is_complex() {
                let f: Heevd = p.routine(lapack, "syevd", "heevd")?;
                f(
                    &mode, &uplo, &ni, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork,
                    info, 1, 1,
                );
            } else {
                let f: Syevd = p.routine(lapack, "syevd", "heevd")?;
                f(
                    &mode, &uplo, &ni, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1,
                );
            }
        }
        Ok(())
    };
    let (mut work_answer, mut rwork_answer) = (Scratch::new(16), Scratch::new(16));
    let mut iwork_answer: Int = 0;
    let mut status = 0;
    run(
        out.data,
        w.data,
        work_answer.ptr(),
        -1,
        rwork_answer.ptr(),
        -1,
        &mut iwork_answer,
        -1,
        &mut status,
    )?;
    // SAFETY: the query answered in the scratch buffers.
    let lwork = unsafe { queried(p, work_answer.ptr()) };
    let real = if p == Precision::C {
        Precision::S
    } else {
        Precision::D
    };
    // SAFETY: as above, in the real precision.
    let lrwork = unsafe { queried(real, rwork_answer.ptr()) };
    let liwork = usize::try_from(iwork_answer.max(1)).unwrap_or(1);
    let (work_bytes, rwork_bytes, iwork_len) = (lwork * p.size(), lrwork * p.real_size(), liwork);
    let (lwork, lrwork, liwork) = (int(lwork)?, int(lrwork)?, int(liwork)?);
    let workspace = || Workspace::new(work_bytes, rwork_bytes, iwork_len, &[]);
    for_each_matrix(lapack, count, 10 * n * n * n, workspace, |i, scratch| {
        run(
            at(out, i, n * n, p.size()),
            at(w, i, n, p.real_size()),
            scratch.work.ptr(),
            lwork,
            scratch.rwork.ptr(),
            lrwork,
            scratch.iwork.as_mut_ptr(),
            liwork,
            at(info, i, 1, 4).cast(),
        )?;
        Ok(())
    })?;
    Ok(())
}

/// Whether all `count` elements at `data` (of precision `p`) are finite.
///
/// # Safety
/// `data` holds `count` elements of precision `p`.
unsafe fn all_finite(p: Precision, data: *const c_void, count: usize) -> bool {
    let parts = if p.is_complex() { 2 * count } else { count };
    // SAFETY: per the contract.
    unsafe {
        match p.real_size() {
            4 => std::slice::from_raw_parts(data.cast::<f32>(), parts)
                .iter()
                .all(|v| v.is_finite()),
            _ => std::slice::from_raw_parts(data.cast::<f64>(), parts)
                .iter()
                .all(|v| v.is_finite()),
        }
    }
}

/// Real `?geev`'s eigenvectors (a complex pair's two columns hold its
/// real and imaginary parts) as complex columns, into `to`.
///
/// # Safety
/// `from` holds n×n reals of `real_size` bytes, `to` n×n complex.
unsafe fn unpack_eigenvectors(
    real_size: usize,
    n: usize,
    imag: *const c_void,
    from: *const c_void,
    to: *mut c_void,
) {
    // SAFETY: per the contract.
    unsafe {
        let read = |ptr: *const c_void, i: usize| -> f64 {
            if real_size == 4 {
                f64::from(*ptr.cast::<f32>().add(i))
            } else {
                *ptr.cast::<f64>().add(i)
            }
        };
        let write = |i: usize, re: f64, im: f64| {
            if real_size == 4 {
                *to.cast::<f32>().add(2 * i) = re as f32;
                *to.cast::<f32>().add(2 * i + 1) = im as f32;
            } else {
                *to.cast::<f64>().add(2 * i) = re;
                *to.cast::<f64>().add(2 * i + 1) = im;
            }
        };
        let mut j = 0;
        while j < n {
            if read(imag, j) == 0.0 || j + 1 == n {
                for r in 0..n {
                    write(j * n + r, read(from, j * n + r), 0.0);
                }
                j += 1;
            } else {
                for r in 0..n {
                    let (re, im) = (read(from, j * n + r), read(from, (j + 1) * n + r));
                    write(j * n + r, re, im);
                    write((j + 1) * n + r, re, -im);
                }
                j += 2;
            }
        }
    }
}

/// `?geev` as `lapack_?geev_ffi`: operand x, attributes compute_left and
/// compute_right; results (real: eigenvalues' real parts, imaginary
/// parts; complex: eigenvalues), left and right eigenvectors as complex
/// columns, info (-4 for a matrix with a non-finite entry, as jaxlib).
pub(super) fn geev(call: &Call<'_>, lapack: &Lapack) -> Result<(), String> {
    let p = call.precision()?;
    let x = call.arg(0)?;
    let (count, n, _) = batch(x)?;
    let left = call.char_attribute("compute_left")?;
    let right = call.char_attribute("compute_right")?;
    let (ni, ld) = (int(n)?, int(n.max(1))?);
    let nn = n * n;
    let mut copy = Scratch::new(nn.max(1) * p.size());
    let mut rwork = Scratch::new((2 * n).max(1) * p.real_size());
    let mut status = 0;
    let mut answer = Scratch::new(16);
    if p.is_complex() {
        let (w, vl, vr, info) = (call.ret(0)?, call.ret(1)?, call.ret(2)?, call.ret(3)?);
        // SAFETY: the type is LAPACK's `cgeev` / `zgeev`.
        let f: GeevComplex = unsafe { p.routine(lapack, "geev", "geev") }?;
        // SAFETY: a workspace query writes only the size.
        unsafe {
            f(
                &left,
                &right,
                &ni,
                copy.ptr(),
                &ld,
                w.data,
                vl.data,
                &ld,
                vr.data,
                &ld,
                answer.ptr(),
                &-1,
                rwork.ptr(),
                &mut status,
                1,
                1,
            )
        };
        // SAFETY: the query answered in `answer`.
        let lwork = unsafe { queried(p, answer.ptr()) };
        let work_bytes = lwork * p.size();
        let lwork = int(lwork)?;
        let rwork_bytes = (2 * n).max(1) * p.real_size();
        let workspace = || Workspace::new(work_bytes, rwork_bytes, 0, &[nn.max(1) * p.size()]);
        for_each_matrix(lapack, count, 10 * n * n * n, workspace, |i, scratch| {
            let info_i: *mut Int = at(info, i, 1, 4).cast();
            // SAFETY: matrix `i` of each buffer, of the sizes given; the
            // copy keeps the operand intact.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    at(x, i, nn, p.size()).cast::<u8>(),
                    scratch.matrices[0].ptr().cast::<u8>(),
                    nn * p.size(),
                );
                if !all_finite(p, scratch.matrices[0].ptr(), nn) {
                    *info_i = -4;
                    return Ok(());
                }
                f(
                    &left,
                    &right,
                    &ni,
                    scratch.matrices[0].ptr(),
                    &ld,
                    at(w, i, n, p.size()),
                    at(vl, i, nn, p.size()),
                    &ld,
                    at(vr, i, nn, p.size()),
                    &ld,
                    scratch.work.ptr(),
                    &lwork,
                    scratch.rwork.ptr(),
                    info_i,
                    1,
                    1,
                );
            }
            Ok(())
        })?;
        return Ok(());
    }
    let (wr, wi, vl, vr, info) = (
        call.ret(0)?,
        call.ret(1)?,
        call.ret(2)?,
        call.ret(3)?,
        call.ret(4)?,
    );
    // SAFETY: the type is LAPACK's `sgeev` / `dgeev`.
    let f: GeevReal = unsafe { p.routine(lapack, "geev", "geev") }?;
    let mut real_vl = Scratch::new(nn.max(1) * p.size());
    let mut real_vr = Scratch::new(nn.max(1) * p.size());
    // SAFETY: a workspace query writes only the size.
    unsafe {
        f(
            &left,
            &right,
            &ni,
            copy.ptr(),
            &ld,
            wr.data,
            wi.data,
            real_vl.ptr(),
            &ld,
            real_vr.ptr(),
            &ld,
            answer.ptr(),
            &-1,
            &mut status,
            1,
            1,
        )
    };
    // SAFETY: the query answered in `answer`.
    let lwork = unsafe { queried(p, answer.ptr()) };
    let work_bytes = lwork * p.size();
    let lwork = int(lwork)?;
    let complex_size = 2 * p.size();
    let matrix = nn.max(1) * p.size();
    let workspace = || Workspace::new(work_bytes, 0, 0, &[matrix, matrix, matrix]);
    for_each_matrix(lapack, count, 10 * n * n * n, workspace, |i, scratch| {
        let info_i: *mut Int = at(info, i, 1, 4).cast();
        // SAFETY: matrix `i` of each buffer, of the sizes given.
        unsafe {
            std::ptr::copy_nonoverlapping(
                at(x, i, nn, p.size()).cast::<u8>(),
                scratch.matrices[0].ptr().cast::<u8>(),
                nn * p.size(),
            );
            if !all_finite(p, scratch.matrices[0].ptr(), nn) {
                *info_i = -4;
                return Ok(());
            }
            let imag = at(wi, i, n, p.size());
            f(
                &left,
                &right,
                &ni,
                scratch.matrices[0].ptr(),
                &ld,
                at(wr, i, n, p.size()),
                imag,
                scratch.matrices[1].ptr(),
                &ld,
                scratch.matrices[2].ptr(),
                &ld,
                scratch.work.ptr(),
                &lwork,
                info_i,
                1,
                1,
            );
            if *info_i == 0 {
                unpack_eigenvectors(
                    p.size(),
                    n,
                    imag,
                    scratch.matrices[1].ptr(),
                    at(vl, i, nn, complex_size),
                );
                unpack_eigenvectors(
                    p.size(),
                    n,
                    imag,
                    scratch.matrices[2].ptr(),
                    at(vr, i, nn, complex_size),
                );
            }
        }
        Ok(())
    })?;
    Ok(())
}
