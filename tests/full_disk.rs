//! A full disk under a running engine: every write that cannot land is refused with a clear
//! error (507 `storage_full`, naming the folder and what to do), nothing acknowledged is lost,
//! nothing half-written is left behind, and once space is freed the same engine carries on.
//!
//! The disk is a small tmpfs mounted for the test (it needs root, or `CAP_SYS_ADMIN`; elsewhere
//! the test says so and stops), holding the data folder of a `lull serve` process.

#[path = "common/daemon.rs"]
mod daemon;
#[path = "common/offline.rs"]
mod offline;
#[path = "common/snapshot.rs"]
mod snapshot;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use daemon::{integrity_check, send, serve_command, Daemon};
use lull::drafts::records::DraftKind;
use lull::store::Store;
use snapshot::tree;

/// The small disk's size: room for the database and a few transcripts.
const DISK_SIZE: &str = "8m";
/// The transcripts sent once the disk is full: large enough that the database must grow.
const TRANSCRIPT_BYTES: usize = 256 * 1024;

/// A tmpfs of [`DISK_SIZE`] mounted at a folder; unmounted when dropped.
struct SmallDisk {
    root: PathBuf,
}

impl SmallDisk {
    fn mount(root: &Path) -> Option<SmallDisk> {
        std::fs::create_dir_all(root).unwrap();
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={DISK_SIZE},mode=0700"),
                "tmpfs",
            ])
            .arg(root)
            .stderr(Stdio::null())
            .status();
        if !status.is_ok_and(|status| status.success()) {
            eprintln!(
                "skipped: a small tmpfs cannot be mounted here (the test needs root or \
                 CAP_SYS_ADMIN to fill a disk of its own)"
            );
            return None;
        }
        Some(SmallDisk {
            root: root.to_path_buf(),
        })
    }

    /// Writes a file until the disk refuses a single byte more; returns it.
    fn fill(&self) -> PathBuf {
        let filler = self.root.join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        for chunk in [64 * 1024, 4 * 1024, 1] {
            let bytes = vec![0x5a_u8; chunk];
            while file.write_all(&bytes).and_then(|()| file.flush()).is_ok() {}
        }
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.root).status();
    }
}

fn skill_md(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Deploy the {name} service.\n---\n# {name}\n\nRun `make deploy`.\n"
    )
}

struct Engine {
    daemon: Daemon,
}

impl Engine {
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let body = body.map(|body| body.to_string());
        let url = format!("{}{path}", self.daemon.base_url);
        let (status, text) = send(method, &url, Some(&self.daemon.token), body.as_deref())
            .unwrap_or_else(|| panic!("{method} {path}: no answer"));
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    fn review(&self, session: &str, bytes: usize) -> (u16, Value) {
        let messages = json!([
            {"role": "user", "content": "x".repeat(bytes)},
            {"role": "assistant", "content": "done"},
        ]);
        let body = json!({"session_key": session, "messages": messages});
        self.call("POST", "/v1/reviews", Some(body))
    }
}

/// The answer is a 507 whose error names the folder and says to free space there.
fn assert_storage_full(answer: &(u16, Value), folder: &Path) {
    let (status, body) = answer;
    assert_eq!(*status, 507, "{body}");
    assert_eq!(body["error"]["code"], "storage_full", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(&folder.display().to_string()), "{message}");
    assert!(message.contains("free"), "{message}");
}

#[test]
fn a_full_disk_refuses_writes_clearly_loses_nothing_and_the_engine_carries_on_when_freed() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = SmallDisk::mount(&dir.path().join("disk")) else {
        return;
    };
    let data = disk.root.join("data");
    let skills = data.join("skills");
    let mut command = serve_command(&data, &dir.path().join("none.json"));
    command.env("RUST_LOG", "warn");
    let log = std::fs::File::create(dir.path().join("engine.log")).unwrap();
    let engine = Engine {
        daemon: Daemon::spawn_with_stderr(&mut command, &data, Duration::from_secs(20), log.into()),
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store = Store::open(&data.join("lull.db")).unwrap();
    let draft = runtime.block_on(offline::seed_draft(
        &store,
        &skills,
        "deploy",
        DraftKind::Create,
        &skill_md("deploy"),
    ));
    drop(store);
    let (status, body) = engine.review("before", 1_000);
    assert_eq!(status, 202, "{body}");
    let mut acknowledged = vec![body["review_id"].as_str().unwrap().to_string()];

    let filler = disk.fill();
    // The database may still hold free pages and WAL room: transcripts land until it must grow.
    let refused = (0..64).find_map(|n| {
        let answer = engine.review(&format!("full-{n}"), TRANSCRIPT_BYTES);
        if answer.0 == 202 {
            acknowledged.push(answer.1["review_id"].as_str().unwrap().to_string());
            None
        } else {
            Some(answer)
        }
    });
    let refused = refused.expect("a full disk refuses some write");
    assert_storage_full(&refused, &data);

    let approval = engine.call(
        "POST",
        &format!("/v1/drafts/{draft}/approve"),
        Some(json!({})),
    );
    assert_storage_full(&approval, &skills);
    let (_, pending) = engine.call("GET", &format!("/v1/drafts/{draft}"), None);
    assert_eq!(pending["status"], "review_pending", "{pending}");
    let left = tree(&skills);
    assert!(
        left.iter().all(|path| !path.contains("SKILL.md")),
        "a refused approval left {left:?}"
    );
    let (status, _) = engine.call("GET", "/v1/status", None);
    assert_eq!(status, 200, "reads still answer on a full disk");

    std::fs::remove_file(filler).unwrap();
    let (status, approved) = engine.call(
        "POST",
        &format!("/v1/drafts/{draft}/approve"),
        Some(json!({})),
    );
    assert_eq!(status, 200, "{approved}");
    assert_eq!(
        std::fs::read_to_string(skills.join("deploy/SKILL.md")).unwrap(),
        skill_md("deploy")
    );
    assert_eq!(tree(&skills), ["deploy", "deploy/SKILL.md"]);
    let (status, body) = engine.review("after", 1_000);
    assert_eq!(status, 202, "{body}");
    acknowledged.push(body["review_id"].as_str().unwrap().to_string());

    let (_, listed) = engine.call("GET", "/v1/reviews", None);
    let listed: Vec<&str> = listed["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|review| review["id"].as_str())
        .collect();
    for id in &acknowledged {
        assert!(
            listed.contains(&id.as_str()),
            "acknowledged review {id} is lost"
        );
    }
    drop(engine);
    assert_eq!(integrity_check(&data), "ok");
    println!(
        "full disk: {} reviews acknowledged, the refusal came after {} large transcripts",
        acknowledged.len(),
        acknowledged.len() - 2
    );
}
