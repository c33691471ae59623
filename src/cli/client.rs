//! A small HTTP client for the running engine, found through `api.json` and the token file.

use anyhow::{bail, Context};
use reqwest::Method;
use serde_json::Value;

use lull::api::ApiDiscovery;
use lull::Paths;

/// How long a CLI command waits for the engine before giving up.
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A connection to the engine of one data directory.
pub struct EngineClient {
    http: reqwest::Client,
    base_url: String,
    token: String,
}

impl EngineClient {
    /// Finds the engine that serves `paths.data_dir`.
    pub fn connect(paths: &Paths) -> anyhow::Result<EngineClient> {
        let not_running = || {
            format!(
                "no Lull engine is running for {}: start one with `lull serve` (or the desktop app)",
                paths.data_dir.display()
            )
        };
        let discovery = ApiDiscovery::read(&paths.api_json())
            .with_context(|| format!("{} is unreadable", paths.api_json().display()))?
            .with_context(not_running)?;
        if !process_alive(discovery.pid) {
            bail!(
                "{} (api.json names pid {}, which is gone)",
                not_running(),
                discovery.pid
            );
        }
        let token = std::fs::read_to_string(paths.api_token()).with_context(|| {
            format!("cannot read the API token {}", paths.api_token().display())
        })?;
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()?;
        Ok(EngineClient {
            http,
            base_url: discovery.base_url,
            token: token.trim().to_string(),
        })
    }

    /// Sends a request and returns the JSON answer, or the API's error message.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Value> {
        let url = format!("{}{path}", self.base_url);
        let mut request = self.http.request(method, &url).bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("cannot reach the engine at {url}"))?;
        let status = response.status();
        let text = response.text().await?;
        let value: Value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text)?
        };
        if !status.is_success() {
            let message = value["error"]["message"].as_str().unwrap_or(&text);
            bail!("the engine refused ({status}): {message}");
        }
        Ok(value)
    }
}

/// `kill(pid, 0)`: does the process exist? (EPERM means it exists but is not ours.)
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 performs only the existence and permission check.
        let result = unsafe { libc::kill(pid, 0) };
        result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}
