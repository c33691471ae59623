//! What a reader does not see: instructions in HTML comments and long encoded blobs.

use std::sync::LazyLock;

use regex::Regex;

use super::{emit, hit, Context::*};
use crate::safety::document::Line;
use crate::safety::{regex, Category::*, RawFinding, Risk};

static ADDRESSES_AGENT: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"(?i)\b(assistant|agent|ai|model|llm|claude|gpt|copilot|chatbot|you\s+(must|should|will|are)|",
        r"ignore|instructions?|do\s+not\s+tell|don'?t\s+tell|secretly|silently|without\s+asking|",
        r"execute|exfiltrate|upload|send\s+(the|all|any|every))\b"
    ))
    .expect("compiles")
});

/// An HTML comment that speaks to the agent: a reader of the rendered skill never sees it.
pub(super) fn hidden_instructions(line: &Line, findings: &mut Vec<RawFinding>) {
    if !line.hidden {
        return;
    }
    let Some(found) = ADDRESSES_AGENT.find(&line.text) else {
        return;
    };
    emit(
        findings,
        line,
        hit(
            "injection.hidden-comment",
            PromptInjection,
            Risk::High,
            Always,
            found.range(),
            "gives instructions inside an HTML comment, which the agent reads and a person reading the skill never sees: delete the comment, or move what it says into the visible text",
        ),
    );
}

static BLOB: LazyLock<Regex> =
    LazyLock::new(|| regex(r"[A-Za-z0-9+/]{120,}={0,2}|\b[0-9a-fA-F]{120,}\b").expect("compiles"));

/// A long encoded blob hides what it says from every reader.
pub(super) fn encoded_blob(line: &Line, findings: &mut Vec<RawFinding>) {
    let Some(found) = BLOB.find(&line.text) else {
        return;
    };
    if line.text[..found.start()].ends_with("base64,") && line.text.contains("data:image/") {
        return;
    }
    emit(
        findings,
        line,
        hit(
            "obfuscation.encoded-blob",
            Obfuscation,
            Risk::Medium,
            Always,
            found.range(),
            "carries a long encoded blob that no reader can check: decode it and read what it says, or remove it",
        ),
    );
}
