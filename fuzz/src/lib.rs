//! The checks Lull's fuzz targets run: one function per parser of outside input, each feeding it
//! bytes and asserting what the parser promises of any input — not only "no panic", but that what
//! it accepts is what the rest of Lull relies on (a draft's SKILL.md parses back; an answer stays
//! within its schema's bounds; a transcript cannot change the prompt around it).
//!
//! The same functions run under libFuzzer (`make fuzz`, `fuzz_targets/`) and on stable, where
//! `tests/corpus.rs` replays every saved input in `corpus/<target>/` — the seeds and each crash a
//! fuzzer found, kept there as a regression test. A check panics on a broken promise.

use lull::drafts::candidates::CandidateProposal;
use lull::drafts::evaluation::{parse_judgement, REASON_MAX_CHARS, SCORE_MAX};
use lull::drafts::synthesis::{parse_synthesis, SKILL_MD_MAX_BYTES};
use lull::engine::ReviewSubmission;
use lull::reviews::prompt::{
    is_skill_name, parse_answer, review_request, Window, MAX_CANDIDATES_PER_REVIEW,
    MAX_EVIDENCE_PER_CANDIDATE, MAX_RATIONALE_CHARS, MAX_RELATED_PER_CANDIDATE,
};
use lull::safety::check_text;
use lull::server::parse_state_file;
use lull::skills::{parse_skill_md, Skill};

/// One fuzz check: fed any bytes, it panics only on a broken promise.
pub type Check = fn(&[u8]);

/// Every target, by the name of its folder in `corpus/` and its binary in `fuzz_targets/`.
pub const TARGETS: &[(&str, Check)] = &[
    ("state_file", state_file),
    ("skill_md", skill_md),
    ("review_answer", review_answer),
    ("synthesis", synthesis),
    ("judgement", judgement),
    ("transcript", transcript),
];

/// The folder a fuzzed SKILL.md claims to live in, and the skill a fuzzed synthesis is for.
const SKILL: &str = "fuzz-skill";
/// How many messages a fuzzed review answer was shown (its evidence must cite one of them).
const SHOWN: std::ops::Range<usize> = 2..9;

/// The supervisor's state file: any bytes are a record or a reason a person can read.
pub fn state_file(data: &[u8]) {
    if let Err(reason) = parse_state_file(data) {
        assert!(!reason.trim().is_empty(), "a refusal gives its reason");
    }
}

/// A SKILL.md on disk and the safety check of it. A parsed skill is the folder's; a finding
/// points at a line of the text and shows no raw control character (excerpts reach a terminal
/// and the window).
pub fn skill_md(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(skill) = parse_skill_md(text, SKILL) {
        assert_eq!(skill.name, SKILL, "a skill is named for its folder");
    }
    let report = check_text("SKILL.md", text);
    let lines = text.lines().count().max(1);
    for finding in &report.findings {
        assert!(
            finding.line <= lines,
            "{finding:?} is past the text's {lines} lines"
        );
        assert!(
            !finding.excerpt.chars().any(char::is_control),
            "the excerpt of {} shows a raw control character: {:?}",
            finding.rule,
            finding.excerpt
        );
    }
    assert_eq!(
        report,
        check_text("SKILL.md", text),
        "the check is deterministic"
    );
}

/// A review's answer: what it accepts stays within the schema's bounds.
pub fn review_answer(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(candidates) = parse_answer(text, SHOWN) else {
        return;
    };
    assert!(candidates.len() <= MAX_CANDIDATES_PER_REVIEW);
    for candidate in &candidates {
        assert!(is_skill_name(&candidate.skill), "{candidate:?}");
        assert!(
            ["create", "update"].contains(&candidate.kind.as_str()),
            "{candidate:?}"
        );
        assert!(candidate.rationale.chars().count() <= MAX_RATIONALE_CHARS);
        assert!(candidate.evidence.len() <= MAX_EVIDENCE_PER_CANDIDATE);
        assert!(candidate
            .evidence
            .iter()
            .all(|&index| SHOWN.contains(&(index as usize))));
        assert!(candidate.related.len() <= MAX_RELATED_PER_CANDIDATE);
        assert!(candidate.related.iter().all(|name| is_skill_name(name)));
        assert!((0.0..=1.0).contains(&candidate.priority), "{candidate:?}");
        assert!((0.0..=1.0).contains(&candidate.confidence), "{candidate:?}");
    }
}

/// A synthesis's answer, for a new skill (first byte even) or an update of one on disk: the
/// SKILL.md it builds parses back as that skill, with the description it reports, within bounds.
pub fn synthesis(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let update = mode % 2 == 1;
    let candidate = CandidateProposal {
        skill: SKILL.into(),
        kind: if update { "update" } else { "create" }.into(),
        rationale: "a fuzzed finding".into(),
        evidence: vec![0],
        priority: 0.5,
        confidence: 0.5,
        related: Vec::new(),
    };
    let current = update.then(current_skill);
    let Ok(built) = parse_synthesis(text, &candidate, current.as_ref()) else {
        return;
    };
    assert!(built.skill_md.len() <= SKILL_MD_MAX_BYTES);
    let skill = parse_skill_md(&built.skill_md, SKILL)
        .unwrap_or_else(|err| panic!("a built SKILL.md does not parse back: {err}"));
    assert_eq!(skill.description, built.description);
    assert!(!skill.description.trim().is_empty() && !skill.body.trim().is_empty());
    if let Some(current) = &current {
        assert_eq!(
            skill.extra, current.extra,
            "an update keeps the skill's other keys"
        );
    }
}

fn current_skill() -> Skill {
    let text = "---\nname: fuzz-skill\ndescription: What is on disk now.\nlicense: MIT\nmetadata:\n  owner: the person\n---\n\n# Fuzz skill\n\n1. Do the thing.\n";
    parse_skill_md(text, SKILL).expect("the current skill parses")
}

/// A judge's answer: scores and reason within the schema's bounds.
pub fn judgement(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(judgement) = parse_judgement(text) else {
        return;
    };
    assert!(judgement.score_with <= SCORE_MAX && judgement.score_without <= SCORE_MAX);
    assert!(!judgement.reason.trim().is_empty());
    assert!(judgement.reason.chars().count() <= REASON_MAX_CHARS);
}

/// A submitted transcript (the body of `POST /v1/reviews`) and the review request built from it,
/// whole or after a reviewed prefix: the transcript is quoted as JSON data after the prompt's
/// own words and cannot change the system prompt.
pub fn transcript(data: &[u8]) {
    let Ok(submission) = serde_json::from_slice::<ReviewSubmission>(data) else {
        return;
    };
    let messages = &submission.messages;
    let system = review_request(&[], Window::whole(), None).messages[0].clone();
    let reviewed = data.len() % (messages.len() + 1);
    for window in [Window::whole(), Window::after(reviewed)] {
        let request = review_request(messages, window, submission.focus.as_deref());
        assert_eq!(request.messages.len(), 2);
        assert_eq!(
            request.messages[0], system,
            "the transcript changed the system prompt"
        );
        let quoted: Vec<serde_json::Value> = messages
            .iter()
            .enumerate()
            .skip(window.shown_from)
            .map(|(index, message)| {
                serde_json::json!({ "index": index, "role": message.role, "content": message.content })
            })
            .collect();
        let json = serde_json::to_string_pretty(&quoted).expect("JSON values serialise");
        assert!(
            request.messages[1].content.ends_with(&format!("\n{json}")),
            "the shown messages are not quoted whole, as JSON, at the end"
        );
    }
}
