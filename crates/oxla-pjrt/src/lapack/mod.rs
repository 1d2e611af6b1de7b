//! JAX's CPU linear algebra in the standalone CPU plugins: handlers for
//! the `lapack_*_ffi` custom calls JAX's lowering emits (jaxlib registers
//! them in its own process, so a plugin loaded by oxla has none), backed
//! by the system's LAPACK (`library`), registered through the PJRT FFI
//! extension as host callbacks are (`crate::xla_ffi`). With them, JAX's
//! exports that call `lu`, `qr`, `eigh`, `eig`, `svd`, `cholesky` or
//! `triangular_solve` run in oxla, and oxla's own linear algebra lowers
//! to the same calls.
//!
//! Each routine has one handler for its four precisions (the operand's
//! element type picks the LAPACK routine); `kernels` holds them.

mod kernels;
mod library;

use std::ffi::c_void;

use kernels::{Call, Precision};
use library::Lapack;

use crate::client::Client;
use crate::discovery::Platform;
use crate::error::{Error, Result};
use crate::xla_ffi::abi::CallFrame;
use crate::xla_ffi::{Handler, dispatch, once_per_plugin, register_handler};

/// A routine's kernel.
type Kernel = fn(&Call<'_>, &Lapack) -> std::result::Result<(), String>;

/// Runs `kernel` on the call in `frame`.
///
/// # Safety
/// `frame` is a call frame XLA passed.
unsafe fn run(frame: *mut CallFrame, routine: &str, kernel: Kernel) -> *mut c_void {
    // SAFETY: per the contract.
    unsafe {
        dispatch(frame, routine, |frame| {
            let call = Call::of(frame)?;
            let lapack = Lapack::get().map_err(|e| e.to_string())?;
            kernel(&call, lapack).map_err(|e| format!("{routine}: {e}"))
        })
    }
}

macro_rules! handlers {
    ($($handler:ident => $kernel:ident, $real:literal, $complex:literal;)*) => {
        $(
            #[doc = concat!("The handler of `lapack_?", $real, "_ffi`.")]
            unsafe extern "C" fn $handler(frame: *mut CallFrame) -> *mut c_void {
                // SAFETY: XLA calls the handler with a valid call frame.
                unsafe { run(frame, concat!("LAPACK ", $real), kernels::$kernel) }
            }
        )*
        /// Each routine: its handler and its names for real and complex
        /// matrices.
        const ROUTINES: &[(Handler, &str, &str)] = &[$(($handler, $real, $complex)),*];
    };
}

handlers! {
    trsm_handler => trsm, "trsm", "trsm";
    getrf_handler => getrf, "getrf", "getrf";
    geqrf_handler => geqrf, "geqrf", "geqrf";
    orgqr_handler => orgqr, "orgqr", "ungqr";
    potrf_handler => potrf, "potrf", "potrf";
    gesdd_handler => gesdd, "gesdd", "gesdd";
    syevd_handler => syevd, "syevd", "heevd";
    geev_handler => geev, "geev", "geev";
}

/// Each target with its handler: `lapack_sgetrf_ffi` and the rest.
fn targets() -> impl Iterator<Item = (Handler, String)> {
    ROUTINES.iter().flat_map(|&(handler, real, complex)| {
        Precision::ALL.into_iter().map(move |p| {
            let name = if p.is_complex() { complex } else { real };
            (handler, format!("lapack_{}{name}_ffi", p.letter()))
        })
    })
}

/// Every custom-call target oxla handles: `lapack_sgetrf_ffi` and the rest.
pub fn lapack_targets() -> Vec<String> {
    targets().map(|(_, target)| target).collect()
}

/// Whether a program (its text or bytecode) calls one of JAX's LAPACK
/// targets.
pub fn calls_lapack(program: &[u8]) -> bool {
    let has = |needle: &[u8]| program.windows(needle.len()).any(|w| w == needle);
    has(b"lapack_") && targets().any(|(_, t)| has(t.as_bytes()))
}

impl Client {
    /// Registers oxla's handlers for JAX's `lapack_*_ffi` custom calls with
    /// this client's plugin (once per plugin; later calls do nothing),
    /// after loading the system's LAPACK (`OXLA_LAPACK` names a library;
    /// otherwise `liblapack.so.3`, then OpenBLAS). An error on platforms
    /// other than the CPU, when no LAPACK loads, and when the plugin has no
    /// FFI extension.
    pub fn enable_lapack(&self) -> Result<()> {
        let api = self.api();
        once_per_plugin(api, "LAPACK", || {
            let platform = self.platform_name()?;
            if !matches!(platform.parse::<Platform>(), Ok(Platform::Cpu)) {
                return Err(Error::LapackUnsupported { platform });
            }
            Lapack::get()?;
            for (handler, target) in targets() {
                register_handler(api, &target, "Host", handler)?;
            }
            Ok(())
        })
    }
}
