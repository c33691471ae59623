//! The state file reader, the URL match, the reading's JSON shape and the probe cache — no
//! network needed.

use std::sync::Arc;
use std::time::Duration;

use lull::server::{
    host_port, is_managed_url, parse_state_file, read_state_file, CachedProbe, ManualProbe,
    ModelReading, ModelStatus, ServerProbe, ServerReading, ServerState, StateFileReading,
};
use serde_json::json;

fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn invalid_reason(bytes: &[u8]) -> String {
    parse_state_file(bytes).expect_err("should be invalid")
}

#[test]
fn a_good_file_parses_and_keeps_unknown_fields() {
    let record = parse_state_file(
        br#"{"base_url":"http://127.0.0.1:8080/v1","api_key":"k","pid":42,"create_time":1.5,"owner_pid":7}"#,
    )
    .unwrap();
    assert_eq!(record.base_url, "http://127.0.0.1:8080/v1");
    assert_eq!(record.api_key.as_ref().map(|k| k.expose()), Some("k"));
    assert_eq!(record.pid, Some(42));
    assert_eq!(record.extra["owner_pid"], json!(7));
    assert_eq!(record.extra["create_time"], json!(1.5));
    assert!(
        !format!("{record:?}").contains("\"k\""),
        "the key stays out of Debug"
    );
}

#[test]
fn a_leading_bom_is_fine() {
    let record = parse_state_file(b"\xEF\xBB\xBF{\"base_url\":\"http://h:1/v1\"}").unwrap();
    assert_eq!(record.base_url, "http://h:1/v1");
    assert_eq!((record.api_key, record.pid), (None, None));
}

#[test]
fn each_bad_file_is_invalid_with_its_reason() {
    let cases: &[(&[u8], &str)] = &[
        (b"", "empty"),
        (b"\xEF\xBB\xBF  \n", "empty"),
        (b"{\"base_url\": \"http://127.0.0.1:80", "truncated"),
        (b"{\"base_url\": http}", "not valid JSON"),
        (b"[{\"base_url\":\"http://h/v1\"}]", "holds an array"),
        (b"\"http://h/v1\"", "holds a string"),
        (b"{\"api_key\":\"k\",\"pid\":1}", "no `base_url`"),
        (b"{\"base_url\":null}", "no `base_url`"),
        (
            b"{\"base_url\":8080}",
            "`base_url` in the state file is a number",
        ),
        (b"{\"base_url\":[\"http://h\"]}", "is an array"),
        (b"{\"base_url\":\"not a url\"}", "not a URL"),
        (b"{\"base_url\":\"ftp://h/v1\"}", "not an http(s) URL"),
        (
            b"{\"base_url\":\"http://h/v1\",\"api_key\":5}",
            "`api_key` in the state file is a number",
        ),
        (
            b"{\"base_url\":\"http://h/v1\",\"pid\":\"123\"}",
            "`pid` in the state file is a string",
        ),
        (
            b"{\"base_url\":\"http://h/v1\",\"pid\":0}",
            "not a valid process id",
        ),
        (
            b"{\"base_url\":\"http://h/v1\",\"pid\":-5}",
            "not a valid process id",
        ),
        (
            b"{\"base_url\":\"http://h/v1\",\"pid\":1.5}",
            "not a valid process id",
        ),
    ];
    for (bytes, expected) in cases {
        let reason = invalid_reason(bytes);
        assert!(
            reason.contains(expected),
            "{:?}: reason {reason:?} lacks {expected:?}",
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn reading_the_file_tells_absent_stale_alive_and_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.json");
    assert_eq!(read_state_file(&path), StateFileReading::Absent);
    assert_eq!(
        read_state_file(&dir.path().join("no/such/folder/server.json")),
        StateFileReading::Absent
    );

    let pid = dead_pid();
    std::fs::write(
        &path,
        format!("{{\"base_url\":\"http://h:1/v1\",\"pid\":{pid}}}"),
    )
    .unwrap();
    match read_state_file(&path) {
        StateFileReading::Stale { record, reason } => {
            assert_eq!(record.base_url, "http://h:1/v1");
            assert!(reason.contains(&pid.to_string()), "{reason}");
        }
        other => panic!("expected stale, got {other:?}"),
    }

    let me = std::process::id();
    std::fs::write(
        &path,
        format!("{{\"base_url\":\"http://h:1/v1\",\"pid\":{me}}}"),
    )
    .unwrap();
    assert!(matches!(read_state_file(&path), StateFileReading::Alive(_)));

    let folder_in_the_way = dir.path().join("dir.json");
    std::fs::create_dir(&folder_in_the_way).unwrap();
    assert!(matches!(
        read_state_file(&folder_in_the_way),
        StateFileReading::Invalid { .. }
    ));
}

#[test]
fn pid_one_is_alive_even_though_we_may_not_signal_it() {
    assert!(lull::server::pid_is_alive(1));
    assert!(lull::server::pid_is_alive(std::process::id()));
    assert!(!lull::server::pid_is_alive(dead_pid()));
}

#[test]
fn runtime_urls_match_the_managed_server_exactly() {
    let managed = "http://127.0.0.1:8080/v1";
    let cases = [
        ("http://127.0.0.1:8080/v1", true),
        ("http://127.0.0.1:8080", true),
        ("http://127.0.0.1:8080/v1/chat/completions", true),
        ("HTTP://127.0.0.1:8080/V1", true),
        ("https://127.0.0.1:8080/v1", true), // host:port is what names the GPU
        ("http://user:pw@127.0.0.1:8080/v1", true),
        ("http://127.0.0.1:8081/v1", false),
        ("http://localhost:8080/v1", false), // no name resolution: doubt is "not managed"
        ("http://127.0.0.1/v1", false),
        ("127.0.0.1:8080/v1", false),
        ("localhost:8080", false),
        ("", false),
        ("not a url", false),
        ("file:///tmp/x", false),
    ];
    for (runtime, expected) in cases {
        assert_eq!(is_managed_url(runtime, managed), expected, "{runtime}");
    }
    assert!(is_managed_url(
        "http://LlamaBox.Local/v1",
        "http://llamabox.local:80/v1"
    ));
    assert!(is_managed_url(
        "https://gpu.example/v1",
        "https://GPU.example:443"
    ));
    assert!(
        !is_managed_url("http://gpu.example/v1", "https://gpu.example/v1"),
        "80 is not 443"
    );
    assert!(is_managed_url(
        "http://[::1]:9000/v1",
        "http://[0:0:0:0:0:0:0:1]:9000"
    ));
    assert!(!is_managed_url("http://127.0.0.1:8080", "garbage"));
    assert_eq!(
        host_port("http://Example.COM/v1"),
        Some(("example.com".to_owned(), 80))
    );
}

fn ready_reading() -> ServerReading {
    ServerReading {
        state: ServerState::Ready,
        base_url: Some("http://127.0.0.1:8080/v1".to_owned()),
        models: vec![
            ModelReading {
                id: "a".to_owned(),
                status: ModelStatus::Loaded,
                busy_slots: 1,
            },
            ModelReading {
                id: "b".to_owned(),
                status: ModelStatus::Sleeping,
                busy_slots: 0,
            },
        ],
        idle: false,
        reason: Some("the server is processing: a (1 busy)".to_owned()),
        mode: None,
        api_key: Some(lull::server::ApiKey::new("secret")),
    }
}

#[test]
fn a_reading_serialises_as_the_status_contract_without_the_key() {
    let value = serde_json::to_value(ready_reading()).unwrap();
    assert_eq!(
        value,
        json!({
            "state": "ready",
            "base_url": "http://127.0.0.1:8080/v1",
            "models": [
                {"id": "a", "status": "loaded", "busy_slots": 1},
                {"id": "b", "status": "sleeping", "busy_slots": 0}
            ],
            "idle": false,
            "reason": "the server is processing: a (1 busy)"
        })
    );
    let reading = ready_reading();
    assert_eq!(reading.first_loaded_model().unwrap().id, "a");
    assert_eq!(reading.n_busy_slots(), 1);
    assert!(reading.is_managed_url("http://127.0.0.1:8080/v1"));
    assert!(!format!("{reading:?}").contains("secret"));
}

#[tokio::test(start_paused = true)]
async fn the_cache_reuses_a_reading_for_its_ttl_on_the_virtual_clock() {
    let manual = Arc::new(ManualProbe::new(ready_reading()));
    let cached = CachedProbe::new(manual.clone(), Duration::from_millis(250));
    cached.read().await;
    cached.read().await;
    assert_eq!(manual.reads(), 1, "second read within the ttl is cached");
    tokio::time::advance(Duration::from_millis(249)).await;
    cached.read().await;
    assert_eq!(manual.reads(), 1);
    tokio::time::advance(Duration::from_millis(2)).await;
    cached.read().await;
    assert_eq!(manual.reads(), 2, "past the ttl the probe is asked again");
    cached.invalidate();
    let reading = cached.read().await;
    assert_eq!(manual.reads(), 3, "an invalidated cache asks again");
    assert_eq!(reading.state, ServerState::Ready);

    // Nobody asks for an hour of virtual time: the probe is never called.
    tokio::time::advance(Duration::from_secs(3600)).await;
    assert_eq!(manual.reads(), 3);

    let seam: Arc<dyn ServerProbe> = manual.clone();
    manual.set(ServerReading::not_ready(ServerState::Absent, None, "gone"));
    assert_eq!(seam.read().await.state, ServerState::Absent);
}
