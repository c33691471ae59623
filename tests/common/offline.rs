//! An engine on a temporary folder with no managed server and no network seams, and drafts
//! stored in its database the way the draft worker would store them, for the API tests that
//! need drafts without running a model.

#![allow(dead_code)] // each test crate uses its own part of it

use std::path::Path;
use std::sync::Arc;

use lull::drafts::candidates::{self, CandidateProposal, CandidateStatus, Note};
use lull::drafts::evaluation::Verdict;
use lull::drafts::records::{self, DraftKind, DraftStatus, Evaluation, EvaluationStatus, NewDraft};
use lull::engine::Seams;
use lull::llm::HttpLlmClient;
use lull::routing::BuiltInEmbedderOnly;
use lull::server::{ManualProbe, ServerReading, ServerState};
use lull::store::Store;
use lull::{Config, Engine, Paths};

/// An engine on `<dir>/data`: no managed server, the built-in embedder only, and the draft
/// worker off (`max_drafts_per_run = 0`), so only a test's own drafts exist. Its database is
/// shared through `Seams::store` and returned beside it.
pub async fn offline_engine(dir: &Path) -> (Engine, Store) {
    let mut config = Config::default();
    config.server.state_file = dir.join("no-supervisor/server.json");
    config.learning.max_drafts_per_run = 0;
    // A free port, should a test serve its API (`lull::api::serve`).
    config.api.listen = "127.0.0.1:0".into();
    let paths = Paths {
        data_dir: dir.join("data"),
        config_file: dir.join("config.toml"),
    };
    lull::data_dir::create_private_dir(&paths.data_dir).unwrap();
    let store = Store::open(&paths.database()).unwrap();
    let seams = Seams {
        server: Arc::new(ManualProbe::new(ServerReading::not_ready(
            ServerState::Absent,
            None,
            "no managed server in this test",
        ))),
        server_changes: None,
        llm: Arc::new(HttpLlmClient::default()),
        store: Some(store.clone()),
        embedders: Arc::new(BuiltInEmbedderOnly),
        clock: None,
        events: Default::default(),
        host: None,
    };
    let engine = Engine::open_with(config, paths, seams).await.unwrap();
    (engine, store)
}

/// Stores a draft of `skill` with `text` the way synthesis and evaluation would (a `done`
/// review, its candidate moved `open → drafting → drafted`, the draft with its safety check),
/// made against the file in `skills_dir` now; returns its id. A critical finding leaves it
/// `blocked`, anything else `review_pending` with a finished evaluation.
pub async fn seed_draft(
    store: &Store,
    skills_dir: &Path,
    skill: &str,
    kind: DraftKind,
    text: &str,
) -> String {
    let (skill, text) = (skill.to_string(), text.to_string());
    let base = lull::skills::read_skill_file(skills_dir, &skill).unwrap();
    store
        .call(move |c| {
            let review_id = format!("review-{skill}");
            c.execute(
                "INSERT INTO reviews (id, session_key, status, messages, snapshot_at, enqueued_at, updated_at)
                 VALUES (?1, ?1, 'done', '[]', 0, 0, 0)",
                [&review_id],
            )?;
            let proposal = CandidateProposal {
                skill: skill.clone(),
                kind: kind.as_str().into(),
                rationale: format!("the person installed {skill} by hand twice"),
                evidence: vec![0],
                priority: 0.7,
                confidence: 0.8,
                related: vec![],
            };
            candidates::insert_proposals(c, &review_id, &[proposal], 1)?;
            let candidate = candidates::next_open(c, 1)?.remove(0);
            candidates::transition(
                c,
                &candidate.id,
                CandidateStatus::Open,
                CandidateStatus::Drafting,
                Note::default(),
                2,
            )?;
            let report = lull::safety::check_text("SKILL.md", &text);
            let blocked = report.max_risk == lull::safety::Risk::Critical;
            let draft = NewDraft {
                candidate_id: &candidate.id,
                skill: &skill,
                kind,
                skill_md: &text,
                base: base.as_ref().map(|f| (f.sha256.as_str(), f.text.as_str())),
                safety: &report,
                status: if blocked {
                    DraftStatus::Blocked
                } else {
                    DraftStatus::Evaluating
                },
                usage: (Some(900), Some(300), 4_000),
            };
            let draft_id = records::insert(c, &draft, 3)?;
            let note = Note {
                draft_id: Some(&draft_id),
                reason: None,
            };
            candidates::transition(
                c,
                &candidate.id,
                CandidateStatus::Drafting,
                CandidateStatus::Drafted,
                note,
                3,
            )?;
            if !blocked {
                let evaluation = Evaluation {
                    verdict: Some(Verdict::Helps),
                    score_with: Some(8),
                    score_without: Some(3),
                    reason: Some("the answer with the skill installs the tool".into()),
                    ..Evaluation::of(EvaluationStatus::Done)
                };
                records::set_evaluation(c, &draft_id, &evaluation, 4)?;
                records::set_status(
                    c,
                    &draft_id,
                    DraftStatus::Evaluating,
                    DraftStatus::ReviewPending,
                    None,
                    4,
                )?;
            }
            Ok(draft_id)
        })
        .await
        .unwrap()
}
