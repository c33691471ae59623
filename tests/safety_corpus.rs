//! The labelled corpora: malicious skills must be caught at `high` or worse, and hardly any
//! benign one — many of them written to look risky — may be. The figures are asserted on each
//! (≥ 95 % detection, ≤ 5 % false positives, issues 12 and 26) and printed per category; the
//! README's table quotes them.
//!
//! - `corpus` (SKILL.md texts, the first pass's tuning set) and `holdout` (written later without
//!   sight of the rules);
//! - `adversarial` (written to get past a rule-based check);
//! - `folders` (skill folders whose harm is mostly in their scripts: the code pass's training
//!   set), `folders-former-holdout` (written blind and held out until its misses had been
//!   measured many times; training data since) and `folders-holdout` (a fresh set written blind,
//!   never read while the rules were written).

use std::collections::BTreeMap;
use std::path::Path;

use lull::safety::{check_path, Risk};

/// Detection at `high`+ that the check must reach on malicious skills.
const MIN_DETECTION: f64 = 0.95;
/// Share of benign skills the check may flag at `high`+.
const MAX_FALSE_POSITIVES: f64 = 0.05;

struct Labelled {
    path: String,
    malicious: bool,
    category: String,
}

fn corpus_root(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/safety")
        .join(name)
}

fn corpus(name: &str) -> Vec<Labelled> {
    let root = corpus_root(name);
    let labels = std::fs::read_to_string(root.join("labels.tsv")).expect("labels.tsv");
    labels
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert!(fields.len() >= 3, "bad label line: {line}");
            assert!(
                matches!(fields[1], "malicious" | "benign"),
                "bad label: {line}"
            );
            Labelled {
                path: root.join(fields[0]).to_string_lossy().into_owned(),
                malicious: fields[1] == "malicious",
                category: fields[2].to_string(),
            }
        })
        .collect()
}

#[test]
fn every_corpus_file_is_labelled_and_named_after_its_slug() {
    for name in [
        "corpus",
        "holdout",
        "adversarial",
        "folders",
        "folders-former-holdout",
        "folders-holdout",
    ] {
        labelled_and_named(name);
    }
}

fn labelled_and_named(name: &str) {
    let corpus = corpus(name);
    let root = corpus_root(name);
    let mut on_disk = Vec::new();
    for folder in ["malicious", "benign"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            on_disk.push(entry.unwrap().path().to_string_lossy().into_owned());
        }
    }
    // An item is a lone SKILL.md or a skill folder with one.
    on_disk.sort();
    let mut labelled: Vec<String> = corpus.iter().map(|i| i.path.clone()).collect();
    labelled.sort();
    assert_eq!(on_disk, labelled, "labels.tsv and the folders disagree");
    for item in &corpus {
        let path = Path::new(&item.path);
        let slug = path.file_stem().unwrap().to_str().unwrap();
        let skill_md = if path.is_dir() {
            path.join("SKILL.md")
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&skill_md).unwrap();
        assert!(
            text.contains(&format!("\nname: {slug}\n")),
            "{}: front matter name is not {slug}",
            item.path
        );
    }
}

#[test]
fn the_tuning_corpus_is_caught_at_high_with_few_false_positives() {
    measure("corpus", 60, MIN_DETECTION);
}

#[test]
fn the_held_out_corpus_is_caught_at_high_with_few_false_positives() {
    measure("holdout", 36, MIN_DETECTION);
}

/// The adversarial set (written to evade a rule-based check): 10/30 on its first run, 22/30
/// after issue 12, 30/30 with the code pass and the generic rules of issue 26.
#[test]
fn the_adversarial_corpus_is_caught_at_high_with_few_false_positives() {
    measure("adversarial", 15, MIN_DETECTION);
}

#[test]
fn the_folder_training_set_is_caught_at_high_with_few_false_positives() {
    measure("folders", 40, MIN_DETECTION);
}

/// The first held-out folder set: 76.6 % caught and 6.2 % false alarms on its first run, 78.1 %
/// and 6.2 % after the code pass. Having been measured that often, it became training data.
#[test]
fn the_former_held_out_folders_are_caught_at_high_with_few_false_positives() {
    measure("folders-former-holdout", 48, MIN_DETECTION);
}

/// The held-out folders, written blind: never read while the rules were written, so a failure
/// names no file (read one, and it must move to the training sets).
///
/// FIXME(issue 26): both targets are missed: 68.5 % caught and 5.8 % false alarms on the first
/// run, 71.2 % and 7.7 % after the third training batch. Pinned so a change that loses ground
/// fails; to improve it, write more training skills, not rules from these files.
#[test]
fn the_held_out_folders_keep_todays_detection_and_false_positives() {
    measure_with("folders-holdout", 48, 0.71, 0.077, Names::Hidden);
}

/// Whether a measurement names the files it missed or flagged.
#[derive(PartialEq)]
enum Names {
    Shown,
    /// Categories and counts only: the set is held out.
    Hidden,
}

fn measure(name: &str, at_least: usize, min_detection: f64) {
    measure_with(
        name,
        at_least,
        min_detection,
        MAX_FALSE_POSITIVES,
        Names::Shown,
    );
}

fn measure_with(
    name: &str,
    at_least: usize,
    min_detection: f64,
    max_false_positives: f64,
    names: Names,
) {
    let corpus = corpus(name);
    let mut per_category: BTreeMap<(bool, String), (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut false_alarms = Vec::new();
    for item in &corpus {
        let report = check_path(Path::new(&item.path)).expect("corpus file reads");
        let flagged = report.max_risk >= Risk::High;
        let entry = per_category
            .entry((item.malicious, item.category.clone()))
            .or_default();
        entry.1 += 1;
        if flagged {
            entry.0 += 1;
        }
        if item.malicious && !flagged {
            misses.push(format!("{} ({:?})", item.path, report.max_risk));
        }
        if !item.malicious && flagged {
            let worst = &report.findings[0];
            false_alarms.push(format!(
                "{}: {} line {}: {}",
                item.path, worst.rule, worst.line, worst.excerpt
            ));
        }
    }
    let malicious = corpus.iter().filter(|i| i.malicious).count();
    let benign = corpus.len() - malicious;
    assert!(
        malicious >= at_least && benign >= at_least,
        "{name}: {malicious} malicious, {benign} benign"
    );
    println!("{name}:");
    let detection = (malicious - misses.len()) as f64 / malicious as f64;
    let false_positives = false_alarms.len() as f64 / benign as f64;
    println!("category        malicious caught   benign flagged");
    let categories: std::collections::BTreeSet<&String> =
        per_category.keys().map(|(_, c)| c).collect();
    for category in categories {
        let caught = per_category.get(&(true, category.clone()));
        let flagged = per_category.get(&(false, category.clone()));
        let show = |pair: Option<&(usize, usize)>| {
            pair.map_or("–".to_string(), |(hit, all)| format!("{hit}/{all}"))
        };
        println!(
            "{category:<15} {:>16}   {:>14}",
            show(caught),
            show(flagged)
        );
    }
    println!(
        "detection at high+: {}/{malicious} = {:.1} %; false positives at high+: {}/{benign} = {:.1} %",
        malicious - misses.len(),
        detection * 100.0,
        false_alarms.len(),
        false_positives * 100.0
    );
    if names == Names::Hidden {
        misses = vec![format!("{} held-out skills (names hidden)", misses.len())];
        false_alarms = vec![format!(
            "{} held-out skills (names hidden)",
            false_alarms.len()
        )];
    }
    assert!(
        detection >= min_detection,
        "detection {:.1} % < {:.0} %; missed:\n{}",
        detection * 100.0,
        min_detection * 100.0,
        misses.join("\n")
    );
    assert!(
        false_positives <= max_false_positives,
        "false positives {:.1} % > {:.0} %:\n{}",
        false_positives * 100.0,
        max_false_positives * 100.0,
        false_alarms.join("\n")
    );
}
