//! Commands that need more than a pattern: what `rm -r` and `git push` are pointed at, installs
//! without a pin, and a file downloaded and then run.

use std::sync::LazyLock;

use regex::Regex;

use super::{emit, hit, Context::*, Hit};
use crate::safety::document::{Document, Line};
use crate::safety::{regex, Category::*, RawFinding, Risk};

// The arguments end where the command does: a separator, or the backtick closing a code span.
static RM: LazyLock<Regex> = LazyLock::new(|| regex(r"\brm\s+([^\n;&|)`]*)").expect("compiles"));

/// What `rm -r` must never be pointed at.
const PRECIOUS_TARGETS: &[&str] = &[
    "/",
    "/*",
    "~",
    "~/",
    "~/*",
    "$HOME",
    "$HOME/",
    "$HOME/*",
    "${HOME}",
    "${HOME}/",
    "${HOME}/*",
    "/home",
    "/home/*",
    "/etc",
    "/usr",
    "/var",
    "/boot",
    "/bin",
    "/lib",
    "/opt",
    "/root",
    "/srv",
    "/System",
    "/Users",
    "..",
    "../",
    "../*",
    "~/.ssh",
    "~/.config",
    "~/Documents",
    ".git",
];

/// `rm -r` of the root, the home folder, a system folder or the repository itself.
pub(super) fn remove_recursively(line: &Line, findings: &mut Vec<RawFinding>) {
    for capture in RM.captures_iter(&line.text) {
        let arguments = capture.get(1).expect("group 1");
        let words: Vec<String> = arguments
            .as_str()
            .split_whitespace()
            .map(|w| w.replace(['"', '\'', '`'], ""))
            .map(|w| without_sentence_end(&w).to_string())
            .collect();
        let recursive = words.iter().any(|w| {
            *w == "--recursive"
                || (w.starts_with('-') && !w.starts_with("--") && w.contains(['r', 'R']))
        });
        let no_preserve = words.iter().any(|w| w == "--no-preserve-root");
        let target = words
            .iter()
            .find(|w| PRECIOUS_TARGETS.contains(&w.as_str()) || w.starts_with("/*"));
        if !(recursive && (target.is_some() || no_preserve)) {
            continue;
        }
        let what = target.map_or("/", String::as_str);
        emit(
            findings,
            line,
            hit(
                "destructive.remove-everything",
                Destructive,
                Risk::Critical,
                Command,
                capture.get(0).expect("match").range(),
                format!("deletes `{what}` and everything under it: delete the command, or name the project folder meant (for example ./build)"),
            ),
        );
    }
}

/// A word without the punctuation of the sentence around it (`~/.` in "run rm -rf ~/."), but
/// `.` and `..` themselves kept.
fn without_sentence_end(word: &str) -> &str {
    let trimmed = word.trim_end_matches([',', ';', ':', '!', '?']);
    match trimmed.strip_suffix('.') {
        Some(rest) if !rest.is_empty() && !rest.ends_with('.') => rest,
        _ => trimmed,
    }
}

static GIT_PUSH: LazyLock<Regex> =
    LazyLock::new(|| regex(r"\bgit\s+push\b([^\n;&|]*)").expect("compiles"));

/// A forced push rewrites shared history; on the main branch (or every branch) it loses work.
pub(super) fn force_push(line: &Line, findings: &mut Vec<RawFinding>) {
    for capture in GIT_PUSH.captures_iter(&line.text) {
        let words: Vec<&str> = capture[1].split_whitespace().collect();
        let forced = words.iter().any(|w| *w == "--force" || *w == "-f")
            || words.iter().any(|w| w.starts_with('+') && w.len() > 1);
        let deletes = words.iter().any(|w| *w == "--delete" || *w == "-d")
            || words.iter().any(|w| w.starts_with(':') && w.len() > 1);
        let shared = words.iter().any(|w| {
            let branch = w.trim_start_matches(['+', ':']);
            let branch = branch.rsplit(':').next().unwrap_or(branch);
            matches!(
                branch,
                "main" | "master" | "trunk" | "develop" | "production" | "prod" | "release"
            ) || matches!(*w, "--all" | "--mirror" | "--tags")
        });
        let (risk, message) = match (forced || deletes, shared) {
            (false, _) => continue,
            (true, true) => (Risk::High, "force-pushes or deletes a shared branch (main, every branch, the tags), which destroys other people's work: push to a branch of your own, and use --force-with-lease if you must rewrite it"),
            (true, false) => (Risk::Medium, "force-pushes or deletes a branch: make sure it is a branch only this task owns, and prefer --force-with-lease"),
        };
        emit(
            findings,
            line,
            hit(
                "destructive.git-history",
                Destructive,
                risk,
                Command,
                capture.get(0).expect("match").range(),
                message,
            ),
        );
    }
}

/// What pins an install to one version.
enum Pin {
    /// `@ref` in the last path segment (`git+https://…/repo@v1.2`).
    RefInLastSegment,
    /// Any of these in the command (`#sha256=`, `--rev`).
    Marker(&'static [&'static str]),
    /// Nothing can: the command asks for the latest.
    Never,
}

static UNPINNED: LazyLock<Vec<(Regex, Pin)>> = LazyLock::new(|| {
    [
        (
            r"(?i)\bpip[0-9.]*\s+install\b[^\n]*\bgit\+\S+",
            Pin::RefInLastSegment,
        ),
        (
            r"(?i)\bpip[0-9.]*\s+install\b[^\n]*\shttps?://\S+",
            Pin::Marker(&["#sha256="]),
        ),
        (
            r"(?i)\bnpm\s+(i|install|add)\b[^\n]*\s(github:|git\+|https?://)\S+",
            Pin::Marker(&["#"]),
        ),
        (
            r"(?i)\bcargo\s+install\b[^\n]*--git\s+\S+[^\n]*",
            Pin::Marker(&["--rev", "--tag"]),
        ),
        (r"(?i)\bgo\s+install\s+\S+@latest\b", Pin::Never),
    ]
    .into_iter()
    .map(|(p, pin)| (regex(p).expect("compiles"), pin))
    .collect()
});

/// An install from a URL or a repository without a pinned revision runs whatever is there today.
pub(super) fn unpinned_install(line: &Line, findings: &mut Vec<RawFinding>) {
    for (regex, pin) in UNPINNED.iter() {
        let Some(found) = regex.find(&line.text) else {
            continue;
        };
        let pinned = match pin {
            Pin::RefInLastSegment => found
                .as_str()
                .rsplit('/')
                .next()
                .unwrap_or("")
                .contains('@'),
            Pin::Marker(markers) => markers.iter().any(|m| found.as_str().contains(m)),
            Pin::Never => false,
        };
        if pinned {
            continue;
        }
        emit(
            findings,
            line,
            hit(
                "download-execute.unpinned-install",
                DownloadExecute,
                Risk::High,
                Command,
                found.range(),
                "installs from a URL or repository without pinning a version, so it runs whatever is there on the day: pin a tag or commit (or a hash)",
            ),
        );
    }
}

static DOWNLOAD_TO_FILE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(curl|wget)\b[^\n|]*?(\s(-o|-O|--output|--output-document)\s*=?\s*(\S+)|\s(https?://\S+))")
        .expect("compiles")
});
static CHECKSUM: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(sha256sum|sha512sum|shasum\s+-a\s*(256|512))\b[^\n]*(-c|--check|==|=)|\bgpg\s+--verify\b|\bcosign\s+verify|\bminisign\s+-V|\bsha256sum\b[^\n]*\|\s*grep|\bGet-FileHash\b")
        .expect("compiles")
});
static RUNS_FILE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(^|[;&|]\s*|\bsudo\s+)(\./|(ba|z)?sh\s+|python[0-9.]*\s+|perl\s+|node\s+|chmod\s+(-\w+\s+)*([ugoa]*\+[rwx]*x[rwx]*|[0-7]{3,4})\s+|source\s+|\.\s+)(\S+)")
        .expect("compiles")
});

/// Text a decoder writes to a file (`base32 --decode > f`, `xxd -r -p > f`, `openssl enc -d -out f`).
static DECODE_TO_FILE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(base64|base32|b64|basenc|xxd\s+-r|openssl\s+(enc|base64)\b[^\n|]*\s-d|gunzip|zcat)\b[^\n|]*?(>\s*|\s-o\s+|\s-out\s+)([^\s;&|)]+)")
        .expect("compiles")
});

/// Where a file came from, when the skill fetched or decoded it.
enum Origin {
    Downloaded,
    Decoded,
}

/// The commands of a line: the whole of a code line, the `code spans` of prose.
fn command_fragments(line: &Line) -> Vec<&str> {
    if line.code {
        return vec![line.text.as_str()];
    }
    line.text.split('`').skip(1).step_by(2).collect()
}

/// A file downloaded (or decoded) and then run, in the same step or a later one, with no
/// checksum check in the skill for a download.
pub(super) fn download_then_run(document: &Document, findings: &mut Vec<RawFinding>) {
    let mut made: Vec<(Origin, String)> = Vec::new();
    let verified = document
        .lines
        .iter()
        .any(|l| l.block.is_some() && CHECKSUM.is_match(&l.text));
    for line in &document.lines {
        for fragment in command_fragments(line) {
            if let Some(captures) = DOWNLOAD_TO_FILE.captures(fragment) {
                let named = captures.get(4).map(|m| m.as_str().to_string());
                let from_url = captures
                    .get(5)
                    .and_then(|m| m.as_str().rsplit('/').next().map(str::to_string));
                if let Some(file) = named.or(from_url).filter(|f| !f.is_empty() && f != "-") {
                    made.push((Origin::Downloaded, unquoted(&file)));
                }
            }
            if let Some(captures) = DECODE_TO_FILE.captures(fragment) {
                made.push((Origin::Decoded, unquoted(&captures[4])));
            }
            if let Some(hit) = runs_made_file(line, fragment, &made, verified) {
                emit(findings, line, hit);
                break;
            }
        }
    }
}

fn unquoted(file: &str) -> String {
    file.trim_matches(|c| c == '"' || c == '\'').to_string()
}

/// The finding for `fragment` running (or making executable) a file the skill made.
fn runs_made_file(
    line: &Line,
    fragment: &str,
    made: &[(Origin, String)],
    verified: bool,
) -> Option<Hit> {
    for captures in RUNS_FILE.captures_iter(fragment) {
        let ran = unquoted(&captures[captures.len() - 1]);
        let ran_base = ran.trim_start_matches("./");
        let Some((origin, file)) = made.iter().find(|(_, file)| {
            !ran_base.is_empty() && file.trim_start_matches("./").ends_with(ran_base)
        }) else {
            continue;
        };
        // Positions are the fragment's; for prose the excerpt is the whole line anyway.
        let span = if line.code {
            captures.get(0).expect("match").range()
        } else {
            0..0
        };
        return Some(match origin {
            Origin::Decoded => hit(
                "obfuscation.decode-and-run",
                Obfuscation,
                Risk::Critical,
                Command,
                span,
                format!("runs `{file}`, which an earlier step decoded from hidden text, so no reader sees what runs: delete both steps; a skill writes its commands in plain text"),
            ),
            Origin::Downloaded if verified => hit(
                "download-execute.run-downloaded",
                DownloadExecute,
                Risk::Low,
                Command,
                span,
                format!("runs `{file}`, downloaded above, after checking its checksum: fine if the checksum comes from the publisher"),
            ),
            Origin::Downloaded => hit(
                "download-execute.run-downloaded",
                DownloadExecute,
                Risk::High,
                Command,
                span,
                format!("downloads `{file}` and runs it without checking it: compare its sha256 with the one the publisher gives before running it"),
            ),
        });
    }
    None
}
