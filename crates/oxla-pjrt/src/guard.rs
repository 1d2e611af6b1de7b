//! Every PJRT C API call goes through `guard.cpp`, which catches a C++
//! exception escaping the plugin (Rust would abort on it) and turns it into
//! [`Error::Plugin`] naming the function and the exception's message.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::mem::MaybeUninit;

use crate::error::{Error, ErrorCode, Result};
use crate::ffi;

unsafe extern "C" {
    fn oxla_pjrt_guarded_call(
        function: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
        args: *mut c_void,
        what: *mut c_char,
        what_len: usize,
        threw: *mut c_int,
    ) -> *mut c_void;
}

/// The room for an escaping exception's message.
const WHAT_LEN: usize = 512;

/// Calls the plugin's `function` (named `name`) on `args`; an escaping C++
/// exception becomes an error instead of an abort.
///
/// # Safety
/// `function` must be a PJRT C API function taking `args`, a valid argument
/// struct of its type.
pub(crate) unsafe fn call<A>(
    function: unsafe extern "C" fn(*mut A) -> *mut ffi::PJRT_Error,
    args: *mut A,
    name: &'static str,
) -> Result<*mut ffi::PJRT_Error> {
    // Written by guard.cpp only when the plugin threw, and read only then:
    // left uninitialized, so the hot path pays no 512-byte fill per call.
    let mut what = MaybeUninit::<[c_char; WHAT_LEN]>::uninit();
    let mut threw: c_int = 0;
    // SAFETY: every PJRT function takes one pointer and returns one pointer,
    // so the untyped signature has the same ABI; the caller vouches for
    // `function` and `args`, and `what` / `threw` outlive the call.
    let error = unsafe {
        let untyped: unsafe extern "C" fn(*mut c_void) -> *mut c_void =
            std::mem::transmute(function);
        oxla_pjrt_guarded_call(
            untyped,
            args.cast(),
            what.as_mut_ptr().cast(),
            WHAT_LEN,
            &mut threw,
        )
    };
    if threw != 0 {
        // SAFETY: guard.cpp wrote a NUL-terminated string into `what`.
        let message = unsafe { CStr::from_ptr(what.as_ptr().cast::<c_char>()) }
            .to_string_lossy()
            .into_owned();
        return Err(Error::Plugin {
            function: name,
            code: ErrorCode::Internal,
            message: format!("the plugin threw a C++ exception: {message}"),
        });
    }
    Ok(error.cast())
}
