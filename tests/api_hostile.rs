//! A hostile-input matrix over every route of the local API (the reliability issue).
//!
//! Whatever got past loopback can still send the API anything: a wrong method, no token, a
//! body that is not JSON, not UTF-8, nested ten thousand deep, a key given twice, a number past
//! `u64`, a string of 5 MiB, a path parameter that climbs out of the skills folder. Each such
//! request must be refused with the contract's error shape (`{"error":{"code","message"}}`)
//! and the 4xx its kind calls for — never a 2xx, never a 5xx, never a panic — and must leave
//! everything as it was: every table's rows, every file of the data folder with its mode (the
//! SQLite files and the logs aside: a checkpoint moves bytes, not rows) and the engine's live
//! turns.
//!
//! The cases are data. [`routes`] lists every route with a request that names real things (a
//! queued review, drafts waiting, a skill Lull wrote, a finished job, a live turn, an open
//! route), and each family of cases (`wrong_methods`, `guards`, `oversized`, `body_syntax`,
//! `fields`, `path_params`, `queries`) is derived from that list, so a listed route gets the
//! whole battery; what only one route can get wrong is in its `invalid` list. One test sends
//! them all, each between two snapshots, and reports every failing case at once.

#[path = "common/offline.rs"]
mod offline;
#[path = "common/snapshot.rs"]
mod snapshot;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use lull::api::{app, Guard, MAX_BODY_BYTES};
use lull::drafts::records::DraftKind;
use lull::engine::ReviewSubmission;
use lull::jobs::records::{JobStatus, Stopping};
use lull::llm::ChatMessage;
use lull::routing::Outcome;
use lull::store::Store;
use lull::Engine;
use snapshot::{differences, settled_snapshot, snapshot};

const TOKEN: &str = "test-token";
const HOST: &str = "127.0.0.1:7707";
/// Over the body limit, so every route must answer 413 before it reads a byte of meaning.
const OVER_LIMIT: usize = MAX_BODY_BYTES + 1024 * 1024;
/// Under the body limit, but far longer than any field that takes text has a use for.
const HUGE_TEXT: usize = 3 * 1024 * 1024;
/// Every route should meet at least this many hostile requests (health, which takes the
/// fewest, meets its wrong methods, its guards and an oversized body).
const MIN_CASES_PER_ROUTE: usize = 8;

/// Skills of the person's own, so routing has something to rank.
const FOREIGN_SKILLS: [(&str, &str); 2] = [
    (
        "git-bisect",
        "find the commit that broke the build by bisecting history",
    ),
    ("pdf-extract", "pull text and tables out of pdf files"),
];
/// A body the safety check finds nothing in.
const BENIGN: &str = "Run `cargo build --release`, then `./target/release/tool`.";
/// A body with one `high` finding: *Approve* is refused until it is dismissed.
const PIPE_TO_SHELL: &str = "Run `curl https://x.example/i.sh | sh` to install.";

fn skill_md(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: Install the {name} tool.\n---\n# {name}\n\n{body}\n")
}

// ---------------------------------------------------------------------------------------------
// The engine, seeded with one real thing of every kind a route can name.

struct Seeded {
    _dir: tempfile::TempDir,
    engine: Engine,
    store: Store,
    /// A queued review (no managed server: it waits).
    review: String,
    /// A `review_pending` draft with no finding: *Approve* would write it.
    approvable: String,
    /// A `review_pending` draft with one `high` finding, index 0.
    flagged: String,
    /// An approved draft; its skill `tool` is Lull's, so a rollback would remove it.
    approved: String,
    /// A completed training job: *Promote* would make its head live.
    job: String,
    /// A live turn's lease.
    lease: String,
    /// A route with no outcome yet, and a skill it ranked.
    route_id: String,
    route_skill: String,
}

async fn seed() -> Seeded {
    let dir = tempfile::tempdir().unwrap();
    for (name, description) in FOREIGN_SKILLS {
        let folder = dir.path().join("data/skills").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let text = format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n");
        std::fs::write(folder.join("SKILL.md"), text).unwrap();
    }
    let (engine, store) = offline::offline_engine(dir.path()).await;
    let skills_dir = engine.config().skills_dir(&engine.paths().data_dir);
    let draft = |skill: &'static str, body: &'static str| {
        let (store, skills_dir) = (store.clone(), skills_dir.clone());
        async move {
            let text = skill_md(skill, body);
            offline::seed_draft(&store, &skills_dir, skill, DraftKind::Create, &text).await
        }
    };
    let approved = draft("tool", BENIGN).await;
    engine.approve_draft(&approved).await.unwrap();
    let approvable = draft("lint", BENIGN).await;
    let flagged = draft("pipe", PIPE_TO_SHELL).await;
    // Routing ranks `tool` once the skills index has seen the approved file.
    for _ in 0..100 {
        if engine.status().await.unwrap().routing.skills == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(engine.status().await.unwrap().routing.skills, 3);

    // Outcomes to train on, then one short job that runs to its end.
    for i in 0..60 {
        let answer = engine
            .route(&format!("which commit broke the build #{i}"), None)
            .await
            .unwrap();
        let chosen = &answer.ranked[i % answer.ranked.len()].skill;
        let outcome = if chosen == "git-bisect" {
            Outcome::Success
        } else {
            Outcome::Failure
        };
        engine
            .record_outcome(&answer.route_id, chosen, outcome)
            .await
            .unwrap();
    }
    let stopping = Stopping {
        max_rounds: 1,
        target: None,
        min_improvement: None,
        wall_clock_s: 60,
    };
    let job = engine.start_job(stopping).await.unwrap().id;
    let mut status = JobStatus::Queued;
    for _ in 0..600 {
        status = engine.job(&job).await.unwrap().status;
        if !matches!(status, JobStatus::Queued | JobStatus::Running) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        status,
        JobStatus::Completed,
        "the seeded job ran to its end"
    );

    let submission = ReviewSubmission {
        session_key: "chat-42".into(),
        messages: vec![ChatMessage {
            role: "user".into(),
            content: "the build broke after the merge; which commit did it?".into(),
        }],
        focus: None,
        snapshot_at: None,
        runtime: None,
    };
    let (review, _) = engine.submit_review(submission).await.unwrap();
    let lease = engine.start_turn();
    let route = engine
        .route("which commit broke the build?", Some(2))
        .await
        .unwrap();
    Seeded {
        _dir: dir,
        engine,
        store,
        review,
        approvable,
        flagged,
        approved,
        job,
        lease,
        route_id: route.route_id,
        route_skill: route.ranked[0].skill.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// The routes, and the cases derived from them.

/// What a route's body holds.
enum Takes {
    /// Nothing is read (a GET, or the event stream).
    Nothing,
    /// An action with no options: no body, or `{}`.
    NoOptions,
    /// A JSON body; this one is valid.
    Json(Value),
}

/// What a body field holds, for the ill-typed values it must refuse.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Unsigned,
    Signed,
    Fraction,
    Flag,
    Choice(&'static str),
    List,
    Object,
}

struct Field {
    /// Where it is in the body: `["stopping", "max_rounds"]`, `["messages", "0", "role"]`.
    path: &'static [&'static str],
    kind: Kind,
    required: bool,
    /// Whether unknown keys inside it are refused (an object the contract closes).
    closed: bool,
}

const fn field(path: &'static [&'static str], kind: Kind, required: bool) -> Field {
    Field {
        path,
        kind,
        required,
        closed: false,
    }
}

/// A request only one route can get wrong: well-formed, but naming or asking for something it
/// cannot have.
struct Invalid {
    what: String,
    /// Path parameters in place of the real ones.
    params: Vec<(&'static str, String)>,
    /// A JSON body in place of the valid one.
    body: Option<Vec<u8>>,
    framing: Framing,
    expect: (StatusCode, &'static str),
}

fn invalid_body(what: &str, body: Value, expect: (StatusCode, &'static str)) -> Invalid {
    Invalid {
        what: what.to_string(),
        params: Vec::new(),
        body: Some(body.to_string().into_bytes()),
        framing: Framing::Plain,
        expect,
    }
}

/// The valid request with other path parameters.
fn invalid_params(
    what: &str,
    params: Vec<(&'static str, String)>,
    expect: (StatusCode, &'static str),
) -> Invalid {
    Invalid {
        what: what.to_string(),
        params,
        body: None,
        framing: Framing::Plain,
        expect,
    }
}

struct Route {
    method: Method,
    pattern: &'static str,
    /// Each path parameter and the real thing it names.
    params: Vec<(&'static str, String)>,
    takes: Takes,
    fields: Vec<Field>,
    /// A `?status=` filter and one status it takes.
    status_filter: Option<&'static str>,
    needs_token: bool,
    invalid: Vec<Invalid>,
}

impl Route {
    fn label(&self) -> String {
        format!("{} {}", self.method, self.pattern)
    }

    /// The path with the real things in place, but for `overrides`.
    fn path(&self, overrides: &[(&'static str, String)]) -> String {
        let mut path = self.pattern.to_string();
        for (name, real) in &self.params {
            let value = overrides
                .iter()
                .find(|(other, _)| other == name)
                .map_or(real, |(_, value)| value);
            path = path.replace(&format!("{{{name}}}"), value);
        }
        path
    }

    /// The body of a valid request, if the route reads one.
    fn valid_body(&self) -> Option<Vec<u8>> {
        match &self.takes {
            Takes::Nothing => None,
            Takes::NoOptions => Some(b"{}".to_vec()),
            Takes::Json(body) => Some(body.to_string().into_bytes()),
        }
    }
}

fn get(pattern: &'static str) -> Route {
    Route {
        method: Method::GET,
        pattern,
        params: Vec::new(),
        takes: Takes::Nothing,
        fields: Vec::new(),
        status_filter: None,
        needs_token: true,
        invalid: Vec::new(),
    }
}

fn action(method: Method, pattern: &'static str, params: &[(&'static str, &str)]) -> Route {
    Route {
        method,
        params: params.iter().map(|(n, v)| (*n, v.to_string())).collect(),
        takes: Takes::NoOptions,
        ..get(pattern)
    }
}

fn with_body(pattern: &'static str, body: Value, fields: Vec<Field>) -> Route {
    Route {
        method: Method::POST,
        takes: Takes::Json(body),
        fields,
        ..get(pattern)
    }
}

fn routes(seed: &Seeded) -> Vec<Route> {
    use Kind::*;
    let unprocessable = (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request");
    let not_found = (StatusCode::NOT_FOUND, "not_found");
    let conflict = (StatusCode::CONFLICT, "conflict");
    let huge = "x".repeat(HUGE_TEXT);
    let message = json!({"role": "user", "content": "hi"});
    let review = json!({
        "session_key": "chat-42",
        "messages": [message],
        "focus": "the retry logic",
        "snapshot_at": 1_700_000_000_000_i64,
        "runtime": {"base_url": "http://127.0.0.1:9/v1", "api_key": "k", "model": "m"},
    });
    let review_with = |key: &str, value: Value| {
        let mut body = review.clone();
        body[key] = value;
        body
    };
    let job = json!({"kind": "routing-head", "stopping":
        {"max_rounds": 1, "target": 0.9, "min_improvement": 0.001, "wall_clock_s": 60}});
    let stopping_with = |key: &str, value: Value| {
        let mut body = job.clone();
        body["stopping"][key] = value;
        body
    };
    let decided = |what: &str, expect| {
        invalid_params(
            &format!("{what} a draft already approved"),
            vec![("id", seed.approved.clone())],
            expect,
        )
    };

    let settings = Route {
        method: Method::PATCH,
        ..with_body(
            "/v1/settings",
            json!({"defer_mode": "never", "paused": true, "reviews_enabled": false,
                   "notify_server_changes": true}),
            vec![
                field(&["defer_mode"], Choice("never"), false),
                field(&["paused"], Flag, false),
                field(&["reviews_enabled"], Flag, false),
                field(&["notify_server_changes"], Flag, false),
            ],
        )
    };

    let mut turn_start = with_body(
        "/v1/turns/start",
        json!({"session_key": "chat-42"}),
        vec![field(&["session_key"], Text, true)],
    );
    turn_start.invalid = vec![
        invalid_body(
            "an empty session_key",
            json!({"session_key": ""}),
            unprocessable,
        ),
        invalid_body(
            "a blank session_key",
            json!({"session_key": "  \t"}),
            unprocessable,
        ),
        invalid_body(
            "a session_key one over the limit",
            json!({"session_key": "k".repeat(257)}),
            unprocessable,
        ),
        invalid_body(
            "a 3 MiB session_key",
            json!({"session_key": huge}),
            unprocessable,
        ),
        invalid_body(
            "a session_key with a line break",
            json!({"session_key": "chat-42\nINFO forged"}),
            unprocessable,
        ),
    ];

    let mut turn_finish = with_body(
        "/v1/turns/finish",
        json!({"lease_id": seed.lease}),
        vec![field(&["lease_id"], Text, true)],
    );
    turn_finish.invalid = vec![
        invalid_body(
            "an unknown lease",
            json!({"lease_id": "no-such-lease"}),
            not_found,
        ),
        invalid_body("an empty lease", json!({"lease_id": ""}), not_found),
        invalid_body("a 3 MiB lease", json!({"lease_id": huge}), not_found),
    ];

    let mut submit = with_body(
        "/v1/reviews",
        review.clone(),
        vec![
            field(&["session_key"], Text, true),
            field(&["messages"], List, true),
            field(&["messages", "0"], Object, true),
            field(&["messages", "0", "role"], Text, true),
            field(&["messages", "0", "content"], Text, true),
            field(&["focus"], Text, false),
            field(&["snapshot_at"], Signed, false),
            field(&["runtime"], Object, false),
            field(&["runtime", "base_url"], Text, true),
            field(&["runtime", "api_key"], Text, false),
            field(&["runtime", "model"], Text, true),
        ],
    );
    submit.invalid = vec![
        invalid_body(
            "an empty session_key",
            review_with("session_key", json!("")),
            unprocessable,
        ),
        invalid_body(
            "a blank session_key",
            review_with("session_key", json!(" ")),
            unprocessable,
        ),
        invalid_body(
            "a session_key one over the limit",
            review_with("session_key", json!("k".repeat(257))),
            unprocessable,
        ),
        invalid_body(
            "a 3 MiB session_key",
            review_with("session_key", json!(huge)),
            unprocessable,
        ),
        invalid_body(
            "a session_key with an escape",
            review_with("session_key", json!("chat-42\u{1b}[2J")),
            unprocessable,
        ),
        invalid_body(
            "no messages",
            review_with("messages", json!([])),
            unprocessable,
        ),
        invalid_body(
            "an unknown role",
            review_with(
                "messages",
                json!([message, {"role": "robot", "content": "beep"}]),
            ),
            unprocessable,
        ),
        invalid_body(
            "an empty role",
            review_with("messages", json!([{"role": "", "content": "hi"}])),
            unprocessable,
        ),
        invalid_body(
            "a negative snapshot_at",
            review_with("snapshot_at", json!(-1)),
            unprocessable,
        ),
        invalid_body(
            "the smallest snapshot_at",
            review_with("snapshot_at", json!(i64::MIN)),
            unprocessable,
        ),
        invalid_body(
            "a snapshot_at at the end of time",
            review_with("snapshot_at", json!(i64::MAX)),
            unprocessable,
        ),
        invalid_body(
            "a snapshot_at a year ahead",
            review_with(
                "snapshot_at",
                json!(lull::store::now_ms() + 365 * 24 * 3600 * 1000),
            ),
            unprocessable,
        ),
    ];
    for url in [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "",
        "127.0.0.1:9/v1",
    ] {
        let mut body = review.clone();
        body["runtime"]["base_url"] = json!(url);
        submit.invalid.push(invalid_body(
            &format!("runtime.base_url {url:?}"),
            body,
            unprocessable,
        ));
    }
    // A transcript past the body limit, as an agent would send it: many messages, with and
    // without a declared length.
    let turn = json!({"role": "assistant", "content": "x".repeat(1000)});
    let messages: Vec<Value> = (0..OVER_LIMIT / 1000).map(|_| turn.clone()).collect();
    let transcript = review_with("messages", Value::Array(messages)).to_string();
    for framing in [Framing::Declared, Framing::Streamed] {
        submit.invalid.push(Invalid {
            what: format!("a transcript of {} bytes, {framing:?}", transcript.len()),
            params: Vec::new(),
            body: Some(transcript.clone().into_bytes()),
            framing,
            expect: (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large"),
        });
    }

    let mut reviews_list = get("/v1/reviews");
    reviews_list.status_filter = Some("queued");
    let mut candidates = get("/v1/candidates");
    candidates.status_filter = Some("open");
    let mut drafts = get("/v1/drafts");
    drafts.status_filter = Some("review_pending");
    let mut draft = get("/v1/drafts/{id}");
    draft.params = vec![("id", seed.flagged.clone())];

    let mut approve = action(
        Method::POST,
        "/v1/drafts/{id}/approve",
        &[("id", &seed.approvable)],
    );
    approve.invalid = vec![
        decided("approving", (StatusCode::CONFLICT, "approval_refused")),
        invalid_params(
            "approving a draft whose high finding stands",
            vec![("id", seed.flagged.clone())],
            (StatusCode::CONFLICT, "approval_refused"),
        ),
    ];
    let mut reject = Route {
        params: vec![("id", seed.approvable.clone())],
        ..with_body(
            "/v1/drafts/{id}/reject",
            json!({"reason": "not useful"}),
            vec![field(&["reason"], Text, true)],
        )
    };
    reject.invalid = vec![
        invalid_body("an empty reason", json!({"reason": ""}), unprocessable),
        invalid_body("a blank reason", json!({"reason": " \n "}), unprocessable),
        invalid_body(
            "a reason one over the limit",
            json!({"reason": "r".repeat(2001)}),
            unprocessable,
        ),
        invalid_body("a 3 MiB reason", json!({"reason": huge}), unprocessable),
        decided("rejecting", conflict),
    ];
    let mut edit = Route {
        params: vec![("id", seed.approvable.clone())],
        ..with_body(
            "/v1/drafts/{id}/edit",
            json!({"skill_md": skill_md("lint", BENIGN)}),
            vec![field(&["skill_md"], Text, true)],
        )
    };
    edit.invalid = vec![
        invalid_body("an empty SKILL.md", json!({"skill_md": ""}), unprocessable),
        invalid_body(
            "no front matter",
            json!({"skill_md": BENIGN}),
            unprocessable,
        ),
        invalid_body(
            "another skill's name",
            json!({"skill_md": skill_md("git-bisect", BENIGN)}),
            unprocessable,
        ),
        invalid_body(
            "a name that climbs out of the skills folder",
            json!({"skill_md": skill_md("../../etc", BENIGN)}),
            unprocessable,
        ),
        invalid_body(
            "a SKILL.md just over 1 MiB",
            json!({"skill_md": skill_md("lint", &"x".repeat(1024 * 1024))}),
            unprocessable,
        ),
        decided("editing", conflict),
    ];
    let mut dismiss = Route {
        params: vec![("id", seed.flagged.clone()), ("n", "0".into())],
        ..with_body(
            "/v1/drafts/{id}/findings/{n}/dismiss",
            json!({"reason": "our own installer"}),
            vec![field(&["reason"], Text, true)],
        )
    };
    dismiss.invalid = vec![
        invalid_body("an empty reason", json!({"reason": ""}), unprocessable),
        invalid_body("a 3 MiB reason", json!({"reason": huge}), unprocessable),
        invalid_params(
            "a finding of a draft that has none",
            vec![("id", seed.approvable.clone())],
            not_found,
        ),
        invalid_params(
            "the second finding of a draft that has one",
            vec![("n", "1".into())],
            not_found,
        ),
        decided("dismissing a finding of", conflict),
    ];

    let mut rollback = action(
        Method::POST,
        "/v1/skills/{name}/rollback",
        &[("name", "tool")],
    );
    rollback.invalid = ["TOOL", "%20tool", "tool%20", "git-bisect", "lint"]
        .into_iter()
        .map(|name| {
            invalid_params(
                &format!("a skill Lull did not write, {name:?}"),
                vec![("name", name.to_string())],
                not_found,
            )
        })
        .collect();

    let mut start_job = with_body(
        "/v1/jobs",
        job.clone(),
        vec![
            field(&["kind"], Choice("routing-head"), true),
            Field {
                closed: true,
                ..field(&["stopping"], Object, true)
            },
            field(&["stopping", "max_rounds"], Unsigned, true),
            field(&["stopping", "target"], Fraction, false),
            field(&["stopping", "min_improvement"], Fraction, false),
            field(&["stopping", "wall_clock_s"], Unsigned, true),
        ],
    );
    start_job.invalid = [
        ("max_rounds", json!(0)),
        ("max_rounds", json!(10_001)),
        ("max_rounds", json!(u32::MAX)),
        ("wall_clock_s", json!(0)),
        ("wall_clock_s", json!(24 * 3600 + 1)),
        ("wall_clock_s", json!(u64::MAX)),
        ("target", json!(0)),
        ("target", json!(1e-400)),
        ("target", json!(-0.5)),
        ("target", json!(1.5)),
        ("min_improvement", json!(-1)),
        ("min_improvement", json!(-1e-300)),
    ]
    .into_iter()
    .map(|(key, value)| {
        invalid_body(
            &format!("stopping.{key} {value}"),
            stopping_with(key, value),
            unprocessable,
        )
    })
    .collect();

    let mut job_get = get("/v1/jobs/{id}");
    job_get.params = vec![("id", seed.job.clone())];
    let mut cancel = action(Method::POST, "/v1/jobs/{id}/cancel", &[("id", &seed.job)]);
    cancel.invalid = vec![invalid_params(
        "cancelling a completed job",
        Vec::new(),
        conflict,
    )];
    let mut resume = action(Method::POST, "/v1/jobs/{id}/resume", &[("id", &seed.job)]);
    resume.invalid = vec![invalid_params(
        "resuming a completed job",
        Vec::new(),
        (StatusCode::CONFLICT, "job_not_resumable"),
    )];
    let promote = action(Method::POST, "/v1/jobs/{id}/promote", &[("id", &seed.job)]);

    let mut route = with_body(
        "/v1/route",
        json!({"query": "which commit broke the build?", "top_k": 2}),
        vec![
            field(&["query"], Text, true),
            field(&["top_k"], Unsigned, false),
        ],
    );
    route.invalid = vec![
        invalid_body("an empty query", json!({"query": ""}), unprocessable),
        invalid_body("a blank query", json!({"query": " \n\t "}), unprocessable),
        invalid_body("top_k 0", json!({"query": "q", "top_k": 0}), unprocessable),
        invalid_body(
            "top_k 101",
            json!({"query": "q", "top_k": 101}),
            unprocessable,
        ),
        invalid_body(
            "top_k u64::MAX",
            json!({"query": "q", "top_k": u64::MAX}),
            unprocessable,
        ),
    ];
    let outcome = |route_id: &str, skill: &str| json!({"route_id": route_id, "skill": skill, "outcome": "success"});
    let mut outcomes = with_body(
        "/v1/outcomes",
        outcome(&seed.route_id, &seed.route_skill),
        vec![
            field(&["route_id"], Text, true),
            field(&["skill"], Text, true),
            field(&["outcome"], Choice("success"), true),
        ],
    );
    outcomes.invalid = vec![
        invalid_body(
            "an unknown route",
            outcome("no-such-route", &seed.route_skill),
            not_found,
        ),
        invalid_body(
            "an empty route id",
            outcome("", &seed.route_skill),
            not_found,
        ),
        invalid_body(
            "a 3 MiB route id",
            outcome(&huge, &seed.route_skill),
            not_found,
        ),
        invalid_body(
            "a skill the route did not rank",
            outcome(&seed.route_id, "../../etc/passwd"),
            unprocessable,
        ),
    ];

    let mut health = get("/v1/health");
    health.needs_token = false;
    vec![
        health,
        get("/v1/status"),
        get("/v1/settings"),
        settings,
        get("/v1/events"),
        turn_start,
        turn_finish,
        submit,
        reviews_list,
        action(Method::DELETE, "/v1/reviews/{id}", &[("id", &seed.review)]),
        action(
            Method::POST,
            "/v1/reviews/{id}/run-now",
            &[("id", &seed.review)],
        ),
        candidates,
        drafts,
        draft,
        approve,
        reject,
        edit,
        dismiss,
        get("/v1/skills"),
        rollback,
        start_job,
        get("/v1/jobs"),
        job_get,
        cancel,
        resume,
        promote,
        route,
        outcomes,
    ]
}

// ---------------------------------------------------------------------------------------------
// A case: one request, and the refusal it must get.

const JSON: &str = "application/json";

/// How a body goes over the wire.
#[derive(Clone, Copy, Debug)]
enum Framing {
    /// Bytes with no declared length (what `oneshot` sends for a buffered body).
    Plain,
    /// With a `Content-Length` saying how long.
    Declared,
    /// In chunks, its length unknown until the end.
    Streamed,
}

#[derive(Clone, Copy)]
enum Token {
    Right,
    Missing,
    Wrong,
    /// The right token in another scheme.
    Basic,
}

struct Case {
    route: usize,
    what: String,
    method: Method,
    uri: String,
    token: Token,
    origin: Option<&'static str>,
    host: &'static str,
    content_type: Option<&'static str>,
    body: Option<Vec<u8>>,
    framing: Framing,
    expect: (StatusCode, &'static str),
}

impl Case {
    /// The route's valid request — real path, valid JSON body, the token — with `what` to
    /// spoil it, answered `expect`.
    fn valid(
        route_index: usize,
        route: &Route,
        what: String,
        expect: (StatusCode, &'static str),
    ) -> Case {
        assert!(expect.0.is_client_error(), "{what}: a refusal is a 4xx");
        let body = route.valid_body();
        Case {
            route: route_index,
            what,
            method: route.method.clone(),
            uri: route.path(&[]),
            token: Token::Right,
            origin: None,
            host: HOST,
            content_type: body.as_ref().map(|_| JSON),
            body,
            framing: Framing::Plain,
            expect,
        }
    }

    fn with_json(self, body: Vec<u8>) -> Case {
        Case {
            content_type: Some(JSON),
            body: Some(body),
            ..self
        }
    }

    fn request(&self) -> Request<Body> {
        let mut builder = Request::builder()
            .method(self.method.clone())
            .uri(&self.uri)
            .header(header::HOST, self.host);
        let authorization = match self.token {
            Token::Right => Some(format!("Bearer {TOKEN}")),
            Token::Wrong => Some("Bearer not-the-token".to_string()),
            Token::Basic => Some(format!("Basic {TOKEN}")),
            Token::Missing => None,
        };
        if let Some(value) = authorization {
            builder = builder.header(header::AUTHORIZATION, value);
        }
        if let Some(origin) = self.origin {
            builder = builder.header(header::ORIGIN, origin);
        }
        if let Some(content_type) = self.content_type {
            builder = builder.header(header::CONTENT_TYPE, content_type);
        }
        let body = match (&self.body, self.framing) {
            (None, _) => Body::empty(),
            (Some(bytes), Framing::Plain) => Body::from(bytes.clone()),
            (Some(bytes), Framing::Declared) => {
                builder = builder.header(header::CONTENT_LENGTH, bytes.len());
                Body::from(bytes.clone())
            }
            (Some(bytes), Framing::Streamed) => {
                let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
                    bytes.chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
                Body::from_stream(futures_util::stream::iter(chunks))
            }
        };
        builder.body(body).unwrap()
    }
}

/// Methods no route of the path takes, each with the route's valid body. A path's wrong
/// methods are counted for its first route.
fn wrong_methods(index: usize, route: &Route, all: &[Route]) -> Vec<Case> {
    if all.iter().position(|r| r.pattern == route.pattern) != Some(index) {
        return Vec::new();
    }
    let taken: Vec<&Method> = all
        .iter()
        .filter(|r| r.pattern == route.pattern)
        .map(|r| &r.method)
        .collect();
    ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "BREW"]
        .into_iter()
        .map(|name| Method::from_bytes(name.as_bytes()).unwrap())
        .filter(|method| !taken.contains(&method))
        .map(|method| Case {
            method: method.clone(),
            ..Case::valid(
                index,
                route,
                format!("method {method}"),
                (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            )
        })
        .collect()
}

/// The token, `Origin` and `Host` guards, in front of a valid request.
fn guards(index: usize, route: &Route) -> Vec<Case> {
    let unauthorized = (StatusCode::UNAUTHORIZED, "unauthorized");
    let mut cases = Vec::new();
    if route.needs_token {
        for (what, token) in [
            ("no token", Token::Missing),
            ("a wrong token", Token::Wrong),
            ("the token as Basic", Token::Basic),
        ] {
            cases.push(Case {
                token,
                ..Case::valid(index, route, what.into(), unauthorized)
            });
        }
        let case = Case::valid(index, route, "the token in the query".into(), unauthorized);
        cases.push(Case {
            token: Token::Missing,
            uri: format!("{}?token={TOKEN}", case.uri),
            ..case
        });
    }
    for origin in ["http://evil.example", "null"] {
        let expect = (StatusCode::FORBIDDEN, "origin_not_allowed");
        cases.push(Case {
            origin: Some(origin),
            ..Case::valid(index, route, format!("Origin {origin}"), expect)
        });
    }
    for host in ["evil.example:7707", ""] {
        let expect = (StatusCode::FORBIDDEN, "host_not_allowed");
        cases.push(Case {
            host,
            ..Case::valid(index, route, format!("Host {host:?}"), expect)
        });
    }
    cases
}

/// A body of a huge string past the limit: declared (every route, whether it reads a body or
/// not), and streamed without a length (the routes that read one).
fn oversized(index: usize, route: &Route) -> Vec<Case> {
    let key = route.fields.first().map_or("x", |field| field.path[0]);
    let body = format!(r#"{{"{key}": "{}"}}"#, "x".repeat(OVER_LIMIT)).into_bytes();
    let too_large = (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large");
    let mut framings = vec![Framing::Declared];
    if !matches!(route.takes, Takes::Nothing) {
        framings.push(Framing::Streamed);
    }
    framings
        .into_iter()
        .map(|framing| Case {
            framing,
            ..Case::valid(
                index,
                route,
                format!("a 5 MiB string, {framing:?}"),
                too_large,
            )
            .with_json(body.clone())
        })
        .collect()
}

/// Bodies that are not JSON, not UTF-8, too deep, ambiguous or of the wrong content type.
fn body_syntax(index: usize, route: &Route) -> Vec<Case> {
    let Some(valid) = route.valid_body() else {
        return Vec::new();
    };
    let malformed = (StatusCode::BAD_REQUEST, "malformed_json");
    let invalid = (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    let media = (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    let mut bodies: Vec<(String, Vec<u8>, (StatusCode, &str))> = vec![
        (
            "truncated".into(),
            valid[..valid.len() - 1].to_vec(),
            malformed,
        ),
        (
            "trailing garbage".into(),
            [&valid[..], &valid[..]].concat(),
            malformed,
        ),
        ("single quotes".into(), b"{'a': 1}".to_vec(), malformed),
        (
            "a comment".into(),
            [b"/* hi */", &valid[..]].concat(),
            malformed,
        ),
        (
            "a UTF-8 byte order mark".into(),
            [b"\xef\xbb\xbf", &valid[..]].concat(),
            malformed,
        ),
        (
            "invalid UTF-8 in a string".into(),
            b"{\"x\": \"\xff\xfe\"}".to_vec(),
            malformed,
        ),
        ("UTF-16".into(), b"\xff\xfe{\x00}\x00".to_vec(), malformed),
        (
            "a lone surrogate".into(),
            br#"{"x": "\ud800"}"#.to_vec(),
            malformed,
        ),
        (
            "a raw NUL in a string".into(),
            b"{\"x\": \"a\x00b\"}".to_vec(),
            malformed,
        ),
        (
            "a number past f64".into(),
            br#"{"x": 1e400}"#.to_vec(),
            malformed,
        ),
        ("NaN".into(), br#"{"x": NaN}"#.to_vec(), malformed),
        (
            "100,000 nested arrays".into(),
            "[".repeat(100_000).into_bytes(),
            malformed,
        ),
        (
            "10,000 nested objects".into(),
            r#"{"a":"#.repeat(10_000).into_bytes(),
            malformed,
        ),
        (
            "129 nested arrays, closed".into(),
            format!("{}{}", "[".repeat(129), "]".repeat(129)).into_bytes(),
            malformed,
        ),
        (
            "a key twice".into(),
            br#"{"x": 1, "x": 1}"#.to_vec(),
            malformed,
        ),
        ("null".into(), b"null".to_vec(), invalid),
        ("an array".into(), b"[]".to_vec(), invalid),
        ("a string".into(), br#""{}""#.to_vec(), invalid),
        ("a number".into(), b"42".to_vec(), invalid),
        ("true".into(), b"true".to_vec(), invalid),
    ];
    match &route.takes {
        Takes::NoOptions => {
            bodies.push((
                "an option it lacks".into(),
                br#"{"force": true}"#.to_vec(),
                invalid,
            ));
        }
        Takes::Json(body) => {
            bodies.push(("nothing".into(), Vec::new(), malformed));
            let mut extra = body.clone();
            extra["unexpected"] = json!(true);
            bodies.push((
                "an unknown field".into(),
                extra.to_string().into_bytes(),
                invalid,
            ));
            // serde reads a struct from an array of its fields in order, too.
            let values: Vec<Value> = body.as_object().unwrap().values().cloned().collect();
            let positional = Value::Array(values).to_string().into_bytes();
            bodies.push(("its values as an array".into(), positional, invalid));
            // Each field given twice, with the very same value.
            for (key, value) in body.as_object().unwrap() {
                let text = body.to_string();
                let twice = format!("{{{}:{value},{}", json!(key), &text[1..]);
                bodies.push((format!("`{key}` twice"), twice.into_bytes(), malformed));
            }
            let nested = format!("{}{}", "[".repeat(200), "]".repeat(200));
            let first = route.fields[0].path[0];
            let deep = format!(r#"{{"{first}": {nested}}}"#);
            bodies.push((format!("`{first}` 200 deep"), deep.into_bytes(), malformed));
        }
        Takes::Nothing => unreachable!("routes without a body returned above"),
    }
    let mut cases: Vec<Case> = bodies
        .into_iter()
        .map(|(what, body, expect)| Case::valid(index, route, what, expect).with_json(body))
        .collect();
    for (what, content_type, body) in [
        ("no Content-Type", None, valid.clone()),
        ("Content-Type text/plain", Some("text/plain"), valid.clone()),
        ("Content-Type text/json", Some("text/json"), valid.clone()),
        (
            "a form",
            Some("application/x-www-form-urlencoded"),
            b"a=b".to_vec(),
        ),
    ] {
        cases.push(Case {
            content_type,
            body: Some(body),
            ..Case::valid(index, route, what.into(), media)
        });
    }
    cases
}

/// A JSON value in raw text, so a number past `u64` goes out as written.
fn with_raw(body: &Value, path: &[&str], raw: &str) -> Vec<u8> {
    const MARK: &str = "\u{1}raw\u{1}";
    let mut body = body.clone();
    *pointer(&mut body, path) = json!(MARK);
    body.to_string()
        .replace(&json!(MARK).to_string(), raw)
        .into_bytes()
}

fn pointer<'a>(body: &'a mut Value, path: &[&str]) -> &'a mut Value {
    let pointer: String = path.iter().map(|key| format!("/{key}")).collect();
    body.pointer_mut(&pointer)
        .unwrap_or_else(|| panic!("no {pointer} in the valid body"))
}

/// Each field missing (if required) and of every wrong type.
fn fields(index: usize, route: &Route) -> Vec<Case> {
    let Takes::Json(body) = &route.takes else {
        return Vec::new();
    };
    let invalid = (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    let mut cases = Vec::new();
    for field in &route.fields {
        let name = field.path.join(".");
        let (last, parent) = field.path.split_last().unwrap();
        // A list's only element missing is an empty list, which the engine refuses itself.
        if field.required && last.parse::<usize>().is_err() {
            let mut missing = body.clone();
            let object = pointer(&mut missing, parent).as_object_mut().unwrap();
            object.remove(*last);
            cases.push(
                Case::valid(index, route, format!("no `{name}`"), invalid)
                    .with_json(missing.to_string().into_bytes()),
            );
        }
        let choice_upper;
        let choice_spaced;
        let choice_listed;
        let mut raws: Vec<&str> = match field.kind {
            Kind::Text => vec!["42", "true", "[]", "{}", r#"["a"]"#],
            Kind::Unsigned => vec![
                r#""1""#,
                "1.5",
                "1e2",
                "-1",
                "18446744073709551616",
                "-9223372036854775809",
                r#""NaN""#,
                r#""Infinity""#,
                "true",
            ],
            Kind::Signed => vec![
                r#""1""#,
                "1.5",
                "9223372036854775808",
                "-9223372036854775809",
                r#""NaN""#,
                "true",
            ],
            Kind::Fraction => vec![
                r#""NaN""#,
                r#""Infinity""#,
                r#""-Infinity""#,
                r#""0.5""#,
                "true",
                "[]",
            ],
            Kind::Flag => vec![r#""true""#, "1", "0", r#""yes""#, "[]"],
            Kind::Choice(real) => {
                choice_upper = json!(real.to_uppercase()).to_string();
                choice_spaced = json!(format!("{real} ")).to_string();
                choice_listed = json!([real]).to_string();
                vec![
                    r#""bogus""#,
                    r#""""#,
                    "0",
                    &choice_upper,
                    &choice_spaced,
                    &choice_listed,
                ]
            }
            Kind::List => vec!["{}", r#""hi""#, "42"],
            Kind::Object => vec![r#""x""#, "42", "[]", "true"],
        };
        if field.required {
            raws.push("null");
        }
        for raw in raws {
            cases.push(
                Case::valid(index, route, format!("`{name}` = {raw}"), invalid)
                    .with_json(with_raw(body, field.path, raw)),
            );
        }
        if field.closed {
            let mut extra = body.clone();
            pointer(&mut extra, field.path)["unexpected"] = json!(1);
            cases.push(
                Case::valid(
                    index,
                    route,
                    format!("an unknown field in `{name}`"),
                    invalid,
                )
                .with_json(extra.to_string().into_bytes()),
            );
        }
    }
    cases
}

/// Path parameters that name nothing: unknown, climbing out, NUL, not UTF-8, very long.
fn path_params(index: usize, route: &Route) -> Vec<Case> {
    let not_found = (StatusCode::NOT_FOUND, "not_found");
    let mut cases = Vec::new();
    for (name, real) in &route.params {
        let segments: Vec<String> = if *name == "n" {
            [
                "-1",
                "1.5",
                "NaN",
                "1e0",
                "0x0",
                "+0",
                "00",
                "%200",
                "0%00",
                "%2e%2e",
                "18446744073709551615",
                "18446744073709551616",
            ]
            .map(String::from)
            .into()
        } else {
            let mut segments: Vec<String> = [
                "no-such-thing",
                ".",
                "..",
                "%2e%2e",
                "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
                "..%2F..%2F..%2Fetc%2Fpasswd",
                "%2Fetc%2Fpasswd",
                "..%5C..%5Cwindows",
                "C:%5CWindows",
                "~root",
                "*",
                "%25",
                "%00",
                "%FF%FE",
                "%E2%80%AEtool",
                "x'%20OR%20'1'%3D'1",
                "../../etc/passwd",
                "/etc/passwd",
            ]
            .map(String::from)
            .into();
            segments.push("a".repeat(60_000));
            for suffix in ["%00", "%2F..", "%2F..%2F..%2Fetc%2Fpasswd", "%20"] {
                segments.push(format!("{real}{suffix}"));
            }
            segments
        };
        for segment in segments {
            let shown: String = segment.chars().take(40).collect();
            let case = Case::valid(index, route, format!("{{{name}}} = {shown}"), not_found);
            cases.push(Case {
                uri: route.path(&[(name, segment)]),
                ..case
            });
        }
    }
    cases
}

/// Status filters that are not one.
fn queries(index: usize, route: &Route) -> Vec<Case> {
    let Some(real) = route.status_filter else {
        return Vec::new();
    };
    let upper = real.to_uppercase();
    [
        "status=bogus".to_string(),
        "status=".into(),
        "status=1".into(),
        format!("status={upper}"),
        format!("status={real}%20"),
        format!("status={real}%00"),
        "status=%FF".into(),
        format!("status={real}&status={real}"),
        format!("status={real}&x=1"),
        "x=1".into(),
        format!("status%5B%5D={real}"),
    ]
    .into_iter()
    .map(|query| {
        let case = Case::valid(
            index,
            route,
            format!("?{query}"),
            (StatusCode::BAD_REQUEST, "invalid_query"),
        );
        Case {
            uri: format!("{}?{query}", case.uri),
            ..case
        }
    })
    .collect()
}

/// The route's own list of well-formed but invalid requests.
fn invalid_cases(index: usize, route: &Route) -> Vec<Case> {
    route
        .invalid
        .iter()
        .map(|invalid| {
            let case = Case::valid(index, route, invalid.what.clone(), invalid.expect);
            let case = match &invalid.body {
                Some(body) => case.with_json(body.clone()),
                None => case,
            };
            Case {
                uri: route.path(&invalid.params),
                framing: invalid.framing,
                ..case
            }
        })
        .collect()
}

fn all_cases(routes: &[Route]) -> Vec<Case> {
    let mut cases = Vec::new();
    for (index, route) in routes.iter().enumerate() {
        cases.extend(wrong_methods(index, route, routes));
        cases.extend(guards(index, route));
        cases.extend(oversized(index, route));
        cases.extend(body_syntax(index, route));
        cases.extend(fields(index, route));
        cases.extend(path_params(index, route));
        cases.extend(queries(index, route));
        cases.extend(invalid_cases(index, route));
    }
    cases
}

// ---------------------------------------------------------------------------------------------
// Sending, and judging the answer.

struct Answer {
    status: StatusCode,
    content_type: Option<String>,
    body: Vec<u8>,
}

/// Sends `request` to a fresh router on its own task, so a handler's panic is this case's
/// failure rather than the test's end.
async fn send(engine: &Engine, request: Request<Body>) -> Result<Answer, String> {
    let guard = Guard {
        token: Arc::from(TOKEN),
        allowed_hosts: Guard::hosts_for(HOST.parse().unwrap()).into(),
    };
    let router = app(engine.clone(), guard);
    tokio::spawn(async move {
        let response = router.oneshot(request).await.unwrap();
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|value| value.to_str().unwrap_or("not text").to_string());
        let body = response.into_body().collect().await.unwrap().to_bytes();
        Answer {
            status,
            content_type,
            body: body.to_vec(),
        }
    })
    .await
    .map_err(|err| format!("the handler panicked: {err}"))
}

/// Whether the answer is the expected refusal, in the contract's shape.
fn judge(answer: &Answer, expect: (StatusCode, &str)) -> Result<(), String> {
    let shown = |bytes: &[u8]| String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
    let body: Value = serde_json::from_slice(&answer.body).map_err(|_| {
        format!(
            "{} with a body that is not JSON: {:?}",
            answer.status,
            shown(&answer.body)
        )
    })?;
    let shaped = body.as_object().is_some_and(|top| top.len() == 1)
        && body["error"]
            .as_object()
            .is_some_and(|error| error.len() == 2)
        && body["error"]["code"].is_string()
        && body["error"]["message"]
            .as_str()
            .is_some_and(|message| !message.trim().is_empty());
    if !shaped {
        return Err(format!(
            "{} not in the error shape: {}",
            answer.status,
            shown(&answer.body)
        ));
    }
    if answer.content_type.as_deref() != Some(JSON) {
        return Err(format!("Content-Type {:?}", answer.content_type));
    }
    let code = body["error"]["code"].as_str().unwrap();
    if (answer.status, code) != expect {
        return Err(format!(
            "answered {} {code}, expected {} {}: {}",
            answer.status,
            expect.0,
            expect.1,
            shown(body["error"]["message"].as_str().unwrap().as_bytes())
        ));
    }
    Ok(())
}

/// The matrix: every case refused as it should be, and nothing changed by any of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_refuses_hostile_input_and_changes_nothing() {
    let seed = seed().await;
    let routes = routes(&seed);
    let cases = all_cases(&routes);

    let start = settled_snapshot(&seed.engine, &seed.store).await;
    let mut before = snapshot(&seed.engine, &seed.store).await;
    let mut failures = Vec::new();
    let mut changed = 0;
    for case in &cases {
        let label = format!("{} — {}", routes[case.route].label(), case.what);
        match send(&seed.engine, case.request()).await {
            Ok(answer) => {
                if let Err(why) = judge(&answer, case.expect) {
                    failures.push(format!("{label}: {why}"));
                }
            }
            Err(why) => failures.push(format!("{label}: {why}")),
        }
        let after = snapshot(&seed.engine, &seed.store).await;
        let found = differences(&before, &after);
        if !found.is_empty() {
            changed += 1;
            failures.push(format!("{label}: changed {}", found.join("; ")));
            before = after;
        }
    }
    // Work a case started in the background shows up a moment later, and a change must not
    // hide behind a later case that undid it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let end = snapshot(&seed.engine, &seed.store).await;
    for found in differences(&before, &end) {
        failures.push(format!("after the last case: {found}"));
    }
    for found in differences(&start, &end) {
        failures.push(format!("over the whole run: {found}"));
    }

    let mut per_route = vec![0; routes.len()];
    for case in &cases {
        per_route[case.route] += 1;
    }
    for (route, count) in routes.iter().zip(&per_route) {
        println!("{count:>4}  {}", route.label());
    }
    println!(
        "hostile: {} cases over {} routes, {changed} changed anything",
        cases.len(),
        routes.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    for (route, count) in routes.iter().zip(&per_route) {
        assert!(
            *count >= MIN_CASES_PER_ROUTE,
            "{}: only {count} cases",
            route.label()
        );
    }
    assert_eq!(
        routes.len(),
        28,
        "every route of `api::app` is in the table"
    );
}
