//! The hostile-input matrix over the window's IPC commands (the reliability issue): what the
//! API's matrix (`tests/api_hostile.rs`) does for HTTP, here for what a compromised or buggy
//! page could `invoke`.
//!
//! Each case goes through Tauri's own IPC path (`tauri::test::get_ipc_response` on a mock
//! webview, with the app's real handler, [`crate::commands`]), so Tauri's argument checks run
//! as in the app, then the command's call of a real engine's API (an engine on a temporary
//! folder, with a draft waiting and a review queued, serving its API on a free port). Each case
//! must be refused — by Tauri (missing or ill-typed arguments) or by the engine with a client
//! error's code, never `internal` — and must leave the engine as it was: every table's rows,
//! every file of the data folder and the live turns, compared before and after each case.

#[path = "../../tests/common/offline.rs"]
mod offline;
#[path = "../../tests/common/snapshot.rs"]
mod snapshot;

use std::collections::BTreeMap;
use std::time::Duration;

use lull::drafts::records::DraftKind;
use lull::error_code::ErrorCode;
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{WebviewWindow, WebviewWindowBuilder};

use crate::events::HostCell;
use crate::link::EngineLink;
use snapshot::{differences, settled_snapshot, snapshot};

/// Text far longer than any argument has a use for (the API's body limit is smaller).
const HUGE: usize = 2 * 1024 * 1024;
/// JSON nested deeper than any parser on the way allows (serde_json stops at 128).
const DEEP: usize = 1_000;

/// One invocation: a command, its arguments as the page would send them, what is hostile.
struct Case {
    command: &'static str,
    args: Value,
    what: String,
}

/// How a case was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Refusal {
    /// Tauri refused the arguments before the command ran.
    Arguments,
    /// The command ran and the engine (or the window's link) refused with a client error.
    Command(&'static str),
}

fn deep_json() -> Value {
    let mut value = json!(1);
    for _ in 0..DEEP {
        value = json!([value]);
    }
    value
}

/// Values for an id that name nothing, or try to name something else.
fn hostile_ids() -> Vec<(&'static str, Value)> {
    vec![
        ("an empty id", json!("")),
        ("`.`", json!(".")),
        ("`..`", json!("..")),
        ("a route above", json!("../status")),
        ("an encoded `..`", json!("%2e%2e")),
        ("an absolute path", json!("/etc/passwd")),
        ("backslashes", json!("..\\..\\skills")),
        ("a NUL", json!("d\u{0}1")),
        ("a right-to-left override", json!("\u{202e}1d")),
        ("a query", json!("x?status=queued")),
        ("a fragment", json!("x#approve")),
        ("a huge id", json!("d".repeat(HUGE))),
        ("an unknown id", json!("nothing-has-this-id")),
        ("a number", json!(42)),
        ("null", Value::Null),
        ("an array", json!([])),
        ("an object", json!({"id": "x"})),
    ]
}

/// Values for a text argument (a reason, an edit) that must be refused.
fn hostile_texts() -> Vec<(&'static str, Value)> {
    vec![
        ("empty", json!("")),
        ("huge", json!("r".repeat(HUGE))),
        ("a number", json!(7)),
        ("null", Value::Null),
        ("an object", json!({"text": "x"})),
    ]
}

/// Every case: each command with each hostile value of each argument, the others valid.
fn cases(draft: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |command, args: Value, what: String| {
        cases.push(Case {
            command,
            args,
            what,
        })
    };
    let valid_edit = "---\nname: deploy\ndescription: Deploy it.\n---\n# deploy\n\nRun it.\n";
    // Commands that name one thing by id.
    let by_id: [(&str, Value); 11] = [
        ("get_draft", json!({})),
        ("approve_draft", json!({})),
        ("reject_draft", json!({"reason": "not now"})),
        ("edit_draft", json!({"skillMd": valid_edit})),
        ("dismiss_finding", json!({"index": 0, "reason": "ours"})),
        ("run_review_now", json!({})),
        ("drop_review", json!({})),
        ("get_job", json!({})),
        ("cancel_job", json!({})),
        ("resume_job", json!({})),
        ("promote_job", json!({})),
    ];
    for (command, rest) in &by_id {
        for (what, id) in hostile_ids() {
            let mut args = rest.clone();
            args["id"] = id;
            add(command, args, format!("id: {what}"));
        }
        add(command, rest.clone(), "no id".into());
    }
    // The draft that waits, with a hostile other argument.
    for (what, reason) in hostile_texts() {
        add(
            "reject_draft",
            json!({"id": draft, "reason": reason}),
            format!("reason: {what}"),
        );
        let args = json!({"id": draft, "index": 0, "reason": reason});
        add("dismiss_finding", args, format!("reason: {what}"));
    }
    add("reject_draft", json!({"id": draft}), "no reason".into());
    let edits = [
        ("not a SKILL.md", json!("just some words")),
        (
            "another skill's name",
            json!(valid_edit.replace("name: deploy", "name: other")),
        ),
        (
            "a name that climbs out",
            json!(valid_edit.replace("name: deploy", "name: ../../x")),
        ),
        ("a NUL", json!(valid_edit.replace("Run it.", "Run\u{0}it."))),
    ];
    for (what, text) in hostile_texts().into_iter().chain(edits) {
        add(
            "edit_draft",
            json!({"id": draft, "skillMd": text}),
            format!("skillMd: {what}"),
        );
    }
    add(
        "edit_draft",
        json!({"id": draft, "skill_md": valid_edit}),
        "snake_case key".into(),
    );
    let indexes = [
        ("negative", json!(-1)),
        ("past u32", json!(1_u64 << 40)),
        ("no such finding", json!(99)),
        ("a string", json!("0")),
        ("a fraction", json!(0.5)),
        ("null", Value::Null),
    ];
    for (what, index) in indexes {
        let args = json!({"id": draft, "index": index, "reason": "ours"});
        add("dismiss_finding", args, format!("index: {what}"));
    }
    // Filters.
    let statuses = [
        ("unknown", json!("asleep")),
        ("a second parameter", json!("queued&status=done")),
        ("empty", json!("")),
        ("a NUL", json!("queued\u{0}")),
        ("huge", json!("q".repeat(HUGE))),
        ("a number", json!(1)),
        ("an object", json!({"status": "queued"})),
    ];
    for command in ["list_reviews", "list_drafts"] {
        for (what, status) in statuses.clone() {
            add(
                command,
                json!({"status": status}),
                format!("status: {what}"),
            );
        }
    }
    // Bodies the commands pass on as they came.
    let policies = [
        ("negative rounds", json!({"max_rounds": -1})),
        ("no rounds", json!({"max_rounds": 0})),
        ("rounds past u32", json!({"max_rounds": 1e20})),
        ("rounds as text", json!({"max_rounds": "3"})),
        (
            "a negative clock",
            json!({"max_rounds": 3, "wall_clock_s": -5}),
        ),
        ("an unknown field", json!({"max_rounds": 3, "force": true})),
        ("a string", json!("3")),
        ("an array", json!([3])),
        ("null", Value::Null),
        ("nested deep", deep_json()),
    ];
    for (what, stopping) in policies {
        add(
            "start_job",
            json!({"stopping": stopping}),
            format!("stopping: {what}"),
        );
    }
    add("start_job", json!({}), "no stopping".into());
    let patches = [
        ("an unknown mode", json!({"defer_mode": "sometimes"})),
        ("paused as text", json!({"paused": "yes"})),
        ("paused as a number", json!({"paused": 1})),
        ("an unknown setting", json!({"surprise": true})),
        ("a huge value", json!({"defer_mode": "n".repeat(HUGE)})),
        ("an array", json!([{"paused": true}])),
        ("a string", json!("paused")),
        ("null", Value::Null),
        ("nested deep", deep_json()),
    ];
    for (what, patch) in patches {
        add(
            "update_settings",
            json!({"patch": patch}),
            format!("patch: {what}"),
        );
    }
    add("update_settings", json!({}), "no patch".into());
    // The login item: only ill-typed values (a valid one would write the person's autostart).
    for (what, enabled) in [
        ("text", json!("yes")),
        ("a number", json!(1)),
        ("null", Value::Null),
    ] {
        add(
            "set_autostart",
            json!({"enabled": enabled}),
            format!("enabled: {what}"),
        );
    }
    add("set_autostart", json!({}), "no enabled".into());
    cases
}

fn invoke(
    webview: &WebviewWindow<MockRuntime>,
    command: &str,
    args: Value,
) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: command.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    tauri::test::get_ipc_response(webview, request)
        .map(|body| body.deserialize::<Value>().unwrap_or(Value::Null))
}

/// How the answer refused the case, or why it is not a refusal.
fn judge(answer: Result<Value, Value>) -> Result<Refusal, String> {
    match answer {
        Ok(value) => Err(format!("answered {}", truncated(&value))),
        Err(Value::String(_)) => Ok(Refusal::Arguments),
        Err(error) => {
            let code = error["code"]
                .as_str()
                .and_then(ErrorCode::parse)
                .ok_or_else(|| format!("not the error shape: {}", truncated(&error)))?;
            let client_error = !matches!(
                code,
                ErrorCode::Internal
                    | ErrorCode::EngineUnavailable
                    | ErrorCode::EngineStarting
                    | ErrorCode::ShuttingDown
                    | ErrorCode::StorageFull
            );
            if !client_error || !error["message"].is_string() {
                return Err(format!("refused as {code}: {}", truncated(&error)));
            }
            Ok(Refusal::Command(code.as_str()))
        }
    }
}

fn truncated(value: &Value) -> String {
    value.to_string().chars().take(300).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_refuses_hostile_input_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = offline::offline_engine(dir.path()).await;
    let skills = engine.config().skills_dir(&engine.paths().data_dir);
    let text = "---\nname: deploy\ndescription: Deploy the service.\n---\n# deploy\n\nRun `make deploy`.\n";
    let draft = offline::seed_draft(&store, &skills, "deploy", DraftKind::Create, text).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let api = tokio::spawn(lull::api::serve(engine.clone(), async {
        let _ = stopped.await;
    }));
    while !engine.paths().api_json().exists() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let link = EngineLink::new(engine.paths().clone());
    let review = json!({"session_key": "s1", "messages": [{"role": "user", "content": "hi"}]});
    link.post("/v1/reviews", review).await.unwrap();

    let app = mock_builder()
        .invoke_handler(crate::commands())
        .manage(link)
        .manage(HostCell::default())
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();

    let cases = cases(&draft);
    let start = settled_snapshot(&engine, &store).await;
    let mut before = snapshot(&engine, &store).await;
    let mut failures = Vec::new();
    let mut per_command: BTreeMap<&str, usize> = BTreeMap::new();
    let mut refusals: BTreeMap<Refusal, usize> = BTreeMap::new();
    for case in &cases {
        *per_command.entry(case.command).or_default() += 1;
        let label = format!("{} — {}", case.command, case.what);
        let answer =
            tokio::task::block_in_place(|| invoke(&webview, case.command, case.args.clone()));
        match judge(answer) {
            Ok(refusal) => *refusals.entry(refusal).or_default() += 1,
            Err(why) => failures.push(format!("{label}: {why}")),
        }
        let after = snapshot(&engine, &store).await;
        let found = differences(&before, &after);
        if !found.is_empty() {
            failures.push(format!("{label}: changed {}", found.join("; ")));
            before = after;
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let end = snapshot(&engine, &store).await;
    for found in differences(&start, &end) {
        failures.push(format!("over the whole run: {found}"));
    }
    for (command, count) in &per_command {
        println!("{count:>4}  {command}");
    }
    println!(
        "ipc hostile: {} cases over {} commands ({})",
        cases.len(),
        per_command.len(),
        refusals
            .iter()
            .map(|(refusal, n)| match refusal {
                Refusal::Arguments => format!("{n} refused by Tauri's argument check"),
                Refusal::Command(code) => format!("{n} {code}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = stop.send(());
    api.await.unwrap().unwrap();
    engine.shutdown().await;
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
