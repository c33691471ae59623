//! The local API's contract, driven through the router without a socket.
//!
//! Each test gets its own data directory and engine; `Harness::call` builds a request with the
//! right `Host` and token unless the test overrides them.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use lull::api::{app, Guard};
use lull::{Config, Engine, Paths};

const TOKEN: &str = "test-token";
const HOST: &str = "127.0.0.1:7707";

/// The defaults, with the supervisor's state file in the test's own folder: no test reads the
/// developer's real one.
fn config_in(dir: &std::path::Path) -> Config {
    let mut config = Config::default();
    config.server.state_file = dir.join("server.json");
    config
}

struct Harness {
    _dir: tempfile::TempDir,
    engine: Engine,
    paths: Paths,
}

impl Harness {
    async fn new() -> Harness {
        Harness::with_skills(&[]).await
    }

    /// An engine whose skills directory holds `skills` as `(name, description)`.
    async fn with_skills(skills: &[(&str, &str)]) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        for (name, description) in skills {
            let folder = dir.path().join("data/skills").join(name);
            std::fs::create_dir_all(&folder).unwrap();
            let text = format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n");
            std::fs::write(folder.join("SKILL.md"), text).unwrap();
        }
        let paths = Paths {
            data_dir: dir.path().join("data"),
            config_file: dir.path().join("config.toml"),
        };
        let engine = Engine::open(config_in(dir.path()), paths.clone())
            .await
            .unwrap();
        Harness {
            _dir: dir,
            engine,
            paths,
        }
    }

    fn router(&self) -> axum::Router {
        let guard = Guard {
            token: Arc::from(TOKEN),
            allowed_hosts: Guard::hosts_for(HOST.parse().unwrap()).into(),
        };
        app(self.engine.clone(), guard)
    }

    async fn send(&self, request: Request<Body>) -> (StatusCode, Value) {
        let response = self.router().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        };
        (status, value)
    }

    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut builder =
            request(method, path).header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
        let body = match body {
            Some(value) => {
                builder = builder.header(header::CONTENT_TYPE, "application/json");
                Body::from(value.to_string())
            }
            None => Body::empty(),
        };
        self.send(builder.body(body).unwrap()).await
    }
}

fn request(method: &str, path: &str) -> axum::http::request::Builder {
    Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, HOST)
}

fn error_code(body: &Value) -> &str {
    body["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("not the error shape: {body}"))
}

#[tokio::test]
async fn health_needs_no_token() {
    let harness = Harness::new().await;
    let (status, body) = harness
        .send(request("GET", "/v1/health").body(Body::empty()).unwrap())
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "ok");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
}

#[tokio::test]
async fn status_needs_the_right_token() {
    let harness = Harness::new().await;
    let (status, body) = harness
        .send(request("GET", "/v1/status").body(Body::empty()).unwrap())
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(error_code(&body), "unauthorized");

    let wrong = request("GET", "/v1/status")
        .header(header::AUTHORIZATION, "Bearer nope")
        .body(Body::empty());
    let (status, _) = harness.send(wrong.unwrap()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let (status, body) = harness.call("GET", "/v1/status", None).await;
    assert_eq!(status, StatusCode::OK);
    for key in ["defer_mode", "paused", "server", "queue", "drafts", "jobs"] {
        assert!(body.get(key).is_some(), "status lacks {key}: {body}");
    }
    for key in ["state", "base_url", "models", "idle"] {
        assert!(
            body["server"].get(key).is_some(),
            "server lacks {key}: {body}"
        );
    }
    assert_eq!(body["queue"], json!({"queued": 0, "running": 0}));
}

#[tokio::test]
async fn foreign_origin_is_refused_and_the_app_origin_is_not() {
    let harness = Harness::new().await;
    let evil = request("GET", "/v1/health")
        .header(header::ORIGIN, "http://evil.example")
        .body(Body::empty());
    let (status, body) = harness.send(evil.unwrap()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(error_code(&body), "origin_not_allowed");

    let app = request("GET", "/v1/health")
        .header(header::ORIGIN, "tauri://localhost")
        .body(Body::empty());
    assert_eq!(harness.send(app.unwrap()).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_rebinding_host_is_refused() {
    let harness = Harness::new().await;
    let rebinding = Request::builder()
        .uri("/v1/health")
        .header(header::HOST, "evil.example:7707")
        .body(Body::empty());
    let (status, body) = harness.send(rebinding.unwrap()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(error_code(&body), "host_not_allowed");

    let localhost = Request::builder()
        .uri("/v1/health")
        .header(header::HOST, "localhost:7707")
        .body(Body::empty());
    assert_eq!(harness.send(localhost.unwrap()).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_ten_mebibyte_body_is_413_with_or_without_a_length() {
    let harness = Harness::new().await;
    let big = vec![b' '; 10 * 1024 * 1024];
    let declared = request("PATCH", "/v1/settings")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_LENGTH, big.len())
        .body(Body::from(big.clone()));
    let (status, body) = harness.send(declared.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error_code(&body), "body_too_large");

    let pieces: Vec<Result<Vec<u8>, std::io::Error>> =
        big.chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
    let chunks = futures_util::stream::iter(pieces);
    let streamed = request("PATCH", "/v1/settings")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(chunks));
    let (status, body) = harness.send(streamed.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error_code(&body), "body_too_large");
}

#[tokio::test]
async fn malformed_json_is_400_with_the_error_shape() {
    let harness = Harness::new().await;
    let broken = request("PATCH", "/v1/settings")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from("{\"paused\": tru"));
    let (status, body) = harness.send(broken.unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&body), "malformed_json");
}

#[tokio::test]
async fn an_invalid_settings_patch_is_422_and_changes_nothing() {
    let harness = Harness::new().await;
    let (_, before) = harness.call("GET", "/v1/settings", None).await;
    for bad in [
        json!({"defer_mode": "sometimes"}),
        json!({"paused": "yes"}),
        json!({"paused": true, "volume": 11}),
        json!({"reviews_enabled": null, "paused": true, "defer_mode": 3}),
    ] {
        let (status, body) = harness
            .call("PATCH", "/v1/settings", Some(bad.clone()))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        assert_eq!(error_code(&body), "invalid_body");
    }
    let (_, after) = harness.call("GET", "/v1/settings", None).await;
    assert_eq!(before, after);
}

#[tokio::test]
async fn a_valid_patch_applies_and_survives_a_reopen() {
    let harness = Harness::new().await;
    let (status, body) = harness
        .call(
            "PATCH",
            "/v1/settings",
            Some(json!({"defer_mode": "never", "paused": true, "notify_server_changes": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"defer_mode": "never", "paused": true, "reviews_enabled": true,
               "notify_server_changes": true})
    );
    harness.engine.shutdown().await;

    let reopened = Engine::open(config_in(harness._dir.path()), harness.paths.clone())
        .await
        .unwrap();
    assert_eq!(reopened.settings(), serde_json::from_value(body).unwrap());
    assert_eq!(reopened.generation(), harness.engine.generation() + 1);
}

#[tokio::test]
async fn unknown_routes_and_methods_use_the_error_shape() {
    let harness = Harness::new().await;
    let (status, body) = harness.call("GET", "/v1/nothing-here", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error_code(&body), "not_found");
    let (status, body) = harness.call("DELETE", "/v1/status", None).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(error_code(&body), "method_not_allowed");
}

#[tokio::test]
async fn events_stream_settings_changes() {
    let harness = Harness::new().await;
    let events = request("GET", "/v1/events")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .body(Body::empty());
    let response = harness.router().oneshot(events.unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let mut body = response.into_body();

    harness
        .call("PATCH", "/v1/settings", Some(json!({"paused": true})))
        .await;
    let frame = tokio::time::timeout(std::time::Duration::from_secs(2), body.frame())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let text = String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap();
    let data: Value = serde_json::from_str(text.trim().strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(data["type"], "settings_changed");
    assert_eq!(data["settings"]["paused"], true);
}

#[tokio::test]
async fn route_then_outcome_once_and_clear_errors_otherwise() {
    let harness = Harness::with_skills(&[
        (
            "git-bisect",
            "find the commit that broke the build by bisecting history",
        ),
        ("pdf-extract", "pull text and tables out of pdf files"),
    ])
    .await;
    let (status, body) = harness
        .call(
            "POST",
            "/v1/route",
            Some(json!({"query": "which commit broke the build?", "top_k": 2})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let ranked = body["ranked"].as_array().unwrap();
    assert_eq!(ranked.len(), 2);
    assert_eq!(ranked[0]["skill"], "git-bisect");
    for key in ["score", "cosine", "rl"] {
        assert!(ranked[0][key].is_number(), "{key} missing: {body}");
    }
    let route_id = body["route_id"].as_str().unwrap().to_string();

    let outcome = json!({"route_id": route_id, "skill": "git-bisect", "outcome": "success"});
    let (status, _) = harness
        .call("POST", "/v1/outcomes", Some(outcome.clone()))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = harness.call("POST", "/v1/outcomes", Some(outcome)).await;
    assert_eq!(
        (status, error_code(&body)),
        (StatusCode::CONFLICT, "conflict")
    );

    let unknown = json!({"route_id": "no-such-route", "skill": "git-bisect", "outcome": "failure"});
    let (status, body) = harness.call("POST", "/v1/outcomes", Some(unknown)).await;
    assert_eq!(
        (status, error_code(&body)),
        (StatusCode::NOT_FOUND, "not_found")
    );
    let (status, body) = harness
        .call(
            "POST",
            "/v1/outcomes",
            Some(json!({"route_id": "x", "skill": "y", "outcome": "meh"})),
        )
        .await;
    assert_eq!(
        (status, error_code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body")
    );

    let (_, status_body) = harness.call("GET", "/v1/status", None).await;
    assert_eq!(status_body["routing"]["skills"], 2, "{status_body}");
    assert_eq!(status_body["routing"]["updates"], 1, "{status_body}");
}

/// Issue 11, item 13: a review the engine cannot take is refused with the error shape, and
/// nothing of it reaches the database.
#[tokio::test]
async fn an_unusable_review_is_refused_and_nothing_is_stored() {
    let harness = Harness::new().await;
    let message = json!({"role": "user", "content": "hi"});
    for (bad, why) in [
        (
            json!({"session_key": "", "messages": [message]}),
            "empty key",
        ),
        (
            json!({"session_key": "   ", "messages": [message]}),
            "blank key",
        ),
        (
            json!({"session_key": "k".repeat(100_000), "messages": [message]}),
            "100,000-character key",
        ),
        (
            json!({"session_key": "k".repeat(257), "messages": [message]}),
            "a key one over the limit",
        ),
        (json!({"session_key": "s1", "messages": []}), "no messages"),
        (
            json!({"session_key": "s1", "messages": [message, {"role": "robot", "content": "beep"}]}),
            "unknown role",
        ),
    ] {
        let (status, body) = harness.call("POST", "/v1/reviews", Some(bad)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{why}: {body}");
        assert_eq!(error_code(&body), "invalid_request", "{why}");
        assert!(
            !body["error"]["message"].as_str().unwrap().is_empty(),
            "{why}"
        );
    }
    let (status, body) = harness
        .call(
            "POST",
            "/v1/reviews",
            Some(json!({"session_key": "k".repeat(256), "messages": [message]})),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::ACCEPTED,
        "the limit itself is fine: {body}"
    );
    let (_, listed) = harness.call("GET", "/v1/reviews", None).await;
    assert_eq!(
        listed["reviews"].as_array().unwrap().len(),
        1,
        "only the good one is stored"
    );
}

/// Issue 11, item 12: an unknown status filter is a 400 on both lists, not an empty answer.
#[tokio::test]
async fn an_unknown_status_filter_is_400_on_reviews_and_candidates() {
    let harness = Harness::new().await;
    for path in ["/v1/reviews?status=bogus", "/v1/candidates?status=bogus"] {
        let (status, body) = harness.call("GET", path, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert_eq!(error_code(&body), "invalid_query", "{path}");
    }
    let (status, body) = harness
        .call("GET", "/v1/candidates?status=open", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"candidates": []}));
}

/// Issue 11, item 4: patches at the same moment (a tray toggle and an agent's PATCH) all land,
/// and memory and the database agree afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_settings_patches_all_land_in_memory_and_in_the_database() {
    use lull::settings::SettingsPatch;
    let harness = Harness::new().await;
    for round in 0..20 {
        let paused = round % 2 == 0;
        let defer_mode = if paused {
            lull::config::DeferMode::Never
        } else {
            lull::config::DeferMode::Auto
        };
        let (a, b, c) = (
            harness.engine.clone(),
            harness.engine.clone(),
            harness.engine.clone(),
        );
        let (first, second, third) = tokio::join!(
            tokio::spawn(async move {
                a.update_settings(SettingsPatch {
                    paused: Some(paused),
                    ..Default::default()
                })
                .await
            }),
            tokio::spawn(async move {
                b.update_settings(SettingsPatch {
                    defer_mode: Some(defer_mode),
                    ..Default::default()
                })
                .await
            }),
            tokio::spawn(async move {
                c.update_settings(SettingsPatch {
                    notify_server_changes: Some(paused),
                    ..Default::default()
                })
                .await
            }),
        );
        for result in [first, second, third] {
            result.unwrap().unwrap();
        }
        let settings = harness.engine.settings();
        assert_eq!(
            (
                settings.paused,
                settings.defer_mode,
                settings.notify_server_changes
            ),
            (paused, defer_mode, paused),
            "round {round}: a change was lost in memory"
        );
    }
    let in_memory = harness.engine.settings();
    harness.engine.shutdown().await;
    let reopened = Engine::open(config_in(harness._dir.path()), harness.paths.clone())
        .await
        .unwrap();
    assert_eq!(reopened.settings(), in_memory, "memory and database agree");
}
