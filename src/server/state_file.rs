//! The supervisor's state file: `{"base_url","api_key","pid",…}` and what it says about the
//! server.
//!
//! The file is written by another program, in place or by rename, may start with a UTF-8 BOM,
//! may be caught half-written, and is deleted when the server stops. So reading it never fails:
//! every outcome is a [`StateFileReading`], and a bad file is `Invalid` with a reason rather than
//! an error. Fields this version does not know are kept in [`StateFileRecord::extra`].

use std::io::ErrorKind;
use std::path::Path;

use serde_json::{Map, Value};

use super::reading::ApiKey;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// A well-formed state file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFileRecord {
    /// The server's OpenAI-compatible base URL (ends in `/v1`).
    pub base_url: String,
    /// The bearer key, if the server has one (an empty string counts as none).
    pub api_key: Option<ApiKey>,
    /// The server's process id, when the file names one (older writers may not).
    pub pid: Option<u32>,
    /// Every other field (`create_time`, `owner_pid`, …), kept as written.
    pub extra: Map<String, Value>,
}

/// What the state file says, before any HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateFileReading {
    /// There is no file (or no folder).
    Absent,
    /// The file exists but cannot be used; the reason says why.
    Invalid {
        /// Why, e.g. "the state file is truncated (…); it may be half-written".
        reason: String,
    },
    /// The file is well-formed but its process is gone.
    Stale {
        /// The record, for its `base_url`.
        record: StateFileRecord,
        /// Why, naming the pid.
        reason: String,
    },
    /// The file is well-formed and its process (if named) is alive.
    Alive(StateFileRecord),
}

/// Reads and judges the state file at `path`; never fails, never blocks for long (one small
/// file read and one `kill(pid, 0)`).
pub fn read_state_file(path: &Path) -> StateFileReading {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == ErrorKind::NotFound => return StateFileReading::Absent,
        // A missing folder on the way reads as absent too.
        Err(err) if err.kind() == ErrorKind::NotADirectory => return StateFileReading::Absent,
        Err(err) => {
            return StateFileReading::Invalid {
                reason: format!("cannot read the state file {}: {err}", path.display()),
            }
        }
    };
    let record = match parse_state_file(&bytes) {
        Ok(record) => record,
        Err(reason) => return StateFileReading::Invalid { reason },
    };
    match record.pid {
        Some(pid) if !pid_is_alive(pid) => StateFileReading::Stale {
            reason: format!(
                "the state file names process {pid}, which is not running (the server stopped without removing its state file)"
            ),
            record,
        },
        _ => StateFileReading::Alive(record),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses the state file's bytes (a leading UTF-8 BOM is fine); `Err` is the reason it is
/// invalid, worded for a person.
pub fn parse_state_file(bytes: &[u8]) -> Result<StateFileRecord, String> {
    let bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err("the state file is empty (the supervisor may be writing it)".to_owned());
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|err| {
        if err.is_eof() {
            format!("the state file is truncated ({err}); it may be half-written")
        } else {
            format!("the state file is not valid JSON ({err})")
        }
    })?;
    let Value::Object(mut fields) = value else {
        return Err(format!(
            "the state file holds {}, expected an object with `base_url`",
            json_type(&value)
        ));
    };
    let base_url = match fields.remove("base_url") {
        None | Some(Value::Null) => return Err("the state file has no `base_url`".to_owned()),
        Some(Value::String(url)) => url,
        Some(other) => {
            return Err(format!(
                "`base_url` in the state file is {}, expected a string",
                json_type(&other)
            ))
        }
    };
    let parsed = reqwest::Url::parse(base_url.trim()).map_err(|err| {
        format!("`base_url` \"{base_url}\" in the state file is not a URL ({err})")
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!(
            "`base_url` \"{base_url}\" in the state file is not an http(s) URL with a host"
        ));
    }
    let api_key = match fields.remove("api_key") {
        None | Some(Value::Null) => None,
        Some(Value::String(key)) if key.is_empty() => None,
        Some(Value::String(key)) => Some(ApiKey::new(key)),
        Some(other) => {
            return Err(format!(
                "`api_key` in the state file is {}, expected a string",
                json_type(&other)
            ))
        }
    };
    let pid = match fields.remove("pid") {
        None | Some(Value::Null) => None,
        Some(Value::Number(number)) => match number.as_u64() {
            Some(pid) if pid > 0 && pid <= i32::MAX as u64 => Some(pid as u32),
            _ => {
                return Err(format!(
                    "`pid` {number} in the state file is not a valid process id"
                ))
            }
        },
        Some(other) => {
            return Err(format!(
                "`pid` in the state file is {}, expected a positive integer",
                json_type(&other)
            ))
        }
    };
    Ok(StateFileRecord {
        base_url: base_url.trim().to_owned(),
        api_key,
        pid,
        extra: fields,
    })
}

/// Whether a process with this id exists (`kill(pid, 0)`; a process we may not signal still
/// exists). A zombie counts as alive; the probe then finds nothing listening and says so.
#[cfg(unix)]
pub fn pid_is_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        // 0 and negatives address process groups, never one server.
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks the pid exists and may be signalled.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether a process with this id exists. Not checked off Unix yet: every pid reads alive, and
/// a dead server shows as `unreachable` instead of `stale`.
#[cfg(not(unix))]
pub fn pid_is_alive(_pid: u32) -> bool {
    true
}
