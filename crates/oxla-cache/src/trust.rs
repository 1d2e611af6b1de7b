//! Whether a private cache's files may be trusted, as ssh decides for its
//! keys: a file or directory owned by another user, writable by its group
//! or by others, or a symbolic link, could hold someone else's code.

use std::fs::Metadata;
use std::path::Path;

use crate::sharing::KeyError;

/// This process's effective user id.
#[cfg(unix)]
pub(crate) fn current_user() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Why `path` (with `meta`, not following links) cannot be trusted to
/// hold this user's cache, if it cannot.
#[cfg(unix)]
pub(crate) fn distrust(path: &Path, meta: &Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let (owner, user, mode) = (meta.uid(), current_user(), meta.mode() & 0o7777);
    if meta.file_type().is_symlink() {
        Some(format!("{} is a symbolic link", path.display()))
    } else if owner != user {
        Some(format!(
            "{} belongs to user {owner}, not to this process's user {user}",
            path.display()
        ))
    } else if mode & 0o022 != 0 {
        let who = match (mode & 0o020 != 0, mode & 0o002 != 0) {
            (true, true) => "its group and others",
            (true, false) => "its group",
            (false, _) => "others",
        };
        Some(format!(
            "{} is writable by {who} (mode {mode:o})",
            path.display()
        ))
    } else {
        None
    }
}

/// Checks a key file: this user's, with no permission for anyone else.
#[cfg(unix)]
pub(crate) fn check_key_file(path: &Path, meta: &Metadata) -> Result<(), KeyError> {
    use std::os::unix::fs::MetadataExt;
    let (owner, user, mode) = (meta.uid(), current_user(), meta.mode() & 0o7777);
    if owner != user {
        return Err(KeyError::Owner {
            path: path.to_path_buf(),
            owner,
            user,
        });
    }
    if mode & 0o077 != 0 {
        return Err(KeyError::Permissions {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

/// Without Unix ownership and modes nothing is distrusted.
#[cfg(not(unix))]
pub(crate) fn distrust(_path: &Path, _meta: &Metadata) -> Option<String> {
    None
}

/// Without Unix ownership and modes a key file is accepted as it is.
#[cfg(not(unix))]
pub(crate) fn check_key_file(_path: &Path, _meta: &Metadata) -> Result<(), KeyError> {
    Ok(())
}
