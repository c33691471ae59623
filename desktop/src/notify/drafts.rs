//! "A draft is ready for review": one notification per burst of drafts, not one per draft.
//!
//! Invariants: a draft is announced when it *becomes* ready — its [`EngineEvent::DraftChanged`]
//! says `review_pending` or `blocked` and it was not waiting already — so a person's own edit or
//! dismissal (which the engine announces with the same status) never notifies, nor does an edit
//! that turns a blocked draft into a pending one. Drafts that become ready close together form
//! one burst and one notification: the burst closes [`BURST_QUIET`] after its latest draft, and
//! at the latest [`BURST_LONGEST`] after its first, so a steady trickle cannot hold the news back.
//! A draft decided before its burst closes leaves the burst. Everything here is pure over
//! [`Instant`]s; the events forwarder sleeps until [`ReadyDrafts::deadline`].

use std::collections::HashSet;
use std::time::Duration;

use lull::drafts::records::DraftStatus;
use lull::events::EngineEvent;
use tokio::time::Instant;

use super::Note;
use crate::tray::plural;

/// How long after a draft became ready the burst waits for more before it notifies.
pub const BURST_QUIET: Duration = Duration::from_secs(2);
/// The longest a burst stays open, however many drafts keep arriving.
pub const BURST_LONGEST: Duration = Duration::from_secs(10);
/// Skill names a burst's notification lists before it says "and N more".
const NAMES_SHOWN: usize = 3;

/// Which drafts wait for a person, and the burst of newly ready ones not yet announced.
#[derive(Debug, Default)]
pub struct ReadyDrafts {
    /// Ids of the drafts known to wait (`review_pending` or `blocked`).
    waiting: HashSet<String>,
    /// The burst not yet announced, oldest first.
    burst: Vec<ReadyDraft>,
    /// When the burst's first draft arrived.
    opened_at: Option<Instant>,
    /// When its latest draft arrived.
    latest_at: Option<Instant>,
}

/// One draft of a burst.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ReadyDraft {
    draft_id: String,
    skill: String,
    blocked: bool,
}

impl ReadyDrafts {
    /// Starts from the drafts that already wait (read from the engine), so that a change to one
    /// of them is not taken for news.
    pub fn new(waiting: impl IntoIterator<Item = String>) -> ReadyDrafts {
        ReadyDrafts {
            waiting: waiting.into_iter().collect(),
            ..ReadyDrafts::default()
        }
    }

    /// Replaces what is known to wait (after missing events), keeping the open burst.
    pub fn reseed(&mut self, waiting: impl IntoIterator<Item = String>) {
        self.waiting = waiting.into_iter().collect();
    }

    /// Takes in one engine event that arrived at `now`; only `DraftChanged` matters.
    pub fn record(&mut self, event: &EngineEvent, now: Instant) {
        let EngineEvent::DraftChanged {
            draft_id,
            skill,
            status,
        } = event
        else {
            return;
        };
        let blocked = match status {
            DraftStatus::ReviewPending => false,
            DraftStatus::Blocked => true,
            DraftStatus::Evaluating | DraftStatus::Approved | DraftStatus::Rejected => {
                self.waiting.remove(draft_id);
                self.burst.retain(|ready| &ready.draft_id != draft_id);
                if self.burst.is_empty() {
                    self.close();
                }
                return;
            }
        };
        if let Some(ready) = self.burst.iter_mut().find(|r| &r.draft_id == draft_id) {
            // Still in the burst, perhaps with another status (an edit blocked it).
            ready.blocked = blocked;
            return;
        }
        if !self.waiting.insert(draft_id.clone()) {
            return;
        }
        self.burst.push(ReadyDraft {
            draft_id: draft_id.clone(),
            skill: skill.clone(),
            blocked,
        });
        self.opened_at.get_or_insert(now);
        self.latest_at = Some(now);
    }

    /// When the open burst is due to be announced; `None` while there is none.
    pub fn deadline(&self) -> Option<Instant> {
        let (opened_at, latest_at) = (self.opened_at?, self.latest_at?);
        Some((latest_at + BURST_QUIET).min(opened_at + BURST_LONGEST))
    }

    /// The burst's one notification once its deadline has passed at `now`; the burst closes.
    pub fn take_due(&mut self, now: Instant) -> Option<Note> {
        if self.deadline().is_none_or(|deadline| now < deadline) {
            return None;
        }
        let note = note_for(&self.burst);
        self.close();
        note
    }

    fn close(&mut self) {
        self.burst.clear();
        self.opened_at = None;
        self.latest_at = None;
    }
}

/// The notification for a burst; `None` for an empty one.
fn note_for(burst: &[ReadyDraft]) -> Option<Note> {
    let [first, rest @ ..] = burst else {
        return None;
    };
    if rest.is_empty() {
        let body = if first.blocked {
            format!(
                "Lull drafted the skill {}, and a critical safety finding stopped it. See why \
                 under Drafts in the Lull window.",
                first.skill
            )
        } else {
            format!(
                "Lull drafted the skill {}. Nothing goes live until you approve it under Drafts \
                 in the Lull window.",
                first.skill
            )
        };
        return Some(Note {
            title: "A draft is ready for review".into(),
            body,
        });
    }
    let count = burst.len() as u64;
    let mut body = format!(
        "Lull drafted {}. Nothing goes live until you approve a draft under Drafts in the Lull \
         window.",
        skill_names(&burst.iter().map(|r| r.skill.as_str()).collect::<Vec<_>>())
    );
    let blocked = burst.iter().filter(|ready| ready.blocked).count() as u64;
    if blocked > 0 {
        body.push_str(&format!(
            " A critical safety finding stopped {blocked} of them."
        ));
    }
    Some(Note {
        title: format!("{} are ready for review", plural(count, "draft")),
        body,
    })
}

/// `"a"`, `"a and b"`, `"a, b and c"`, `"a, b, c and 2 more"`: the skills of a burst.
fn skill_names(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [only] => (*only).to_owned(),
        _ if names.len() > NAMES_SHOWN => format!(
            "{} and {} more",
            names[..NAMES_SHOWN].join(", "),
            names.len() - NAMES_SHOWN
        ),
        [others @ .., last] => format!("{} and {last}", others.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(draft_id: &str, status: DraftStatus) -> EngineEvent {
        EngineEvent::DraftChanged {
            draft_id: draft_id.into(),
            skill: format!("skill-{draft_id}"),
            status,
        }
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn one_ready_draft_is_one_note_after_the_quiet_window() {
        let start = Instant::now();
        let mut ready = ReadyDrafts::default();
        ready.record(&changed("d1", DraftStatus::Evaluating), start);
        assert_eq!(ready.deadline(), None, "evaluating is not ready");

        ready.record(&changed("d1", DraftStatus::ReviewPending), start);
        assert_eq!(ready.deadline(), Some(start + BURST_QUIET));
        assert_eq!(ready.take_due(start + secs(1.9)), None, "not yet due");

        let note = ready.take_due(start + BURST_QUIET).expect("due");
        assert_eq!(note.title, "A draft is ready for review");
        assert_eq!(
            note.body,
            "Lull drafted the skill skill-d1. Nothing goes live until you approve it under \
             Drafts in the Lull window."
        );
        assert_eq!(ready.deadline(), None, "the burst closed");
        assert_eq!(
            ready.take_due(start + secs(60.0)),
            None,
            "and says nothing twice"
        );
    }

    #[test]
    fn a_burst_of_drafts_is_one_note() {
        let start = Instant::now();
        let mut ready = ReadyDrafts::default();
        ready.record(&changed("d1", DraftStatus::ReviewPending), start);
        ready.record(&changed("d2", DraftStatus::Blocked), start + secs(1.0));
        ready.record(
            &changed("d3", DraftStatus::ReviewPending),
            start + secs(2.5),
        );
        assert_eq!(ready.deadline(), Some(start + secs(4.5)), "quiet after d3");
        assert_eq!(ready.take_due(start + secs(4.0)), None);

        let note = ready.take_due(start + secs(4.5)).expect("due");
        assert_eq!(note.title, "3 drafts are ready for review");
        assert_eq!(
            note.body,
            "Lull drafted skill-d1, skill-d2 and skill-d3. Nothing goes live until you approve \
             a draft under Drafts in the Lull window. A critical safety finding stopped 1 of them."
        );

        // A later draft is a burst of its own.
        ready.record(&changed("d4", DraftStatus::Blocked), start + secs(30.0));
        let note = ready.take_due(start + secs(32.0)).expect("due");
        assert_eq!(note.title, "A draft is ready for review");
        assert!(note
            .body
            .contains("skill-d4, and a critical safety finding stopped it"));
    }

    #[test]
    fn a_steady_trickle_is_announced_after_the_longest_burst() {
        let start = Instant::now();
        let mut ready = ReadyDrafts::default();
        for n in 0..8 {
            let id = format!("d{n}");
            ready.record(
                &changed(&id, DraftStatus::ReviewPending),
                start + secs(1.5 * n as f64),
            );
        }
        assert_eq!(ready.deadline(), Some(start + BURST_LONGEST));
        let note = ready.take_due(start + BURST_LONGEST).expect("due");
        assert_eq!(note.title, "8 drafts are ready for review");
        assert!(note
            .body
            .starts_with("Lull drafted skill-d0, skill-d1, skill-d2 and 5 more. "));
    }

    #[test]
    fn the_persons_own_changes_to_a_waiting_draft_say_nothing() {
        let start = Instant::now();
        // d1 already waited when the app started; d2 became ready and was announced.
        let mut ready = ReadyDrafts::new(["d1".to_string()]);
        ready.record(&changed("d2", DraftStatus::Blocked), start);
        assert!(ready.take_due(start + BURST_QUIET).is_some());

        // A dismissal (same status), an edit clearing a critical finding (blocked → pending).
        ready.record(
            &changed("d1", DraftStatus::ReviewPending),
            start + secs(5.0),
        );
        ready.record(
            &changed("d2", DraftStatus::ReviewPending),
            start + secs(5.0),
        );
        assert_eq!(ready.deadline(), None);

        // An edit sent d2 back to evaluation; when that ends, it is ready again: news.
        ready.record(&changed("d2", DraftStatus::Evaluating), start + secs(6.0));
        ready.record(
            &changed("d2", DraftStatus::ReviewPending),
            start + secs(9.0),
        );
        assert!(ready.take_due(start + secs(11.0)).is_some());
    }

    #[test]
    fn a_draft_decided_before_its_burst_closes_leaves_it() {
        let start = Instant::now();
        let mut ready = ReadyDrafts::default();
        ready.record(&changed("d1", DraftStatus::ReviewPending), start);
        ready.record(&changed("d2", DraftStatus::ReviewPending), start);
        ready.record(&changed("d1", DraftStatus::Rejected), start + secs(1.0));
        let note = ready
            .take_due(start + BURST_QUIET)
            .expect("d2 is still news");
        assert_eq!(note.title, "A draft is ready for review");
        assert!(note.body.contains("skill-d2"));

        ready.record(
            &changed("d3", DraftStatus::ReviewPending),
            start + secs(5.0),
        );
        ready.record(&changed("d3", DraftStatus::Approved), start + secs(6.0));
        assert_eq!(ready.deadline(), None, "an emptied burst closes");
        assert_eq!(ready.take_due(start + secs(60.0)), None);
    }

    #[test]
    fn after_missed_events_the_engine_says_what_waits() {
        let start = Instant::now();
        let mut ready = ReadyDrafts::default();
        ready.reseed(["d1".to_string()]);
        ready.record(&changed("d1", DraftStatus::ReviewPending), start);
        assert_eq!(ready.deadline(), None);
    }

    #[test]
    fn skill_names_read_as_a_list() {
        let check = |names: &[&str], expected: &str| assert_eq!(skill_names(names), expected);
        check(&[], "");
        check(&["a"], "a");
        check(&["a", "b"], "a and b");
        check(&["a", "b", "c"], "a, b and c");
        check(&["a", "b", "c", "d", "e"], "a, b, c and 2 more");
    }

    #[test]
    fn other_events_are_ignored() {
        let mut ready = ReadyDrafts::default();
        ready.record(
            &EngineEvent::SkillWritten {
                skill: "a".into(),
                version: 1,
            },
            Instant::now(),
        );
        assert_eq!(ready.deadline(), None);
    }
}
