//! Is a runtime URL the managed server? Exact `host:port` match, nothing cleverer.
//!
//! The scheduler defers only work bound for the managed GPU; sending work elsewhere at once is
//! the safe mistake, so every doubt (unparseable URL, a scheme other than http/https, no host)
//! reads "not managed". Hosts compare case-insensitively after URL normalisation; default ports
//! (80, 443) are filled in. No name resolution: `localhost` and `127.0.0.1` are different hosts.

use reqwest::Url;

/// The normalised `host:port` of an http(s) URL, or `None` when in doubt.
pub fn host_port(url: &str) -> Option<(String, u16)> {
    let parsed = Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed.host_str()?.to_ascii_lowercase();
    if host.is_empty() {
        return None;
    }
    let port = parsed.port_or_known_default()?;
    Some((host, port))
}

/// Whether `runtime_url` points at the managed server whose state file says `managed_base_url`.
pub fn is_managed_url(runtime_url: &str, managed_base_url: &str) -> bool {
    match (host_port(runtime_url), host_port(managed_base_url)) {
        (Some(runtime), Some(managed)) => runtime == managed,
        _ => false,
    }
}
