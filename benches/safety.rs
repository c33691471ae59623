//! The safety check (`lull::safety`): its speed on a typical SKILL.md and on a folder of 50
//! files, and its accuracy on the labelled corpora, beside a keyword scanner in the same run.
//!
//! The baseline models the scanners people complain of (issue 12): a list of risky words and
//! shapes, each flagged at `high` wherever it appears, with no idea of code, prose, quotation or
//! "never do this". It is this bench's own model of that family, not any one product.
//!
//! - Typical: the corpus's median-sized SKILL.md, checked many times (rules compiled once, as in
//!   a running engine); p50 and p99 per check. Target ≤ 5 ms. Also a long one (8 KiB).
//! - Folder: 50 files of the folder corpus (SKILL.md files and their shell, Python and
//!   JavaScript scripts, so the code pass parses them) written to a temporary folder, checked
//!   through `check_path`, file reading included; p50 and p99. Target ≤ 100 ms (issue 26).
//! - Accuracy: detection at `high`+ on malicious skills and false positives at `high`+ on benign
//!   ones, for the tuning corpus (`tests/safety/corpus`) and, when present, the held-out one
//!   (`tests/safety/holdout`, written without sight of the rules) and the adversarial one
//!   (`tests/safety/adversarial`, written to evade a rule-based check), and the skill-folder
//!   sets (`tests/safety/folders` and `tests/safety/folders-former-holdout`, the code pass's
//!   training sets, and `tests/safety/folders-holdout`, written blind).
//!
//! Results go to `bench/results/latest.json` under `"safety"`. Run with
//! `cargo bench --bench safety`.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use lull::safety::{check_path, check_text, Risk};

/// Checks timed for the typical file.
const TYPICAL_RUNS: usize = 2_000;
/// Size of the long skill: most real SKILL.md files are shorter.
const LARGE_BYTES: usize = 8 * 1024;
/// Files in the timed folder.
const FOLDER_FILES: usize = 50;
const FOLDER_RUNS: usize = 50;

/// The keyword scanner's words: the usual risky commands, paths and phrases.
const KEYWORDS: &[&str] = &[
    "rm -rf",
    "curl",
    "wget",
    "| sh",
    "| bash",
    "sudo",
    "chmod 777",
    "base64",
    "eval",
    "exec(",
    "nc ",
    "netcat",
    "/dev/tcp",
    "crontab",
    ".bashrc",
    ".zshrc",
    "authorized_keys",
    ".ssh",
    ".aws",
    ".env",
    "password",
    "secret",
    "token",
    "api_key",
    "private key",
    "ignore previous",
    "system prompt",
    "do not tell",
    "--force",
    "drop database",
    "mkfs",
    "dd if=",
    "/etc/",
    "ngrok",
    "AGENTS.md",
    "CLAUDE.md",
    "../",
    "\u{200b}",
];

fn keyword_scanner_flags(text: &str) -> bool {
    let lower = text.to_lowercase();
    KEYWORDS.iter().any(|k| lower.contains(&k.to_lowercase()))
}

struct Labelled {
    path: PathBuf,
    malicious: bool,
}

fn read_corpus(root: &Path) -> Option<Vec<Labelled>> {
    let labels = std::fs::read_to_string(root.join("labels.tsv")).ok()?;
    Some(
        labels
            .lines()
            .filter_map(|line| {
                let mut fields = line.split('\t');
                let path = fields.next()?;
                let label = fields.next()?;
                Some(Labelled {
                    path: root.join(path),
                    malicious: label == "malicious",
                })
            })
            .collect(),
    )
}

/// Detection and false positives at `high`+, for the check and for the keyword scanner.
fn accuracy(corpus: &[Labelled]) -> Value {
    let (mut caught, mut flagged, mut kw_caught, mut kw_flagged) = (0, 0, 0, 0);
    let malicious = corpus.iter().filter(|i| i.malicious).count();
    let benign = corpus.len() - malicious;
    for item in corpus {
        let high = check_path(&item.path).expect("corpus reads").max_risk >= Risk::High;
        let keyword = files_of(&item.path)
            .iter()
            .any(|file| keyword_scanner_flags(&std::fs::read_to_string(file).unwrap_or_default()));
        match item.malicious {
            true => {
                caught += high as usize;
                kw_caught += keyword as usize;
            }
            false => {
                flagged += high as usize;
                kw_flagged += keyword as usize;
            }
        }
    }
    let share = |n: usize, of: usize| (n as f64 / of as f64 * 1000.0).round() / 10.0;
    json!({
        "malicious": malicious,
        "benign": benign,
        "detection_pct": share(caught, malicious),
        "false_positive_pct": share(flagged, benign),
        "keyword_detection_pct": share(kw_caught, malicious),
        "keyword_false_positive_pct": share(kw_flagged, benign),
    })
}

/// The files of a corpus item: itself, or every file in its folder, in path order.
fn files_of(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        files.extend(files_of(&entry.unwrap().path()));
    }
    files.sort();
    files
}

/// How long each of `runs` calls of `work` took, sorted.
fn timed<T>(runs: usize, mut work: impl FnMut() -> T) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(work());
            started.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/safety");
    let corpus = read_corpus(&root.join("corpus")).expect("tests/safety/corpus/labels.tsv");

    let mut by_size: Vec<(u64, &Labelled)> = corpus
        .iter()
        .map(|i| (std::fs::metadata(&i.path).unwrap().len(), i))
        .collect();
    by_size.sort_by_key(|(size, _)| *size);
    let (typical_bytes, typical) = by_size[by_size.len() / 2];
    let text = std::fs::read_to_string(&typical.path).unwrap();
    check_text("SKILL.md", &text); // compiles the rules, as the first check of an engine does
    let times = timed(TYPICAL_RUNS, || {
        check_text("SKILL.md", std::hint::black_box(&text))
    });
    let keyword_times = timed(TYPICAL_RUNS, || {
        keyword_scanner_flags(std::hint::black_box(&text))
    });

    // A long skill: benign ones back to back up to LARGE_BYTES.
    let mut large = String::new();
    for item in corpus.iter().filter(|i| !i.malicious).cycle() {
        if large.len() >= LARGE_BYTES {
            break;
        }
        large += &std::fs::read_to_string(&item.path).unwrap();
    }
    let large_times = timed(TYPICAL_RUNS, || {
        check_text("SKILL.md", std::hint::black_box(&large))
    });

    // A folder of FOLDER_FILES files from the folder corpus, scripts among them.
    let folders = read_corpus(&root.join("folders")).expect("tests/safety/folders/labels.tsv");
    let folder = tempfile::tempdir().unwrap();
    let sources: Vec<PathBuf> = folders.iter().flat_map(|i| files_of(&i.path)).collect();
    let mut scripts = 0;
    for (index, source) in sources.iter().take(FOLDER_FILES).enumerate() {
        let name = source.file_name().unwrap().to_string_lossy();
        scripts += usize::from(!name.ends_with(".md"));
        std::fs::copy(source, folder.path().join(format!("{index:02}-{name}"))).unwrap();
    }
    check_path(folder.path()).unwrap();
    let folder_times = timed(FOLDER_RUNS, || check_path(folder.path()).unwrap());

    let mut results = json!({
        "typical_file_bytes": typical_bytes,
        "typical_p50_ms": percentile(&times, 0.5),
        "typical_p99_ms": percentile(&times, 0.99),
        "keyword_scanner_p50_ms": percentile(&keyword_times, 0.5),
        "large_file_bytes": large.len(),
        "large_p50_ms": percentile(&large_times, 0.5),
        "folder_files": FOLDER_FILES,
        "folder_scripts": scripts,
        "folder_p50_ms": percentile(&folder_times, 0.5),
        "folder_p99_ms": percentile(&folder_times, 0.99),
        "corpus": accuracy(&corpus),
    });
    for optional in [
        "holdout",
        "adversarial",
        "folders",
        "folders-former-holdout",
        "folders-holdout",
    ] {
        if let Some(corpus) = read_corpus(&root.join(optional)) {
            results[optional] = accuracy(&corpus);
        }
    }
    println!("{}", serde_json::to_string_pretty(&results).unwrap());
    common::merge_into_results("safety", results);
}
