//! Skills on disk (DESIGN §2.2, issue 5): scanning `*/SKILL.md`, skipping malformed skills
//! with a reason, refusing symlinks that lead out of the directory, and the live index that
//! follows additions, edits and removals within two seconds.

use std::path::Path;
use std::time::{Duration, Instant};

use lull::skills::{scan_skills_dir, SkillSet, SkillsIndex};

/// What "shows up within 2 s" allows.
const LIVE_DEADLINE: Duration = Duration::from_secs(2);

fn write_skill(dir: &Path, folder: &str, front_matter: &str) {
    std::fs::create_dir_all(dir.join(folder)).unwrap();
    std::fs::write(
        dir.join(folder).join("SKILL.md"),
        format!("---\n{front_matter}\n---\n# {folder}\n"),
    )
    .unwrap();
}

fn valid(dir: &Path, name: &str, description: &str) {
    write_skill(
        dir,
        name,
        &format!("name: {name}\ndescription: {description}"),
    );
}

fn reason_for<'a>(set: &'a SkillSet, folder: &str) -> &'a str {
    &set.skipped
        .iter()
        .find(|skipped| skipped.folder == folder)
        .unwrap_or_else(|| panic!("{folder} was not skipped: {:?}", set.skipped))
        .reason
}

/// Polls `index` until `check` holds, for at most [`LIVE_DEADLINE`]; returns how long it took.
fn wait_for(index: &SkillsIndex, what: &str, check: impl Fn(&SkillSet) -> bool) -> Duration {
    let start = Instant::now();
    loop {
        if check(&index.current()) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < LIVE_DEADLINE,
            "{what} did not show up within {LIVE_DEADLINE:?}: {:?}",
            index.current()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn scan_reads_valid_skills_and_keeps_other_keys() {
    let dir = tempfile::tempdir().unwrap();
    valid(
        dir.path(),
        "git-bisect",
        "Find the commit that broke a test.",
    );
    write_skill(
        dir.path(),
        "deploy",
        "name: deploy\ndescription: Ship a service.\nlicense: MIT\nallowed-tools: [bash]",
    );
    std::fs::create_dir(dir.path().join("notes")).unwrap(); // no SKILL.md: not a skill
    std::fs::write(dir.path().join("README.md"), "not a folder").unwrap();
    valid(
        &dir.path().join(".versions"),
        "old",
        "kept for rollback, never scanned",
    );

    let set = scan_skills_dir(dir.path()).unwrap();
    assert_eq!(
        set.skills.keys().collect::<Vec<_>>(),
        ["deploy", "git-bisect"]
    );
    let deploy = &set.skills["deploy"];
    assert_eq!(deploy.extra["license"], "MIT");
    assert_eq!(deploy.extra["allowed-tools"][0], "bash");
    assert_eq!(deploy.body, "# deploy\n");
    assert_eq!(deploy.path, dir.path().join("deploy").join("SKILL.md"));
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
}

#[test]
fn malformed_skills_are_skipped_with_a_reason_and_the_rest_still_load() {
    let dir = tempfile::tempdir().unwrap();
    valid(dir.path(), "good", "A fine skill.");
    write_skill(dir.path(), "mismatch", "name: other\ndescription: x");
    write_skill(dir.path(), "Upper", "name: Upper\ndescription: x");
    write_skill(dir.path(), "no-description", "name: no-description");
    write_skill(
        dir.path(),
        "long-description",
        &format!("name: long-description\ndescription: {}", "x".repeat(1025)),
    );
    write_skill(dir.path(), "bad-yaml", "name: [bad-yaml\ndescription: x");
    std::fs::create_dir(dir.path().join("no-front-matter")).unwrap();
    std::fs::write(
        dir.path().join("no-front-matter/SKILL.md"),
        "# just markdown\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("binary")).unwrap();
    std::fs::write(dir.path().join("binary/SKILL.md"), [0xff, 0xfe, 0x00]).unwrap();
    std::fs::create_dir(dir.path().join("huge")).unwrap();
    std::fs::write(
        dir.path().join("huge/SKILL.md"),
        vec![b'a'; 1024 * 1024 + 1],
    )
    .unwrap();

    let set = scan_skills_dir(dir.path()).unwrap();
    assert_eq!(set.skills.keys().collect::<Vec<_>>(), ["good"]);
    assert!(reason_for(&set, "mismatch").contains("does not match its folder"));
    assert!(reason_for(&set, "Upper").contains("lowercase"));
    assert!(reason_for(&set, "no-description").contains("`description`"));
    assert!(reason_for(&set, "long-description").contains("1025 characters"));
    assert!(reason_for(&set, "bad-yaml").contains("not valid YAML"));
    assert!(reason_for(&set, "no-front-matter").contains("no YAML front matter"));
    assert!(reason_for(&set, "binary").contains("not UTF-8"));
    assert!(reason_for(&set, "huge").contains("more than"));
}

#[cfg(unix)]
#[test]
fn symlinks_leading_outside_the_directory_are_refused() {
    use std::os::unix::fs::symlink;

    let outside = tempfile::tempdir().unwrap();
    valid(
        outside.path(),
        "escaped",
        "Lives outside the skills directory.",
    );
    std::fs::write(
        outside.path().join("secret.md"),
        "---\nname: file-link\ndescription: x\n---\n",
    )
    .unwrap();

    let dir = tempfile::tempdir().unwrap();
    // A skill folder that is a symlink to a folder outside.
    symlink(outside.path().join("escaped"), dir.path().join("escaped")).unwrap();
    // A real folder whose SKILL.md is a symlink to a file outside.
    std::fs::create_dir(dir.path().join("file-link")).unwrap();
    symlink(
        outside.path().join("secret.md"),
        dir.path().join("file-link/SKILL.md"),
    )
    .unwrap();
    // A symlink to nothing.
    symlink(dir.path().join("nowhere"), dir.path().join("dangling")).unwrap();
    // A SKILL.md linked to a file inside the directory is fine.
    valid(
        &dir.path().join(".shared"),
        "inside",
        "Shared inside the directory.",
    );
    std::fs::create_dir(dir.path().join("inside")).unwrap();
    symlink(
        dir.path().join(".shared/inside/SKILL.md"),
        dir.path().join("inside/SKILL.md"),
    )
    .unwrap();

    let set = scan_skills_dir(dir.path()).unwrap();
    assert_eq!(set.skills.keys().collect::<Vec<_>>(), ["inside"]);
    assert!(reason_for(&set, "escaped").contains("outside the skills directory"));
    assert!(reason_for(&set, "file-link").contains("outside the skills directory"));
    assert!(reason_for(&set, "dangling").contains("symlink to nothing"));

    // The skills directory itself may be a symlink: the check compares resolved paths.
    let link_parent = tempfile::tempdir().unwrap();
    let linked_dir = link_parent.path().join("skills");
    symlink(dir.path(), &linked_dir).unwrap();
    let through_link = scan_skills_dir(&linked_dir).unwrap();
    assert_eq!(through_link.skills.keys().collect::<Vec<_>>(), ["inside"]);
}

#[test]
fn the_index_creates_a_missing_directory_and_follows_changes_within_two_seconds() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("not-yet").join("skills");
    let index = SkillsIndex::start(&dir).unwrap();
    assert!(dir.is_dir(), "the index creates the skills directory");
    assert!(index.current().skills.is_empty());

    valid(&dir, "deploy", "Ship a service to staging.");
    wait_for(&index, "an added skill", |set| {
        set.skills.contains_key("deploy")
    });

    valid(&dir, "deploy", "Ship a service to production.");
    wait_for(&index, "an edited skill", |set| {
        set.skills
            .get("deploy")
            .is_some_and(|skill| skill.description.contains("production"))
    });

    write_skill(&dir, "broken", "name: nope\ndescription: x");
    wait_for(&index, "a malformed skill's reason", |set| {
        set.skipped.iter().any(|skipped| skipped.folder == "broken")
    });

    std::fs::remove_dir_all(dir.join("deploy")).unwrap();
    wait_for(&index, "a removed skill", |set| {
        !set.skills.contains_key("deploy")
    });

    // A subscriber sees new sets without polling.
    let mut changes = index.subscribe();
    valid(&dir, "haiku", "Write a short poem.");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(LIVE_DEADLINE, async {
            loop {
                changes.changed().await.unwrap();
                if changes.borrow_and_update().skills.contains_key("haiku") {
                    break;
                }
            }
        })
        .await
        .expect("the subscriber saw the new skill");
    });
}

#[test]
fn the_index_survives_its_directory_being_deleted_and_recreated() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("skills");
    let index = SkillsIndex::start(&dir).unwrap();
    valid(&dir, "deploy", "Ship a service.");
    wait_for(&index, "an added skill", |set| {
        set.skills.contains_key("deploy")
    });

    std::fs::remove_dir_all(&dir).unwrap();
    wait_for(&index, "the emptied set", |set| set.skills.is_empty());

    valid(&dir, "haiku", "Write a short poem.");
    wait_for(&index, "a skill in the recreated directory", |set| {
        set.skills.contains_key("haiku")
    });
    valid(&dir, "deploy", "Ship a service again.");
    wait_for(&index, "a later skill in the recreated directory", |set| {
        set.skills.contains_key("deploy")
    });
}

#[test]
fn rescan_sees_a_change_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let index = SkillsIndex::start(dir.path()).unwrap();
    valid(dir.path(), "deploy", "Ship a service.");
    assert!(index.rescan().skills.contains_key("deploy"));
}
