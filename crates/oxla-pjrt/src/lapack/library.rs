//! The system's LAPACK, loaded at the first program that calls it, and
//! the Fortran entry points oxla's kernels call (the reference LAPACK
//! interface with 32-bit integers, as Debian's LAPACK and OpenBLAS export
//! it; each character argument's hidden length is passed last, as
//! gfortran's ABI has it). Loading at run time keeps oxla's build free of
//! a BLAS, as jaxlib takes its LAPACK from SciPy's at import.

use std::ffi::{c_char, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};

/// LAPACK's integer (LP64).
pub(super) type Int = i32;

type In = *const Int;
type Ch = *const c_char;
type Data = *mut c_void;
type Len = usize;

/// `?getrf`: LU with partial pivoting.
pub(super) type Getrf = unsafe extern "C" fn(In, In, Data, In, *mut Int, *mut Int);
/// `?geqrf`: Householder QR.
pub(super) type Geqrf = unsafe extern "C" fn(In, In, Data, In, Data, Data, In, *mut Int);
/// `?orgqr` / `?ungqr`: Q from Householder reflectors.
pub(super) type Orgqr = unsafe extern "C" fn(In, In, In, Data, In, Data, Data, In, *mut Int);
/// `?potrf`: Cholesky.
pub(super) type Potrf = unsafe extern "C" fn(Ch, In, Data, In, *mut Int, Len);
/// `?trsm` (BLAS): triangular solve with several right-hand sides.
pub(super) type Trsm = unsafe extern "C" fn(
    Ch,
    Ch,
    Ch,
    Ch,
    In,
    In,
    *const c_void,
    *const c_void,
    In,
    Data,
    In,
    Len,
    Len,
    Len,
    Len,
);
/// `sgesdd` / `dgesdd`: SVD by divide and conquer.
pub(super) type GesddReal = unsafe extern "C" fn(
    Ch,
    In,
    In,
    Data,
    In,
    Data,
    Data,
    In,
    Data,
    In,
    Data,
    In,
    *mut Int,
    *mut Int,
    Len,
);
/// `cgesdd` / `zgesdd`, with their real workspace.
pub(super) type GesddComplex = unsafe extern "C" fn(
    Ch,
    In,
    In,
    Data,
    In,
    Data,
    Data,
    In,
    Data,
    In,
    Data,
    In,
    Data,
    *mut Int,
    *mut Int,
    Len,
);
/// `ssyevd` / `dsyevd`: symmetric eigendecomposition by divide and conquer.
pub(super) type Syevd =
    unsafe extern "C" fn(Ch, Ch, In, Data, In, Data, Data, In, *mut Int, In, *mut Int, Len, Len);
/// `cheevd` / `zheevd`, with their real workspace.
pub(super) type Heevd = unsafe extern "C" fn(
    Ch,
    Ch,
    In,
    Data,
    In,
    Data,
    Data,
    In,
    Data,
    In,
    *mut Int,
    In,
    *mut Int,
    Len,
    Len,
);
/// `sgeev` / `dgeev`: eigenvalues (real and imaginary parts) and vectors
/// of a general matrix.
pub(super) type GeevReal = unsafe extern "C" fn(
    Ch,
    Ch,
    In,
    Data,
    In,
    Data,
    Data,
    Data,
    In,
    Data,
    In,
    Data,
    In,
    *mut Int,
    Len,
    Len,
);
/// `cgeev` / `zgeev`, with their real workspace.
pub(super) type GeevComplex = unsafe extern "C" fn(
    Ch,
    Ch,
    In,
    Data,
    In,
    Data,
    Data,
    In,
    Data,
    In,
    Data,
    In,
    Data,
    *mut Int,
    Len,
    Len,
);

/// The loaded library and where it came from.
pub(super) struct Lapack {
    library: libloading::Library,
    /// The file it was loaded from.
    pub(super) path: String,
    /// What its symbols start with: nothing for a system LAPACK, `scipy_`
    /// for the OpenBLAS SciPy and jaxlib use (`libscipy_openblas`, from
    /// the `scipy-openblas32` wheel), which prefixes every entry point.
    prefix: &'static str,
    /// OpenBLAS's thread count.
    threads: ThreadControl,
}

/// The symbol prefixes a LAPACK's entry points may carry.
const PREFIXES: [&str; 2] = ["", "scipy_"];

/// The libraries tried in order after `OXLA_LAPACK` and
/// `$OXLA_HOME/lapack/libscipy_openblas.so` (the OpenBLAS build jaxlib
/// uses, which ci/setup installs): Debian's LAPACK alternative (OpenBLAS's
/// when installed), then OpenBLAS itself.
const CANDIDATES: &[&str] = &[
    "liblapack.so.3",
    "libopenblas.so.0",
    "libopenblas.so",
    "liblapack.so",
    "liblapack.dylib",
    "/opt/homebrew/opt/openblas/lib/libopenblas.dylib",
];

/// `openblas_set_num_threads(int)`.
type SetThreads = unsafe extern "C" fn(std::ffi::c_int);

/// OpenBLAS's own thread count, chosen per call by oxla's handlers unless
/// the user set it (`OPENBLAS_NUM_THREADS`, `OMP_NUM_THREADS`). XLA's CPU
/// runtime already keeps the cores busy, and the handlers spread a batch
/// of matrices over them, so for a batch or a small matrix OpenBLAS's
/// threads only contend with both (Debian's OpenBLAS 0.3.21 took 13×
/// JAX's time for a 256×256 Cholesky with its threads on two cores, and
/// 0.93× without); one large matrix, on the other hand, runs faster on
/// all of them (an LU of 1024×1024 on two cores: 22–25 ms threaded
/// against 26–28 ms on one).
struct ThreadControl {
    /// The library's setter; `None` when the user chose the count, or
    /// for a LAPACK without threads (the reference one).
    set: Option<SetThreads>,
    /// The count last set (0 before the first call).
    current: AtomicUsize,
}

impl ThreadControl {
    fn new(library: &libloading::Library, prefix: &str) -> ThreadControl {
        let user_set = ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"]
            .iter()
            .any(|name| std::env::var_os(name).is_some());
        let symbol = format!("{prefix}openblas_set_num_threads\0");
        // SAFETY: `openblas_set_num_threads(int)` is OpenBLAS's, of this type.
        let set = (!user_set)
            .then(|| unsafe { library.get::<SetThreads>(symbol.as_bytes()) }.ok())
            .flatten()
            .map(|set| *set);
        let control = ThreadControl {
            set,
            current: AtomicUsize::new(0),
        };
        control.use_threads(1);
        control
    }

    /// Makes the library's next routines run on `threads` threads. Two
    /// handlers running at once may each set a different count; either
    /// count gives the same results, only at a different speed.
    fn use_threads(&self, threads: usize) {
        let Some(set) = self.set else { return };
        if self.current.swap(threads, Ordering::Relaxed) != threads {
            let threads = std::ffi::c_int::try_from(threads).unwrap_or(std::ffi::c_int::MAX);
            // SAFETY: OpenBLAS allows a change of its thread count at any
            // time; routines already running keep the count they began with.
            unsafe { set(threads) };
        }
    }
}

impl Lapack {
    /// The process's LAPACK, loaded once.
    pub(super) fn get() -> Result<&'static Lapack> {
        static LAPACK: OnceLock<std::result::Result<Lapack, String>> = OnceLock::new();
        LAPACK
            .get_or_init(Self::load)
            .as_ref()
            .map_err(|tried| Error::LapackMissing {
                tried: tried.clone(),
            })
    }

    fn load() -> std::result::Result<Lapack, String> {
        let named = std::env::var("OXLA_LAPACK").ok().filter(|p| !p.is_empty());
        // jaxlib's own OpenBLAS, where ci/setup (or the user) put it.
        let scipy = crate::discovery::oxla_home()
            .join("lapack")
            .join("libscipy_openblas.so");
        let scipy = scipy
            .is_file()
            .then(|| scipy.to_string_lossy().into_owned());
        let mut tried = Vec::new();
        for path in named
            .iter()
            .chain(scipy.iter())
            .map(String::as_str)
            .chain(CANDIDATES.iter().copied())
        {
            // SAFETY: loading a LAPACK runs its initialisers, which only set
            // up its own state (OpenBLAS's thread pool).
            match unsafe { libloading::Library::new(path) } {
                Ok(library) => {
                    // SAFETY: only the symbol's presence is checked.
                    let prefix = PREFIXES.into_iter().find(|prefix| {
                        let symbol = format!("{prefix}dgetrf_\0");
                        unsafe { library.get::<Getrf>(symbol.as_bytes()) }.is_ok()
                    });
                    if let Some(prefix) = prefix {
                        let threads = ThreadControl::new(&library, prefix);
                        return Ok(Lapack {
                            library,
                            path: path.to_string(),
                            prefix,
                            threads,
                        });
                    }
                    tried.push(format!("{path}: no dgetrf_"));
                }
                Err(e) => tried.push(format!("{path}: {e}")),
            }
            if named.as_deref() == Some(path) {
                break;
            }
        }
        Err(tried.join("; "))
    }

    /// Makes the library's next routines run on `threads` threads of its
    /// own (see `ThreadControl`).
    pub(super) fn use_threads(&self, threads: usize) {
        self.threads.use_threads(threads);
    }

    /// The entry point `name` (`"sgetrf_"`) of type `F`.
    ///
    /// # Safety
    /// `F` is the function type of LAPACK's `name`.
    pub(super) unsafe fn routine<F: Copy>(&self, name: &str) -> std::result::Result<F, String> {
        let symbol = format!("{}{name}\0", self.prefix);
        // SAFETY: per the contract; the library lives for the process.
        unsafe { self.library.get::<F>(symbol.as_bytes()) }
            .map(|s| *s)
            .map_err(|e| format!("the LAPACK at {} has no {name}: {e}", self.path))
    }
}
