//! The files through which agents and the CLI find the running engine: the token and `api.json`.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// `<data_dir>/api.json`: where the running engine listens, and its pid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiDiscovery {
    /// For example `http://127.0.0.1:7707`.
    pub base_url: String,
    /// The engine's process id.
    pub pid: u32,
}

impl ApiDiscovery {
    /// Writes the file atomically (temp file + rename), so a reader never sees half of it.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let temp = path.with_extension("json.tmp");
        std::fs::write(
            &temp,
            serde_json::to_vec_pretty(self).expect("discovery serialises"),
        )?;
        std::fs::rename(&temp, path)
    }

    /// Reads the file; `None` when there is none.
    pub fn read(path: &Path) -> std::io::Result<Option<ApiDiscovery>> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidData, err)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Removes the file if it still names this process (another engine may have replaced it).
    pub fn remove_if_ours(path: &Path) {
        if let Ok(Some(found)) = ApiDiscovery::read(path) {
            if found.pid == std::process::id() {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Reads the token at `path`, creating a fresh random one (mode 0600) on first start.
///
/// A token file that other users could read (any group or other permission bit on Unix) is not
/// trusted: someone else may know the token. It is rotated — a new token is written with mode
/// 0600, so the old one is refused from now on — and a warning says why. Agents read the
/// token file afresh. (On other systems the file's ACL is not inspected.)
pub fn load_or_create_token(path: &Path) -> std::io::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(token) if !token.trim().is_empty() => match exposed_mode(path)? {
            None => return Ok(token.trim().to_string()),
            Some(mode) => tracing::warn!(
                path = %path.display(),
                mode = format!("{mode:o}"),
                "the API token file was readable by other users (mode {mode:o}); it is replaced \
                 by a new token (mode 0600) and the old token is refused from now on: agents \
                 must read {} again",
                path.display()
            ),
        },
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let token = new_token();
    let temp = path.with_extension("tmp");
    // A leftover temp file may carry wider permissions, which `mode` would not change.
    match std::fs::remove_file(&temp) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => return Err(err),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temp)?;
    file.write_all(token.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temp, path)?;
    Ok(token)
}

/// 32 random bytes from the thread-local CSPRNG (seeded by the OS), hex-encoded.
fn new_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file's permission bits if users other than its owner have any access to it.
#[cfg(unix)]
fn exposed_mode(path: &Path) -> std::io::Result<Option<u32>> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
    Ok((mode & 0o077 != 0).then_some(mode))
}

/// Not inspected off Unix (Windows ACLs are not permission bits): the file is kept.
#[cfg(not(unix))]
fn exposed_mode(_path: &Path) -> std::io::Result<Option<u32>> {
    Ok(None)
}
