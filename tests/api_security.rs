//! The local API's small security items (issue 11, item 12): the `Bearer` scheme matched
//! without regard to case, a token file readable by others rotated (the old token refused, a
//! log line saying why), and a bound on a streamed line from an endpoint the agent chose.
//!
//! Every test has its own data folder and never reads the developer's supervisor state file.

use std::io::Write;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use tokio::io::AsyncWriteExt;
use tower::ServiceExt;

use lull::api::{app, load_or_create_token, Guard};
use lull::engine::Seams;
use lull::llm::{ChatEndpoint, ChatMessage, ChatRequest, HttpLlmClient, LlmClient, LlmError};
use lull::routing::BuiltInEmbedderOnly;
use lull::server::{ManualProbe, ServerReading, ServerState};
use lull::store::Store;
use lull::{Config, Engine, Paths};

const HOST: &str = "127.0.0.1:7707";

/// An engine on a temporary data folder with no managed server and no network seams.
async fn engine(dir: &tempfile::TempDir) -> Engine {
    let mut config = Config::default();
    config.server.state_file = dir.path().join("no-supervisor/server.json");
    let paths = Paths {
        data_dir: dir.path().join("data"),
        config_file: dir.path().join("config.toml"),
    };
    let seams = Seams {
        server: Arc::new(ManualProbe::new(ServerReading::not_ready(
            ServerState::Absent,
            None,
            "no managed server in this test",
        ))),
        server_changes: None,
        llm: Arc::new(HttpLlmClient::default()),
        store: Some(Store::open_in_memory().unwrap()),
        embedders: Arc::new(BuiltInEmbedderOnly),
        clock: None,
        events: Default::default(),
        host: None,
    };
    Engine::open_with(config, paths, seams).await.unwrap()
}

fn router(engine: &Engine, token: &str) -> axum::Router {
    let guard = Guard {
        token: Arc::from(token),
        allowed_hosts: Guard::hosts_for(HOST.parse().unwrap()).into(),
    };
    app(engine.clone(), guard)
}

async fn get_settings(router: &axum::Router, authorization: &str) -> StatusCode {
    let request = Request::builder()
        .uri("/v1/settings")
        .header(header::HOST, HOST)
        .header(header::AUTHORIZATION, authorization)
        .body(Body::empty())
        .unwrap();
    router.clone().oneshot(request).await.unwrap().status()
}

#[tokio::test]
async fn the_bearer_scheme_is_matched_without_regard_to_case() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir).await;
    let router = router(&engine, "s3cret");
    for authorization in [
        "Bearer s3cret",
        "bearer s3cret",
        "BEARER s3cret",
        "bEaReR  s3cret",
    ] {
        assert_eq!(
            get_settings(&router, authorization).await,
            StatusCode::OK,
            "{authorization}"
        );
    }
    for authorization in ["Bearer wrong", "Basic s3cret", "Bearers3cret", "s3cret"] {
        assert_eq!(
            get_settings(&router, authorization).await,
            StatusCode::UNAUTHORIZED,
            "{authorization}"
        );
    }
}

/// Collects what `tracing` writes, for checking a log line.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn load_token_logged(path: &std::path::Path) -> (String, String) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let token =
        tracing::subscriber::with_default(subscriber, || load_or_create_token(path).unwrap());
    (token, captured.text())
}

#[cfg(unix)]
fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
#[tokio::test]
async fn a_token_file_readable_by_others_is_rotated_and_the_old_token_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api-token");
    let old = "0123456789abcdef0123456789abcdef";
    std::fs::write(&path, old).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();

    let (token, log) = load_token_logged(&path);
    assert_ne!(token, old, "a token others could read is not kept");
    assert_eq!(token.len(), 64);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), token);
    assert_eq!(mode_of(&path), 0o600);
    assert!(
        log.contains("readable by other users (mode 644)") && log.contains("refused"),
        "{log}"
    );

    let engine = engine(&dir).await;
    let router = router(&engine, &token);
    assert_eq!(
        get_settings(&router, &format!("Bearer {old}")).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        get_settings(&router, &format!("Bearer {token}")).await,
        StatusCode::OK
    );

    // A private token file is kept as it is, without a word.
    let (again, log) = load_token_logged(&path);
    assert_eq!(again, token);
    assert!(log.is_empty(), "{log}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
    assert_eq!(load_token_logged(&path).0, token);
    // Readable by the group only is exposed too.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert_ne!(load_token_logged(&path).0, token);
    assert_eq!(mode_of(&path), 0o600);
}

#[tokio::test]
async fn a_token_is_created_private_on_first_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api-token");
    let (token, log) = load_token_logged(&path);
    assert_eq!(token.len(), 64);
    assert!(log.is_empty(), "{log}");
    #[cfg(unix)]
    assert_eq!(mode_of(&path), 0o600);
    assert_eq!(load_or_create_token(&path).unwrap(), token);
}

/// An endpoint that answers 200 and streams `line_bytes` bytes of one line that never ends,
/// then closes: what an agent-chosen endpoint that is not a chat server might send.
async fn endless_line_server(line_bytes: usize) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = vec![0u8; 64 * 1024];
        let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut request).await;
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(b"data: ").await.unwrap();
        let chunk = vec![b'a'; 64 * 1024];
        let mut sent = 0;
        while sent < line_bytes {
            if socket.write_all(&chunk).await.is_err() {
                return; // the client gave up, as it should
            }
            sent += chunk.len();
        }
        let _ = socket.shutdown().await;
    });
    format!("http://{address}/v1")
}

#[tokio::test]
async fn a_streamed_line_over_1_mib_is_refused_with_a_clear_error() {
    let base_url = endless_line_server(3 * 1024 * 1024).await;
    let endpoint = ChatEndpoint {
        base_url,
        api_key: None,
        model: "m".into(),
    };
    let request = ChatRequest {
        messages: vec![ChatMessage {
            role: "user".into(),
            content: "hi".into(),
        }],
        json_schema: None,
        max_tokens: 16,
    };
    let err = HttpLlmClient::default()
        .chat(&endpoint, request, None)
        .await
        .unwrap_err();
    match &err {
        LlmError::Protocol { message, .. } => assert!(
            message.contains("exceeds 1 MiB without a line break"),
            "{message}"
        ),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}
