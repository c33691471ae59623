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
pub fn load_or_create_token(path: &Path) -> std::io::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(token) if !token.trim().is_empty() => {
            restrict_to_owner(path)?;
            return Ok(token.trim().to_string());
        }
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let token = new_token();
    let temp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
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

/// A token file others can read is tightened rather than trusted as is.
fn restrict_to_owner(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
        if mode != 0o600 {
            tracing::warn!(path = %path.display(), mode = format!("{mode:o}"), "api token was readable by others; setting mode 0600");
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}
