//! Loading a PJRT plugin and calling into its `PJRT_Api` function table.
//!
//! A plugin is loaded once per process and never unloaded (XLA plugins do not
//! survive `dlclose`): [`Api::load`] keeps every loaded plugin in a registry
//! keyed by its canonical path. Before each call, [`pjrt_call!`] checks that the
//! plugin's `PJRT_Api.struct_size` covers the function, so a plugin older than
//! oxla's header gives [`Error::Unsupported`] instead of reading past its table.

use std::collections::HashMap;
use std::ffi::c_char;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::args::PjrtArgs;
use crate::error::{Error, ErrorCode, Result};
use crate::ffi;
use crate::named_value::{NamedValue, read_named_values};

/// A PJRT C API version, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiVersion {
    /// Incremented on ABI-incompatible changes.
    pub major: i32,
    /// Incremented on compatible additions.
    pub minor: i32,
}

impl ApiVersion {
    /// The version of the header oxla's declarations follow (see [`ffi`]).
    pub const HEADER: ApiVersion = ApiVersion {
        major: ffi::PJRT_API_MAJOR,
        minor: ffi::PJRT_API_MINOR,
    };
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A loaded PJRT plugin: its function table, version and path.
pub struct Api {
    raw: *const ffi::PJRT_Api,
    struct_size: usize,
    version: ApiVersion,
    path: PathBuf,
    _library: libloading::Library,
}

// SAFETY: the PJRT_Api table is immutable after GetPjrtApi returns, and the C
// API's functions may be called from any thread.
unsafe impl Send for Api {}
// SAFETY: as above.
unsafe impl Sync for Api {}

impl fmt::Debug for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Api")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish()
    }
}

fn registry() -> &'static Mutex<HashMap<PathBuf, Arc<Api>>> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Arc<Api>>>> = OnceLock::new();
    LOADED.get_or_init(Default::default)
}

/// Calls the `PJRT_Api` entry `$func` with `$args` (a `&mut` to its argument
/// struct), turning a returned `PJRT_Error` into [`Error::Plugin`].
macro_rules! pjrt_call {
    ($api:expr, $func:ident, $args:expr) => {{
        let api: &$crate::api::Api = $api;
        let function = api.entry(
            ::std::mem::offset_of!($crate::ffi::PJRT_Api, $func),
            stringify!($func),
            |table| table.$func,
        )?;
        // SAFETY: `function` comes from the plugin's table, which covers it
        // (checked by `entry`), and `$args` is the argument struct it takes,
        // built with `PjrtArgs::new` and filled with live handles.
        let error = unsafe { $crate::guard::call(function, $args, stringify!($func)) }?;
        api.check(error, stringify!($func))
    }};
}
pub(crate) use pjrt_call;

impl Api {
    /// Loads the `platform` plugin at `path` after the libraries it needs
    /// (see [`crate::prepare_plugin`], which looks beside the plugin and in
    /// the Python site-packages directories); a failed load names the
    /// libraries that were not found.
    ///
    /// A TPU plugin on a machine with no TPU chip is opened and its version
    /// read, but not initialized (libtpu's initialization asks the cloud's
    /// metadata server for the slice, for minutes, where there is none):
    /// the error is [`Error::NoDevices`], which says the plugin loaded and
    /// no TPU was found.
    pub fn load_for(platform: crate::Platform, path: &Path) -> Result<Arc<Api>> {
        if platform == crate::Platform::Tpu && crate::hardware::tpu_chips().is_empty() {
            return Err(Error::NoDevices {
                platform,
                path: path.to_path_buf(),
                api: Api::probe(path)?,
                looked: crate::hardware::TPU_SEARCH.to_string(),
            });
        }
        let site_packages = crate::SearchPlaces::from_environment().site_packages;
        let preparation = crate::prepare_plugin(platform, path, &site_packages)?;
        Api::load(path).map_err(|e| preparation.explain_load_failure(platform, e))
    }

    /// Loads the plugin at `path` (or returns the one already loaded from
    /// there), checks its API major version and initializes it. Before the
    /// process's first plugin, the plugins' own logging is set to
    /// `OXLA_PLUGIN_LOG`'s level (warnings by default; see [`PluginLogLevel`](crate::PluginLogLevel)).
    pub fn load(path: &Path) -> Result<Arc<Api>> {
        let canonical = path.canonicalize().map_err(|e| Error::Load {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let mut loaded = registry().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(api) = loaded.get(&canonical) {
            return Ok(api.clone());
        }
        crate::plugin_log::configure_plugin_logging()?;
        let api = Arc::new(Self::open(&canonical)?);
        loaded.insert(canonical, api.clone());
        Ok(api)
    }

    /// Opens the plugin at `path` and reads its C API version, without
    /// initializing it. The library stays loaded, as every plugin does
    /// (XLA plugins do not survive `dlclose`).
    pub fn probe(path: &Path) -> Result<ApiVersion> {
        let table = Self::open_table(path)?;
        let version = table.version;
        std::mem::forget(table);
        Ok(version)
    }

    fn open(path: &Path) -> Result<Api> {
        let api = Self::open_table(path)?;
        let mut args = ffi::PJRT_Plugin_Initialize_Args::new();
        pjrt_call!(&api, PJRT_Plugin_Initialize, &mut args)?;
        Ok(api)
    }

    /// The library at `path` opened, and its table read and checked for
    /// oxla's major version; not initialized.
    fn open_table(path: &Path) -> Result<Api> {
        let load_error = |message: String| Error::Load {
            path: path.to_path_buf(),
            message,
        };
        // SAFETY: loading a shared library runs its initializers; a PJRT plugin
        // is a library made to be loaded this way.
        let library =
            unsafe { libloading::Library::new(path) }.map_err(|e| load_error(e.to_string()))?;
        // SAFETY: `GetPjrtApi` has this signature in every PJRT plugin.
        let get_api = unsafe {
            library.get::<unsafe extern "C" fn() -> *const ffi::PJRT_Api>(b"GetPjrtApi\0")
        }
        .map_err(|e| load_error(format!("not a PJRT plugin: {e}")))?;
        // SAFETY: calling the plugin's entry point, which takes no arguments.
        let raw = unsafe { get_api() };
        if raw.is_null() {
            return Err(load_error("GetPjrtApi returned null".into()));
        }
        // SAFETY: `raw` is non-null and points at the plugin's table, whose
        // first fields (struct_size, extension_start, pjrt_api_version) exist
        // in every version of the C API.
        let (struct_size, version) = unsafe {
            let table = &*raw;
            let version = ApiVersion {
                major: table.pjrt_api_version.major_version,
                minor: table.pjrt_api_version.minor_version,
            };
            (table.struct_size, version)
        };
        if version.major != ApiVersion::HEADER.major {
            return Err(Error::IncompatibleApi {
                path: path.to_path_buf(),
                found: version,
                expected_major: ApiVersion::HEADER.major,
            });
        }
        let api = Api {
            raw,
            struct_size,
            version,
            path: path.to_path_buf(),
            _library: library,
        };
        Ok(api)
    }

    /// The plugin's PJRT C API version.
    pub fn version(&self) -> ApiVersion {
        self.version
    }

    /// Where the plugin was loaded from (canonical path).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The plugin's extension of type `kind` (a `PJRT_Extension_Type`),
    /// if it has one: the head of its struct.
    pub(crate) fn extension(&self, kind: u32) -> Option<*const ffi::PJRT_Extension_Base> {
        // SAFETY: the table's head (with extension_start) exists in every
        // version; each extension starts with its base, whose `next` links
        // the list the plugin owns for its lifetime.
        unsafe {
            let mut at = (*self.raw).extension_start;
            while !at.is_null() {
                if (*at).type_ == kind {
                    return Some(at);
                }
                at = (*at).next;
            }
        }
        None
    }

    /// Whether the plugin has the extension of type `kind` (a
    /// `PJRT_Extension_Type`: 1 the profiler, 5 FFI, ...).
    pub fn has_extension(&self, kind: u32) -> bool {
        self.extension(kind).is_some()
    }

    /// The raw function table, for callers that go below oxla-pjrt.
    pub fn raw(&self) -> *const ffi::PJRT_Api {
        self.raw
    }

    /// Whether the plugin's table is long enough to hold the entry at
    /// `offset` (an `offset_of!(PJRT_Api, ...)`).
    pub fn covers(&self, offset: usize) -> bool {
        offset + std::mem::size_of::<usize>() <= self.struct_size
    }

    /// The plugin's attributes (xla_version, stablehlo versions, ...).
    pub fn plugin_attributes(&self) -> Result<Vec<NamedValue>> {
        let mut args = ffi::PJRT_Plugin_Attributes_Args::new();
        pjrt_call!(self, PJRT_Plugin_Attributes, &mut args)?;
        // SAFETY: the plugin returned `num_attributes` values it owns for its
        // lifetime, which is the process's.
        Ok(unsafe { read_named_values(args.attributes, args.num_attributes) })
    }

    /// The function at `offset` of the table, if the plugin's table covers it.
    pub(crate) fn entry<F>(
        &self,
        offset: usize,
        name: &'static str,
        get: impl FnOnce(&ffi::PJRT_Api) -> Option<F>,
    ) -> Result<F> {
        let unsupported = || Error::Unsupported {
            function: name,
            api: self.version,
        };
        if !self.covers(offset) {
            return Err(unsupported());
        }
        // SAFETY: the table is at least `offset + size_of(fn)` bytes long.
        get(unsafe { &*self.raw }).ok_or_else(unsupported)
    }

    /// Turns a returned `PJRT_Error*` into a `Result`, freeing the error.
    pub(crate) fn check(&self, error: *mut ffi::PJRT_Error, function: &'static str) -> Result<()> {
        if error.is_null() {
            return Ok(());
        }
        // SAFETY: `error` is a live error returned by this plugin; the three
        // functions used here are in every version of the table.
        unsafe {
            let table = &*self.raw;
            let mut message = ffi::PJRT_Error_Message_Args::new();
            message.error = error;
            let text = match table.PJRT_Error_Message {
                Some(f) => {
                    f(&mut message);
                    c_string(message.message, message.message_size)
                }
                None => String::from("(the plugin gave no message)"),
            };
            let mut code_args = ffi::PJRT_Error_GetCode_Args::new();
            code_args.error = error;
            let code = match table.PJRT_Error_GetCode {
                Some(f) if f(&mut code_args).is_null() => ErrorCode::from_raw(code_args.code),
                _ => ErrorCode::Unknown,
            };
            let mut destroy = ffi::PJRT_Error_Destroy_Args::new();
            destroy.error = error;
            if let Some(f) = table.PJRT_Error_Destroy {
                f(&mut destroy);
            }
            Err(Error::Plugin {
                function,
                code,
                message: text,
            })
        }
    }
}

/// Copies a (pointer, length) string from the plugin; invalid UTF-8 is
/// replaced, a null pointer gives "".
///
/// # Safety
/// `ptr` must be null or point at `len` readable bytes.
pub(crate) unsafe fn c_string(ptr: *const c_char, len: usize) -> String {
    if ptr.is_null() || len == 0 {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    String::from_utf8_lossy(bytes).into_owned()
}
