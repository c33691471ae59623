//! The real llama.cpp `llama-server` in a test: which binary and model `make test` provides, and
//! the server started as a child process with the supervisor's state file written for it, as a
//! person's supervisor would.

#![allow(dead_code)] // each test crate uses its own part of it

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The key every test server is started with (long enough for Hermes to send it).
pub const API_KEY: &str = "real-llama-key";

/// The real server as a child process; killed when dropped.
pub struct RealServer {
    pub child: Child,
    pub base_url: String,
}

impl Drop for RealServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The path in `variable`; `None` (the test skips) when it is unset, unless
/// `LULL_REQUIRE_LLAMA=1` demands it.
pub fn required_path(variable: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(variable) {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ if std::env::var("LULL_REQUIRE_LLAMA").as_deref() == Ok("1") => {
            panic!("LULL_REQUIRE_LLAMA=1 but {variable} is not set: run `make test-rust`")
        }
        _ => {
            eprintln!("skipped: set {variable} to {what} (make test does)");
            None
        }
    }
}

/// The llama-server binary (`scripts/llama/ensure-llama-server.sh` builds it and prints its path).
pub fn server_binary() -> Option<PathBuf> {
    required_path("LULL_LLAMA_SERVER", "a llama-server binary")
}

/// SmolLM2-135M-Instruct's `.gguf` (`scripts/llama/ensure-model.sh` prints its path).
pub fn real_model() -> Option<PathBuf> {
    required_path("LULL_REAL_MODEL", "the SmolLM2-135M-Instruct .gguf")
}

/// A port nothing listens on at the moment of asking.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `llama-server -m <model> <server_args>` and writes the supervisor's state file for it.
pub fn start_server(
    binary: &Path,
    model: &Path,
    state_file: &Path,
    server_args: &[&str],
) -> RealServer {
    let port = free_port();
    let child = Command::new(binary)
        .arg("-m")
        .arg(model)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--api-key",
            API_KEY,
        ])
        .args(server_args)
        .arg("--no-webui")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let record = serde_json::json!({ "base_url": base_url, "api_key": API_KEY, "pid": child.id() });
    std::fs::write(state_file, record.to_string()).unwrap();
    RealServer { child, base_url }
}
