//! A stand-in model that learns: answers to the engine's review, synthesis, judge and replay
//! requests that pass its validation, chosen by what each request asks for (its
//! `response_format`, since a kill or a fault leaves their order unscriptable), for tests that
//! drive the whole loop from a review to a draft over HTTP (the crash harness, the chaos run).

#![allow(dead_code)] // each test crate uses its own part of it

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

/// The skills a conversation may ask to remember ("remember this as <skill>"); few, so that a
/// skill gets a second draft (an update, or a candidate superseded by an undecided draft).
pub const LEARNED_SKILLS: [&str; 5] = [
    "git-bisect",
    "flaky-tests",
    "release-notes",
    "db-backup",
    "log-triage",
];

/// The body of every draft the learner writes (then a line naming the draft).
const GOOD_BODY: &str = "# Steps\n\n1. Reproduce the problem with the smallest input.\n2. Write down what changed since it last worked.\n3. Check the fix with the same input.\n";

/// Answers each kind of learning request by the name of its JSON schema; each draft body is
/// numbered, so no two drafts are the same text.
#[derive(Default)]
pub struct Learner {
    drafts_written: AtomicU64,
}

impl Learner {
    /// The stand-in's responder ([`lull_stand_in::StandIn::set_responder`]).
    pub fn responder() -> lull_stand_in::Responder {
        let learner = Learner::default();
        Arc::new(move |body| Some(learner.answer(body)))
    }

    fn answer(&self, body: &Value) -> String {
        let format = &body["response_format"]["json_schema"];
        match format["name"].as_str() {
            Some("review_candidates") => review_answer(body, &format["schema"]),
            Some("skill_draft") => {
                let n = self.drafts_written.fetch_add(1, Ordering::Relaxed);
                json!({
                    "body": format!("{GOOD_BODY}\nThis is draft {n}.\n"),
                    "description": "Find what broke, step by step."
                })
                .to_string()
            }
            Some("skill_judgement") => json!({
                "reason": "the answer with the skill names the steps",
                "score_with": 8, "score_without": 4, "verdict": "helps"
            })
            .to_string(),
            // An evaluation's replay of the conversation.
            _ => "Reproduce it, note what changed, check the fix.".into(),
        }
    }
}

/// A review's answer: the skill the newest shown message asks to remember, citing the first
/// message the review may cite.
fn review_answer(body: &Value, schema: &Value) -> String {
    let shown = body["messages"].to_string();
    let skill = shown.rsplit("remember this as ").next().and_then(|rest| {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '-')
            .collect();
        LEARNED_SKILLS.contains(&name.as_str()).then_some(name)
    });
    let evidence = &schema["properties"]["candidates"]["items"]["properties"]["evidence"];
    let cited: Vec<Value> = evidence["items"]["minimum"]
        .as_u64()
        .filter(|_| evidence["maxItems"] != 0)
        .map(Value::from)
        .into_iter()
        .collect();
    let candidates: Vec<Value> = skill
        .into_iter()
        .map(|skill| {
            json!({"skill": skill, "kind": "create", "rationale": "the person asked to remember it",
                   "evidence": cited, "priority": 0.8, "confidence": 0.7, "related": []})
        })
        .collect();
    json!({ "candidates": candidates }).to_string()
}
