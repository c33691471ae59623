//! Characters that make a reader see something other than what the agent reads: invisible ones
//! (zero-width, bidi controls, the Tag block that can spell a whole hidden sentence) and letters
//! of another script posing as Latin ones (`githuЬ.com`). Look-alikes use Unicode's own
//! confusables and script data (UTS #39, through the `unicode-security` crate).

use std::sync::LazyLock;

use regex::Regex;
use unicode_security::{is_potential_mixed_script_confusable_char, skeleton, MixedScript};

use super::document::{Document, Line};
use super::{excerpt, regex, Category, RawFinding, Risk};

/// Whether a reader cannot see `c` although an agent reads it.
pub(super) fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}'
        | '\u{E0000}'..='\u{E007F}' | '\u{E0100}'..='\u{E01EF}')
}

fn is_tag(c: char) -> bool {
    matches!(c, '\u{E0000}'..='\u{E007F}')
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Zero-width joiners belong inside emoji sequences and some scripts (Indic, Persian): between
/// two non-ASCII characters they are writing, not hiding.
fn is_joiner_in_writing(c: char, before: Option<char>, after: Option<char>) -> bool {
    matches!(c, '\u{200C}' | '\u{200D}')
        && before.is_some_and(|b| !b.is_ascii())
        && after.is_some_and(|a| !a.is_ascii())
}

/// A flag emoji (🏴 + tag letters + cancel tag) is the one honest use of the Tag block.
fn tag_sequence_is_a_flag(chars: &[char], start: usize) -> bool {
    start > 0 && chars[start - 1] == '\u{1F3F4}'
}

/// What the rules match: invisible characters dropped, confusable letters mapped to the ASCII
/// they imitate, so hiding a command behind them does not hide it from the rules.
pub(super) fn normalize(text: &str) -> String {
    if text.is_ascii() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_invisible(c) {
            continue;
        }
        if c.is_ascii() {
            out.push(c);
            continue;
        }
        let mut buffer = [0; 4];
        let prototype: String = skeleton(c.encode_utf8(&mut buffer)).collect();
        if !prototype.is_empty() && prototype.chars().all(|p| p.is_ascii_graphic()) {
            out.push_str(&prototype);
        } else {
            out.push(c);
        }
    }
    out
}

static URL_HOST: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b[a-z][a-z0-9+.-]*://([^/\s:@?#]+@)?([^/\s:?#'`)\]]+)").expect("compiles")
});

pub(super) fn check(document: &Document) -> Vec<RawFinding> {
    let mut findings = Vec::new();
    for line in &document.lines {
        invisible(line, &mut findings);
        lookalikes(line, &mut findings);
    }
    findings
}

fn invisible(line: &Line, findings: &mut Vec<RawFinding>) {
    let chars: Vec<char> = line.original.chars().collect();
    let mut reported: Vec<&str> = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index];
        if !is_invisible(c) {
            index += 1;
            continue;
        }
        if is_tag(c) {
            let start = index;
            while index < chars.len() && is_tag(chars[index]) {
                index += 1;
            }
            if tag_sequence_is_a_flag(&chars, start) {
                continue;
            }
            let hidden: String = chars[start..index]
                .iter()
                .filter_map(|&t| char::from_u32(t as u32 - 0xE0000))
                .filter(|t| t.is_ascii_graphic() || *t == ' ')
                .collect();
            findings.push(RawFinding {
                rule: "unicode.tag-characters",
                category: Category::InvisibleUnicode,
                risk: Risk::Critical,
                line: line.number,
                excerpt: excerpt(&format!("hidden text: {hidden}")),
                message: "carries text written in invisible Unicode Tag characters, which an agent reads and a person cannot see: delete the hidden characters and read the text again".into(),
            });
            continue;
        }
        let before = index.checked_sub(1).map(|i| chars[i]);
        let after = chars.get(index + 1).copied();
        index += 1;
        if is_joiner_in_writing(c, before, after) {
            continue;
        }
        let (rule, risk, what) = if is_bidi_control(c) {
            (
                "unicode.bidi-control",
                if line.code { Risk::Critical } else { Risk::High },
                "a bidirectional control character, which makes the text display in another order than it runs",
            )
        } else if c == '\u{00AD}' {
            (
                "unicode.soft-hyphen",
                Risk::Medium,
                "an invisible soft hyphen, which can split a word so a check misses it",
            )
        } else {
            (
                "unicode.zero-width",
                Risk::High,
                "an invisible zero-width character, which hides what a command or word really is",
            )
        };
        // One finding per kind and line: a line of a thousand zero-width characters (a binary
        // code in disguise) is one thing to delete.
        if reported.contains(&rule) {
            continue;
        }
        reported.push(rule);
        findings.push(RawFinding {
            rule,
            category: Category::InvisibleUnicode,
            risk,
            line: line.number,
            excerpt: excerpt(&line.original),
            message: format!(
                "contains {what} (U+{:04X}): delete it and retype the line",
                c as u32
            ),
        });
    }
}

fn lookalikes(line: &Line, findings: &mut Vec<RawFinding>) {
    for capture in URL_HOST.captures_iter(&line.original) {
        let host = &capture[2];
        if host.is_ascii() {
            if host
                .to_ascii_lowercase()
                .split('.')
                .any(|label| label.starts_with("xn--"))
            {
                findings.push(RawFinding {
                    rule: "lookalike.punycode-host",
                    category: Category::Lookalike,
                    risk: Risk::Medium,
                    line: line.number,
                    excerpt: excerpt(host),
                    message: "names a host in punycode (xn--), which can spell a look-alike of a known name: check where it really points".into(),
                });
            }
            continue;
        }
        findings.push(RawFinding {
            rule: "lookalike.host",
            category: Category::Lookalike,
            risk: Risk::Critical,
            line: line.number,
            excerpt: excerpt(host),
            message: format!(
                "points at a host whose name has non-Latin letters (it reads like `{}`): it is not the host it looks like; use the real address",
                normalize(host)
            ),
        });
    }
    for word in line
        .original
        .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '/' || c == ':' || c == '@'))
    {
        let letters: String = word.chars().filter(|c| c.is_alphabetic()).collect();
        if letters.chars().filter(char::is_ascii_alphabetic).count() < 1
            || letters.is_ascii()
            || letters.as_str().is_single_script()
            || !letters
                .chars()
                .any(|c| !c.is_ascii() && is_potential_mixed_script_confusable_char(c))
        {
            continue;
        }
        if URL_HOST.is_match(word) {
            continue;
        }
        findings.push(RawFinding {
            rule: "lookalike.mixed-script",
            category: Category::Lookalike,
            risk: if line.code { Risk::Critical } else { Risk::High },
            line: line.number,
            excerpt: excerpt(word),
            message: format!(
                "mixes letters of different scripts in one word (it reads like `{}`), a way to make a command or name look like another: retype it in one script",
                normalize(word)
            ),
        });
    }
    if line.code
        && line
            .original
            .chars()
            .any(|c| ('\u{FF01}'..='\u{FF5E}').contains(&c))
    {
        findings.push(RawFinding {
            rule: "lookalike.fullwidth",
            category: Category::Lookalike,
            risk: Risk::High,
            line: line.number,
            excerpt: excerpt(&line.original),
            message: "writes a command in full-width letters that imitate ASCII ones: retype it in plain ASCII".into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizing_maps_look_alikes_and_drops_invisible_characters() {
        assert_eq!(normalize("сurl"), "curl", "Cyrillic es");
        assert_eq!(normalize("r\u{200B}m -rf"), "rm -rf");
        assert_eq!(normalize("café"), "café", "accents stay");
        assert_eq!(normalize("日本語"), "日本語");
    }

    #[test]
    fn a_joiner_inside_an_emoji_is_writing() {
        let family = "👨\u{200D}👩\u{200D}👧";
        let chars: Vec<char> = family.chars().collect();
        assert!(is_joiner_in_writing(
            chars[1],
            Some(chars[0]),
            Some(chars[2])
        ));
        assert!(!is_joiner_in_writing('\u{200D}', Some('r'), Some('m')));
    }
}
